package datasources

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
)

// worldResults runs every Kubernetes query of a symptom-only alert on
// namespace shop against the storefront with fault applied.
func worldResults(t *testing.T, fault func(*clusterlab.World), forbid ...string) map[string]Result {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	w := clusterlab.NewWorld(now)
	if fault != nil {
		fault(w)
	}
	ks := clusterlab.StartKube(t, "tok", w.Objects())
	for _, r := range forbid {
		ks.API.Forbid(r)
	}
	c := testConnector()
	cfg := k8sSource(t, c, ks, "tok")
	sc := alertScope(now)
	sc.Service = ""
	res := runPlan(t, c, cfg, sc)
	if ks.API.Writes.Load() != 0 {
		t.Fatal("the client sent something other than GET")
	}
	return res
}

func readingWith(rs []analyzer.Reading, key, value string) *analyzer.Reading {
	for i := range rs {
		if rs[i].Labels[key] == value {
			return &rs[i]
		}
	}
	return nil
}

// TestKubernetesReadsTheNamespace: a symptom-only alert names no service,
// and every object of its namespace is read — nothing is skipped for want
// of a service.
func TestKubernetesReadsTheNamespace(t *testing.T) {
	res := worldResults(t, nil)
	if res["events"].Note != "no warning events in namespace shop" {
		t.Errorf("a healthy namespace's events: %+v", res["events"])
	}
	for _, e := range []string{"pods", "rollouts", "workloads", "services", "nodes", "quotas", "volumes"} {
		if len(res[e].Readings) == 0 {
			t.Errorf("%s: no readings (%s)", e, res[e].Note)
		}
	}
	if r := readingWith(res["pods"].Readings, "pod", "postgres-0"); r == nil || r.Labels["workload"] != "statefulset/postgres" {
		t.Fatalf("a StatefulSet's pod: %+v", r)
	}
	if r := readingWith(res["volumes"].Readings, "pvc", "data-postgres-0"); r == nil || r.Value != 1 || r.Labels["issue"] != "" {
		t.Fatalf("a bound claim: %+v", r)
	}
	for _, r := range res["services"].Readings {
		if r.Labels["issue"] != "" {
			t.Errorf("a healthy Service reported in trouble: %s", r.Line)
		}
	}
	for _, r := range res["nodes"].Readings {
		if r.Signal != analyzer.SignalNodeStatus || r.Value != 1 {
			t.Errorf("a healthy cluster's nodes: %s", r.Line)
		}
	}
}

// TestKubernetesServicesAgainstTheirPods: a selector no pod matches, and a
// targetPort no selected container exposes, are read from the Service and
// the pods themselves.
func TestKubernetesServicesAgainstTheirPods(t *testing.T) {
	res := worldResults(t, clusterlab.SelectorMismatch)
	cart := readingWith(res["services"].Readings, "service", "cart")
	if cart == nil || cart.Labels["issue"] != "selector" || cart.Labels["matching"] != "0" || cart.Value != 0 ||
		!strings.Contains(cart.Line, "the selector matches no pod of the namespace (pods nearby carry app=cart") {
		t.Fatalf("cart: %+v", cart)
	}
	if res["services"].Readings[0].Labels["service"] != "cart" {
		t.Fatalf("the Service in trouble is not first: %s", res["services"].Readings[0].Line)
	}
	res = worldResults(t, func(w *clusterlab.World) {
		s := w.Find("Service", "checkout")
		s["spec"].(clusterlab.Obj)["ports"] = []any{clusterlab.Obj{"name": "http", "port": 8080, "targetPort": 8443, "protocol": "TCP"}}
	})
	co := readingWith(res["services"].Readings, "service", "checkout")
	if co == nil || co.Labels["issue"] != "target_port" || !strings.Contains(co.Line, "targetPort 8443 is not a port of the selected containers (they expose 8080/TCP)") {
		t.Fatalf("checkout: %+v", co)
	}
}

