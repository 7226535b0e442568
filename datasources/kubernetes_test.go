package datasources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
)

// k8sSource connects to a fake API server (core/v1 and apps/v1 as of
// Kubernetes v1.30) over TLS with its CA bundle and a bearer token.
func k8sSource(t *testing.T, c *Connector, ks *clusterlab.KubeServer, token string) Config {
	t.Helper()
	cfg, err := c.Prepare(context.Background(), Spec{Name: "prod cluster", Type: TypeKubernetes, URL: ks.URL,
		Auth: &Auth{BearerToken: token}, Settings: map[string]any{"caBundle": ks.CABundle}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds-k8s"
	return cfg
}

// gatheredOf turns a source's answers into the excerpts an agent reads, as
// the gathering activity stores them.
func gatheredOf(cfg Config, plan Planned, res map[string]Result) []analyzer.Excerpt {
	var out []analyzer.Excerpt
	for _, q := range plan.Queries {
		r := res[q.Entry]
		text, measured := analyzer.ReadingsText(r.Readings), r.Text == ""
		if !measured {
			text = r.Text
		}
		out = append(out, analyzer.Excerpt{Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: cfg.ID, Type: cfg.Type, Query: q.Text},
			Text: text, Roles: q.Roles, Readings: r.Readings, Measured: measured})
	}
	return out
}

func k8sPlan(cfg Config, sc Scope) Planned {
	return Plan([]Source{{ID: cfg.ID, Name: cfg.Name, Type: cfg.Type, URL: cfg.URL, Settings: cfg.Settings}}, sc, analyzer.Roles, 100)
}

// TestKubernetesReadsAnOOMCrashLoop: the pods' last termination (OOMKilled,
// exit 137) comes back as readings the infrastructure agent judges as
// memory exhaustion; events of the window come back as lines.
func TestKubernetesReadsAnOOMCrashLoop(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	ks := clusterlab.Kubernetes(t, clusterlab.CrashLoopOOM("shop", "k8s-token-abc", now))
	c := testConnector()
	cfg := k8sSource(t, c, ks, "k8s-token-abc")
	if msg, err := c.Test(context.Background(), cfg); err != nil || !strings.Contains(msg, "v1.30.4") {
		t.Fatalf("test: %q %v", msg, err)
	}
	res := runPlan(t, c, cfg, alertScope(now))
	pods := res["pods"].Readings
	if len(pods) != 2 || pods[0].Labels["reason"] != "OOMKilled" || pods[0].Labels["exit_code"] != "137" || pods[0].Value != 6 ||
		pods[0].Labels["replicaset"] != "checkout-7d9f8c6b5" || pods[0].Labels["waiting"] != "CrashLoopBackOff" {
		t.Fatalf("pods: %+v", pods)
	}
	ev := res["events"].Readings
	if len(ev) != 1 || ev[0].Labels["reason"] != "BackOff" || ev[0].Value != 14 || ev[0].Labels["workload"] != "deployment/checkout" ||
		!strings.Contains(ev[0].Line, "Warning BackOff Pod/checkout-7d9f8c6b5-x2k4q (deployment/checkout): Back-off restarting failed container") {
		t.Fatalf("events: %+v", ev)
	}
	plan := k8sPlan(cfg, alertScope(now))
	if !strings.HasPrefix(plan.Queries[0].Text, "GET /api/v1/namespaces/shop/pods") {
		t.Fatalf("query text: %s", plan.Queries[0].Text)
	}
	rep := analyzer.Investigate(analyzer.RoleInfrastructure, analyzer.Input{Title: "checkout degraded", Service: "checkout", Gathered: gatheredOf(cfg, plan, res)})
	if len(rep.Findings) == 0 || rep.Findings[0].Category != analyzer.CategoryMemoryExhaustion || !strings.Contains(rep.Findings[0].Citation, "last terminated OOMKilled (exit code 137)") ||
		rep.Findings[0].Culprit == nil || rep.Findings[0].Culprit.String() != "deployment shop/checkout" || rep.Findings[0].Mechanism != "oom_killed" {
		t.Fatalf("infrastructure findings: %+v", rep.Findings)
	}
	deploy := analyzer.Investigate(analyzer.RoleDeployments, analyzer.Input{Title: "checkout degraded", Service: "checkout", Gathered: gatheredOf(cfg, plan, res)})
	for _, f := range deploy.Findings {
		if f.Category == analyzer.CategoryBadDeployment && f.Stance == analyzer.StanceSupports {
			t.Fatalf("a nine-day-old rollout taken for the trigger: %+v", f)
		}
	}
	if ks.API.Writes.Load() != 0 {
		t.Fatal("the client sent something other than GET")
	}
}

// TestKubernetesTiesFailuresToARollout: only the new ReplicaSet's pods fail,
// right after it was created; the deployments agent cites the rollout.
func TestKubernetesTiesFailuresToARollout(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	ks := clusterlab.Kubernetes(t, clusterlab.BadRollout("shop", "k8s-token-abc", now))
	c := testConnector()
	cfg := k8sSource(t, c, ks, "k8s-token-abc")
	res := runPlan(t, c, cfg, alertScope(now))
	ro := res["rollouts"].Readings
	if len(ro) != 2 || ro[0].Value != 13 || ro[0].Labels["image"] != "registry.example/checkout:2.15.0" || ro[0].Labels["ready"] != "0/1" || !ro[0].At.Equal(now.Add(-6*time.Minute)) {
		t.Fatalf("rollouts: %+v", ro)
	}
	rep := analyzer.Investigate(analyzer.RoleDeployments, analyzer.Input{Title: "checkout degraded", Service: "checkout", Gathered: gatheredOf(cfg, k8sPlan(cfg, alertScope(now)), res)})
	if len(rep.Findings) == 0 || rep.Findings[0].Category != analyzer.CategoryBadDeployment || rep.Findings[0].Citation != ro[0].Line {
		t.Fatalf("deployments findings: %+v\nrollout line %s", rep.Findings, ro[0].Line)
	}
}

// TestKubernetesErrors: a wrong token is the API's 401 Status, a missing
// permission its 403 Status with the API's message; a CA that did not sign
// the server's certificate fails the handshake.
func TestKubernetesErrors(t *testing.T) {
	now := time.Now().UTC()
	cl := clusterlab.CrashLoopOOM("shop", "k8s-token-abc", now)
	cl.Forbidden = map[string]bool{"events": true}
	ks := clusterlab.Kubernetes(t, cl)
	c := testConnector()
	cfg := k8sSource(t, c, ks, "k8s-token-abc")
	plan := k8sPlan(cfg, alertScope(now))
	var events Query
	for _, q := range plan.Queries {
		if q.Entry == "events" {
			events = q
		}
	}
	_, err := c.Run(context.Background(), cfg, events)
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), `Forbidden: events is forbidden: User "system:serviceaccount:monitoring:causeway" cannot list resource "events"`) {
		t.Fatalf("forbidden: %v", err)
	}
	bad := cfg
	bad.Auth = Auth{BearerToken: "wrong-token"}
	if _, err := c.Test(context.Background(), bad); !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "Unauthorized") || strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("wrong token: %v", err)
	}
	noCA := cfg
	noCA.Settings = map[string]any{}
	if _, err := c.Test(context.Background(), noCA); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a server certificate no CA vouches for was accepted: %v", err)
	}
	if _, err := c.Prepare(context.Background(), Spec{Name: "k", Type: TypeKubernetes, URL: ks.URL, Settings: map[string]any{"caBundle": "not a PEM"}}); err == nil ||
		err.(*FieldError).Field != "settings.caBundle" {
		t.Fatalf("bad CA bundle: %v", err)
	}
}

