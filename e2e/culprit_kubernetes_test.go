package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/clusterlab"
)

// TestClusterCulpritsThroughTheKubernetesSource: a storefront namespace
// with one fault, served by the Kubernetes API replay over TLS behind a
// service-account token, and an Alertmanager alert that names only the
// namespace and a symptom. Each investigation, on the real Temporal server,
// names the category, the mechanism and the object to fix, citing the API
// path that showed it; a healthy namespace is unknown with no culprit; a
// rollout after the onset of an OOM loop is not blamed for it.
func TestClusterCulpritsThroughTheKubernetesSource(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name           string
		fault          func(*clusterlab.World)
		cat, mech, who string
		path           string
	}{
		{"quota", clusterlab.QuotaExceeded, analyzer.CategoryAdmissionRejected, "quota_exceeded", "resourcequota shop/compute", "/api/v1/namespaces/shop/events"},
		{"cordoned", clusterlab.NodeCordoned, analyzer.CategorySchedulingFailure, "node_cordoned", "node worker-2", "/api/v1/namespaces/shop/pods"},
		{"image", clusterlab.ImageNotFound, analyzer.CategoryImagePullFailure, "image_not_found", "deployment shop/checkout", "/api/v1/namespaces/shop/pods"},
		{"liveness", clusterlab.LivenessMisconfigured, analyzer.CategoryProbeFailure, "liveness_misconfigured", "deployment shop/checkout", "/api/v1/namespaces/shop/events"},
		{"selector", clusterlab.SelectorMismatch, analyzer.CategoryServiceMisrouting, "selector_mismatch", "service shop/cart", "/api/v1/namespaces/shop/services"},
		{"kubelet", clusterlab.KubeletDown, analyzer.CategoryNodeFailure, "kubelet_down", "node worker-3", "/api/v1/nodes"},
		{"latency", clusterlab.NetworkLatency, analyzer.CategoryNetworkDegradation, "added_latency", "deployment shop/checkout", "/api/v1/namespaces/shop/events"},
		{"oom-then-rollout", clusterlab.OOMWithLaterRollout, analyzer.CategoryMemoryExhaustion, "oom_killed", "deployment shop/cart", "/api/v1/namespaces/shop/pods"},
		{"healthy", nil, analyzer.CategoryUnknown, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			world := clusterlab.NewWorld(time.Now())
			if c.fault != nil {
				c.fault(world)
			}
			token := "k8s-sa-" + auth.RandomToken(12)
			ks := clusterlab.StartKube(t, token, world.Objects())
			tk, tenantID, key := e.tenantWithKey(t, "culprit-"+c.name)
			dsID := e.addSource(t, tk, map[string]any{"name": "prod cluster", "type": "kubernetes", "url": ks.URL,
				"auth": map[string]any{"bearerToken": token}, "settings": map[string]any{"caBundle": ks.CABundle}})
			labels := map[string]string{"alertname": "PartialServiceUnreachability", "namespace": "shop", "severity": "warning"}
			id := e.alertmanagerAlert(t, tenantID, key, labels, "Partial Service Unreachability", time.Now().Add(-6*time.Minute))
			res := e.awaitSourced(t, tk, id)
			if res.Status != "completed" || res.Category != c.cat {
				t.Fatalf("got %s %s (%.2f): %s\nevidence %+v", res.Status, res.Category, res.Confidence, res.RootCause, res.Evidence)
			}
			if c.cat == analyzer.CategoryUnknown {
				if res.Culprit != nil || res.Mechanism != nil || len(res.Candidates) == 0 || res.Candidates[0].Category != analyzer.CategoryUnknown {
					t.Fatalf("a healthy namespace named a culprit: %+v %v %+v", res.Culprit, res.Mechanism, res.Candidates)
				}
				return
			}
			got := ""
			if res.Culprit != nil {
				got = res.Culprit.Kind + " " + res.Culprit.Name
				if res.Culprit.Namespace != "" {
					got = res.Culprit.Kind + " " + res.Culprit.Namespace + "/" + res.Culprit.Name
				}
			}
			if got != c.who || res.Mechanism == nil || *res.Mechanism != c.mech || len(res.Candidates) == 0 || res.Candidates[0].Category != c.cat {
				t.Fatalf("culprit %q mechanism %v candidates %+v, want %s %s\n%s", got, res.Mechanism, res.Candidates, c.who, c.mech, res.RootCause)
			}
			if !strings.Contains(res.RootCause, c.who) {
				t.Fatalf("the root cause does not lead with the culprit: %s", res.RootCause)
			}
			cited := false
			for _, ev := range res.Evidence {
				if s := ev.Source; s != nil && s.Type == "kubernetes" && s.DataSourceID == dsID && strings.HasPrefix(s.Query, "GET "+c.path) &&
					strings.Contains(ev.Content, c.cat) {
					cited = true
				}
			}
			if !cited {
				t.Fatalf("no evidence for %s cites %s: %+v", c.cat, c.path, res.Evidence)
			}
			for _, cand := range res.Candidates {
				if c.name == "oom-then-rollout" && cand.Category == analyzer.CategoryBadDeployment {
					t.Fatalf("the rollout after the onset is a candidate: %+v", res.Candidates)
				}
			}
			if ks.API.Writes.Load() != 0 {
				t.Fatal("Causeway sent the API server something other than GET")
			}
			if c.name == "quota" {
				secretsNowhere(t, e, tk, id, res.Agents, token)
			}
		})
	}
}