// TestKubernetesAddressesWorkloadsCall: an address a workload is configured
// with that names no Service of the namespace is read; names outside the
// cluster are not judged.
func TestKubernetesAddressesWorkloadsCall(t *testing.T) {
	res := worldResults(t, func(w *clusterlab.World) {
		for _, p := range w.All("Pod", "checkout-") {
			for _, e := range clusterlab.Container(p)["env"].([]any) {
				if e := e.(clusterlab.Obj); e["name"] == "CART_ADDR" {
					e["value"] = "carts:9090"
				}
			}
		}
	})
	var envs []analyzer.Reading
	for _, r := range res["services"].Readings {
		if r.Signal == analyzer.SignalEnvAddress {
			envs = append(envs, r)
		}
	}
	if len(envs) != 1 || envs[0].Labels["workload"] != "deployment/checkout" || envs[0].Labels["host"] != "carts" || envs[0].Labels["issue"] != "no_service" {
		t.Fatalf("addresses: %+v", envs)
	}
	for _, c := range []struct{ name, value, host, port string }{
		{"CART_URL", "http://cart.shop.svc.cluster.local:9090/api", "cart", "9090"},
		{"DB_HOST", "postgres.shop", "postgres", ""},
		{"REDIS", "cart-cache:6379", "cart-cache", "6379"},
	} {
		if h, p, ok := clusterAddress(c.name, c.value, "shop"); !ok || h != c.host || p != c.port {
			t.Errorf("%s=%s: %q %q %v", c.name, c.value, h, p, ok)
		}
	}
	for _, c := range [][2]string{{"PAYMENT_API", "https://api.payments.example.net/v2"}, {"DB_HOST", "10.0.0.5"}, {"LOG_LEVEL", "info"},
		{"OTHER_URL", "http://cart.payments.svc:80"}, {"HOST", "localhost:8080"}} {
		if h, _, ok := clusterAddress(c[0], c[1], "shop"); ok {
			t.Errorf("%s=%s read as the namespace's Service %q", c[0], c[1], h)
		}
	}
}

// TestKubernetesNodesAndAgents: a node whose kubelet stopped posting, a
// node whose kube-proxy is gone, and a control-plane component missing
// beside the others, each as the API shows it.
func TestKubernetesNodesAndAgents(t *testing.T) {
	res := worldResults(t, clusterlab.KubeletDown)
	n := res["nodes"].Readings[0]
	if n.Labels["node"] != "worker-3" || n.Labels["ready"] != "Unknown" || n.Value != 0 || !strings.Contains(n.Line, "Kubelet stopped posting node status.") {
		t.Fatalf("first node reading: %s", n.Line)
	}
	res = worldResults(t, func(w *clusterlab.World) {
		w.Remove("Pod", "kube-proxy-m2w8d")
		w.Remove("Pod", "kube-scheduler-cp-1")
	})
	proxy := readingWith(res["nodes"].Readings, "component", "kube-proxy")
	if proxy == nil || proxy.Labels["node"] != "worker-2" || proxy.Labels["issue"] != "missing" {
		t.Fatalf("kube-proxy: %+v", proxy)
	}
	sched := readingWith(res["nodes"].Readings, "component", "kube-scheduler")
	if sched == nil || sched.Labels["pod"] != "kube-scheduler-cp-1" || sched.Labels["issue"] != "missing" {
		t.Fatalf("kube-scheduler: %+v", sched)
	}
}

// TestKubernetesQuotaAndAdmission: the quota at its limit, fullest first,
// and the refusal in both the event and the Deployment's condition.
func TestKubernetesQuotaAndAdmission(t *testing.T) {
	res := worldResults(t, clusterlab.QuotaExceeded)
	q := res["quotas"].Readings[0]
	if q.Labels["resource"] != "requests.cpu" || q.Value != 8 || q.Limit != 8 {
		t.Fatalf("quota: %+v", q)
	}
	ev := readingWith(res["events"].Readings, "reason", "FailedCreate")
	if ev == nil || ev.Labels["workload"] != "deployment/checkout" || !strings.Contains(ev.Labels["message"], "exceeded quota: compute") || ev.Value != 14 {
		t.Fatalf("event: %+v", ev)
	}
	wl := readingWith(res["workloads"].Readings, "workload", "deployment/checkout")
	if wl == nil || wl.Value != 2 || wl.Limit != 4 || wl.Labels["condition"] != "ReplicaFailure=True" {
		t.Fatalf("workload: %+v", wl)
	}
}