// TestKubernetesNamespacesASourceMayRead: a source set to settings.namespaces
// reads the alert's namespace when it is one of them and nothing when it is
// not; an alert naming none reads the first k8sMaxNamespaces, and the note
// names the ones left out.
func TestKubernetesNamespacesASourceMayRead(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	src := Source{ID: "k", Name: "prod", Type: TypeKubernetes, Settings: map[string]any{"namespaces": []any{"a", "b", "c", "d", "e"}}}
	read := func(labels map[string]string) (map[string]bool, []string) {
		p := Plan([]Source{src}, Scope{Labels: labels, Start: now.Add(-time.Hour), End: now}, analyzer.Roles, 100)
		ns := map[string]bool{}
		for _, q := range p.Queries {
			first, _, _ := strings.Cut(strings.TrimPrefix(q.Text, "GET "), ",")
			if n := pathNamespace(first); n != "" {
				ns[n] = true
			}
		}
		return ns, p.Notes
	}
	ns, notes := read(map[string]string{"namespace": "b"})
	if len(ns) != 1 || !ns["b"] || len(notes) != 0 {
		t.Fatalf("alert on b: %v %v", ns, notes)
	}
	if ns, notes = read(map[string]string{"namespace": "z"}); len(ns) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "is not one of its settings.namespaces") {
		t.Fatalf("alert on z: %v %v", ns, notes)
	}
	ns, notes = read(nil)
	if len(ns) != 3 || !ns["a"] || !ns["b"] || !ns["c"] || len(notes) != 1 || !strings.HasSuffix(notes[0], "not d, e") {
		t.Fatalf("no namespace named: %v %v", ns, notes)
	}
}

