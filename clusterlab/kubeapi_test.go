package clusterlab

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func kubeGet(t *testing.T, ks *KubeServer, token, path string) (int, map[string]any) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(ks.CABundle))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, ks.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("%s: not JSON: %s", path, raw)
	}
	return resp.StatusCode, body
}

// TestKubeAPIServesTheAPIsPaths: lists of a namespace and of the cluster
// (items without kind, as typed lists carry them), one object, selectors,
// paging, and the Status bodies of 401, 403, 404 and 405.
func TestKubeAPIServesTheAPIsPaths(t *testing.T) {
	w := NewWorld(time.Now())
	ks := StartKube(t, "tok", w.Objects())
	code, list := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/pods")
	items, _ := list["items"].([]any)
	if code != 200 || list["kind"] != "PodList" || list["apiVersion"] != "v1" || len(items) != 8 {
		t.Fatalf("pods: %d %v %v %d", code, list["kind"], list["apiVersion"], len(items))
	}
	if _, hasKind := items[0].(map[string]any)["kind"]; hasKind {
		t.Fatal("a list item carries its kind")
	}
	if _, l := kubeGet(t, ks, "tok", "/api/v1/nodes"); len(l["items"].([]any)) != 4 || l["kind"] != "NodeList" {
		t.Fatalf("nodes: %v", l["kind"])
	}
	if _, l := kubeGet(t, ks, "tok", "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=kubernetes.io/service-name%3Dcart"); len(l["items"].([]any)) != 1 {
		t.Fatalf("label selector: %d items", len(l["items"].([]any)))
	}
	if _, l := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/pods?labelSelector=app+in+(cart,checkout),app!=frontend"); len(l["items"].([]any)) != 4 {
		t.Fatalf("set selector: %d items", len(l["items"].([]any)))
	}
	if _, l := kubeGet(t, ks, "tok", "/api/v1/namespaces/kube-system/pods?fieldSelector=spec.nodeName%3Dworker-2"); len(l["items"].([]any)) != 3 {
		t.Fatalf("field selector: %d items", len(l["items"].([]any)))
	}
	_, page := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/pods?limit=5")
	meta := page["metadata"].(map[string]any)
	if len(page["items"].([]any)) != 5 || meta["continue"] == "" || meta["remainingItemCount"] != float64(3) {
		t.Fatalf("first page: %v", meta)
	}
	_, rest := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/pods?limit=5&continue="+meta["continue"].(string))
	if len(rest["items"].([]any)) != 3 || rest["metadata"].(map[string]any)["continue"] != nil {
		t.Fatalf("second page: %d items, %v", len(rest["items"].([]any)), rest["metadata"])
	}
	if code, obj := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/services/cart"); code != 200 || obj["kind"] != "Service" {
		t.Fatalf("get: %d %v", code, obj["kind"])
	}
	if code, st := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/services/nope"); code != 404 || st["kind"] != "Status" || st["reason"] != "NotFound" || st["message"] != `services "nope" not found` {
		t.Fatalf("404: %d %v", code, st)
	}
	if code, st := kubeGet(t, ks, "wrong", "/api/v1/nodes"); code != 401 || st["reason"] != "Unauthorized" {
		t.Fatalf("401: %d %v", code, st)
	}
	ks.API.Forbid("nodes")
	if code, st := kubeGet(t, ks, "tok", "/api/v1/nodes"); code != 403 ||
		st["message"] != `nodes is forbidden: User "system:serviceaccount:monitoring:causeway" cannot list resource "nodes" in API group "" at the cluster scope` {
		t.Fatalf("403: %d %v", code, st["message"])
	}
	if code, _ := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/widgets"); code != 404 {
		t.Fatalf("unknown resource: %d", code)
	}
}

// TestKubeAPIShiftsTimes: a snapshot taken long ago reads as taken now,
// every timestamp moved by the same amount and kept in its layout.
func TestKubeAPIShiftsTimes(t *testing.T) {
	raw := []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"e1","namespace":"shop","creationTimestamp":"2026-01-10T10:00:00Z"},
		"involvedObject":{"kind":"Pod","name":"p"},"reason":"BackOff","firstTimestamp":"2026-01-10T10:00:00Z","lastTimestamp":"2026-01-10T10:05:00Z",
		"eventTime":"2026-01-10T10:05:00.123456Z","message":"image tag 2026-01-10T10:00:00 stays"}`)}
	api, err := NewKubeAPI("tok", raw, 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ks := ServeKube(api)
	defer ks.Close()
	_, l := kubeGet(t, ks, "tok", "/api/v1/namespaces/shop/events")
	ev := l["items"].([]any)[0].(map[string]any)
	if ev["lastTimestamp"] != "2026-01-12T10:05:00Z" || ev["eventTime"] != "2026-01-12T10:05:00.123456Z" ||
		ev["metadata"].(map[string]any)["creationTimestamp"] != "2026-01-12T10:00:00Z" || !strings.Contains(ev["message"].(string), "2026-01-10T10:00:00 stays") {
		t.Fatalf("shifted: %v", ev)
	}
}

// TestCheckObjects: a snapshot's objects must be kinds the replay serves,
// named, and namespaced exactly when their kind is.
func TestCheckObjects(t *testing.T) {
	for _, c := range []struct{ obj, want string }{
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, "metadata.namespace is required"},
		{`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","namespace":"x"}}`, "cluster-scoped"},
		{`{"apiVersion":"v1","kind":"Widget","metadata":{"name":"w"}}`, "not a kind the replay serves"},
		{`{"apiVersion":"apps/v1","kind":"Pod","metadata":{"name":"p","namespace":"x"}}`, "not a kind the replay serves"},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"x"}}`, "metadata.name is required"},
	} {
		if err := CheckObjects([]json.RawMessage{json.RawMessage(c.obj)}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.obj, err)
		}
	}
}