// TestKubernetesContextListsMayBeForbidden: a token that may not list
// EndpointSlices or kube-system's pods still reads what it may; what it may
// not becomes a note, never a failed query.
func TestKubernetesContextListsMayBeForbidden(t *testing.T) {
	res := worldResults(t, nil, "endpointslices", "daemonsets")
	if !strings.Contains(res["services"].Note, "endpointslices not read: Forbidden: endpointslices is forbidden") ||
		!strings.Contains(res["nodes"].Note, "daemonsets not read") || len(res["services"].Readings) == 0 {
		t.Fatalf("notes: %q / %q", res["services"].Note, res["nodes"].Note)
	}
	if r := readingWith(res["services"].Readings, "service", "cart"); r == nil || r.Labels["ready_endpoints"] != "2" {
		t.Fatalf("Endpoints stand in for EndpointSlices: %+v", r)
	}
}

// TestKubernetesPagesLongLists: a namespace with more events than one page
// is read page by page with the API's continue token.
func TestKubernetesPagesLongLists(t *testing.T) {
	res := worldResults(t, func(w *clusterlab.World) {
		for i := 0; i < 620; i++ {
			w.Event("Pod", "frontend-6c9d7b5f8-x2k4q", "Normal", "Pulled", "Container image already present on machine", "kubelet", 1, time.Hour, time.Hour)
		}
		w.Event("Pod", "zz-last-page", "Warning", "BackOff", "Back-off restarting failed container", "kubelet", 3, time.Minute, time.Minute)
	})
	if readingWith(res["events"].Readings, "name", "zz-last-page") == nil {
		t.Fatal("the event on the second page was not read")
	}
}

func TestParseQuantity(t *testing.T) {
	for s, want := range map[string]float64{"500m": 0.5, "2": 2, "4Gi": 4 << 30, "1792Mi": 1792 << 20, "1.5": 1.5, "10k": 10000} {
		if got, ok := parseQuantity(s); !ok || got != want {
			t.Errorf("%s: %v %v", s, got, ok)
		}
	}
	if _, ok := parseQuantity("lots"); ok {
		t.Error("lots parsed")
	}
}

// TestReaderRoleGrantsExactlyWhatThePlansRead: the Helm chart's ClusterRole
// for the kubernetes source lists, per API group, exactly the resources the
// plan's paths read, with get, list and watch only.
func TestReaderRoleGrantsExactlyWhatThePlansRead(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "helm", "causeway", "templates", "kubernetes-reader.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	rule := regexp.MustCompile(`apiGroups: \["([a-z0-9.]*)"\]\n\s+resources: \[([^\]]+)\]\n\s+verbs: \[([^\]]+)\]`)
	for _, m := range rule.FindAllStringSubmatch(string(raw), -1) {
		if m[3] != `"get", "list", "watch"` {
			t.Errorf("group %q grants %s", m[1], m[3])
		}
		for _, r := range strings.Split(m[2], ",") {
			granted[m[1]+"/"+strings.Trim(strings.TrimSpace(r), `"`)] = true
		}
	}
	read := map[string]bool{}
	for _, e := range Plans {
		if e.Type != TypeKubernetes {
			continue
		}
		for _, p := range strings.Fields(e.Query) {
			path, _, _ := strings.Cut(p, "?")
			parts := strings.Split(strings.Trim(path, "/"), "/")
			group := ""
			if parts[0] == "apis" {
				group = parts[1]
			}
			read[group+"/"+parts[len(parts)-1]] = true
		}
	}
	for r := range read {
		if !granted[r] {
			t.Errorf("the plans read %s, which the ClusterRole does not grant", r)
		}
	}
	for r := range granted {
		if !read[r] {
			t.Errorf("the ClusterRole grants %s, which no plan reads", r)
		}
	}
}

func TestClusterAddressSchemes(t *testing.T) {
	if _, _, ok := clusterAddress("TARGET", "s3://shop-exports/orders/", "shop"); ok {
		t.Error("a bucket read as a Service")
	}
	if h, p, ok := clusterAddress("DB_URL", "postgres://app@orders-db:5432/orders", "shop"); !ok || h != "orders-db" || p != "5432" {
		t.Errorf("postgres URL: %q %q %v", h, p, ok)
	}
}