// statefulSetRollout is a StatefulSet "ledger" in namespace shop as the API
// returns it mid-rollout: revision 7 (ledger-6b8f9d7c4f) created six minutes
// ago runs ledger-2, which crash-loops; revision 6 runs ledger-0 and ledger-1,
// ready. A StatefulSet's pods name their revision in controller-revision-hash.
func statefulSetRollout(now time.Time) []json.RawMessage {
	at := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339) }
	owner := `"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"ledger","uid":"5e0c","controller":true,"blockOwnerDeletion":true}]`
	revision := func(name string, rev int, image, created string) string {
		return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":%q,"namespace":"shop","creationTimestamp":%q,"labels":{"app":"ledger","controller.kubernetes.io/hash":%q},%s},`+
			`"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"ledger"}},"spec":{"containers":[{"name":"ledger","image":%q}]}}}},"revision":%d}`,
			name, created, name[len("ledger-"):], owner, image, rev)
	}
	running := `"state":{"running":{"startedAt":"` + at(-3*time.Hour) + `"}},"ready":true,"restartCount":0`
	crashing := `"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 1m20s restarting failed container=ledger pod=ledger-2_shop(9f1d)"}},` +
		`"lastState":{"terminated":{"exitCode":1,"reason":"Error","startedAt":"` + at(-90*time.Second) + `","finishedAt":"` + at(-80*time.Second) + `"}},"ready":false,"restartCount":4`
	pod := func(name, rev, image, status string, ready bool) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"shop","creationTimestamp":%q,"labels":{"app":"ledger","controller-revision-hash":%q,"statefulset.kubernetes.io/pod-name":%q},%s},`+
			`"spec":{"nodeName":"node-a","containers":[{"name":"ledger","image":%q}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":%q}],"containerStatuses":[{"name":"ledger","image":%q,%s}]}}`,
			name, at(-3*time.Hour), rev, name, owner, image, map[bool]string{true: "True", false: "False"}[ready], image, status)
	}
	objs := []string{
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"ledger","namespace":"shop","uid":"5e0c","generation":7,"creationTimestamp":"` + at(-30*24*time.Hour) + `"},` +
			`"spec":{"replicas":3,"serviceName":"ledger","selector":{"matchLabels":{"app":"ledger"}},"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},"template":{"metadata":{"labels":{"app":"ledger"}},"spec":{"containers":[{"name":"ledger","image":"registry.example/ledger:4.2.0"}]}}},` +
			`"status":{"replicas":3,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":1,"currentRevision":"ledger-85c4d9b6d7","updateRevision":"ledger-6b8f9d7c4f","observedGeneration":7}}`,
		revision("ledger-85c4d9b6d7", 6, "registry.example/ledger:4.1.3", at(-20*24*time.Hour)),
		revision("ledger-6b8f9d7c4f", 7, "registry.example/ledger:4.2.0", at(-6*time.Minute)),
		pod("ledger-0", "ledger-85c4d9b6d7", "registry.example/ledger:4.1.3", running, true),
		pod("ledger-1", "ledger-85c4d9b6d7", "registry.example/ledger:4.1.3", running, true),
		pod("ledger-2", "ledger-6b8f9d7c4f", "registry.example/ledger:4.2.0", crashing, false),
	}
	out := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		out[i] = json.RawMessage(o)
	}
	return out
}

// TestKubernetesReadsAStatefulSetRollout: a StatefulSet's revisions are read
// from its ControllerRevisions and its pods tied to them by their
// controller-revision-hash, so a rollout of a StatefulSet is weighed as a
// Deployment's is, and the StatefulSet is named.
func TestKubernetesReadsAStatefulSetRollout(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	ks := clusterlab.StartKube(t, "k8s-token-abc", statefulSetRollout(now))
	c := testConnector()
	cfg := k8sSource(t, c, ks, "k8s-token-abc")
	sc := ScopeOf(Alert{Provider: "alertmanager", Tags: map[string]string{"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "ledger-2"},
		Metadata: map[string]any{"startsAt": now.Add(-4 * time.Minute).Format(time.RFC3339)}}, now, 0)
	res := runPlan(t, c, cfg, sc)
	ro := res["rollouts"].Readings
	if len(ro) != 2 || ro[0].Value != 7 || ro[0].Labels["statefulset"] != "ledger" || ro[0].Labels["replicaset"] != "ledger-6b8f9d7c4f" ||
		ro[0].Labels["image"] != "registry.example/ledger:4.2.0" || ro[0].Labels["ready"] != "0/1" || ro[1].Labels["ready"] != "2/2" || !ro[0].At.Equal(now.Add(-6*time.Minute)) {
		t.Fatalf("rollouts: %+v", ro)
	}
	var crashing analyzer.Reading
	for _, r := range res["pods"].Readings {
		if r.Labels["pod"] == "ledger-2" {
			crashing = r
		}
	}
	if crashing.Labels["replicaset"] != "ledger-6b8f9d7c4f" {
		t.Fatalf("the crashing pod's revision: %+v", crashing.Labels)
	}
	rep := analyzer.Investigate(analyzer.RoleDeployments, analyzer.Input{Title: "ledger-2 is crash looping", Gathered: gatheredOf(cfg, k8sPlan(cfg, sc), res)})
	if len(rep.Findings) == 0 || rep.Findings[0].Category != analyzer.CategoryBadDeployment || rep.Findings[0].Citation != ro[0].Line ||
		rep.Findings[0].Culprit == nil || *rep.Findings[0].Culprit != (analyzer.Culprit{Kind: analyzer.KindStatefulSet, Name: "ledger", Namespace: "shop"}) {
		t.Fatalf("deployments findings: %+v\nrollout line %s", rep.Findings, ro[0].Line)
	}
}
