package replay

import (
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
)

// worldScenario is a scenario of the storefront with one fault, behind a
// symptom-only alert on namespace shop.
func worldScenario(fault func(*clusterlab.World), title string) Scenario {
	now := time.Now().UTC().Truncate(time.Second)
	w := clusterlab.NewWorld(now)
	if fault != nil {
		fault(w)
	}
	var s Scenario
	s.ID = title
	s.Now = &now
	s.Alert = analyzer.ScenarioAlert{Title: title, Description: "Customers report failures in the shop.", Severity: "high",
		Tags: map[string]string{"namespace": "shop"}, Metadata: map[string]any{"startsAt": now.Add(-6 * time.Minute).Format(time.RFC3339)}}
	s.AlertSource = "alertmanager"
	s.Kubernetes = &Cluster{Objects: w.Objects()}
	return s
}

// TestClusterFaultsNamed: each fault of the storefront, behind an alert that
// names only the namespace and a symptom, is answered with its category,
// mechanism and the object to fix, taken through the pass's own steps.
func TestClusterFaultsNamed(t *testing.T) {
	cases := []struct {
		fault          func(*clusterlab.World)
		cat, mech, who string
	}{
		{clusterlab.QuotaExceeded, analyzer.CategoryAdmissionRejected, "quota_exceeded", "resourcequota shop/compute"},
		{clusterlab.NodeCordoned, analyzer.CategorySchedulingFailure, "node_cordoned", "node worker-2"},
		{clusterlab.ImageNotFound, analyzer.CategoryImagePullFailure, "image_not_found", "deployment shop/checkout"},
		{clusterlab.SelectorMismatch, analyzer.CategoryServiceMisrouting, "selector_mismatch", "service shop/cart"},
		{clusterlab.KubeletDown, analyzer.CategoryNodeFailure, "kubelet_down", "node worker-3"},
		{clusterlab.NodeGone, analyzer.CategoryNodeFailure, "node_not_ready", "node worker-3"},
		{clusterlab.LivenessMisconfigured, analyzer.CategoryProbeFailure, "liveness_misconfigured", "deployment shop/checkout"},
		{clusterlab.NetworkLatency, analyzer.CategoryNetworkDegradation, "added_latency", "deployment shop/checkout"},
		{clusterlab.OOMWithLaterRollout, analyzer.CategoryMemoryExhaustion, "oom_killed", "deployment shop/cart"},
	}
	for _, c := range cases {
		res := offlineAnswer(t, worldScenario(c.fault, "Partial Service Unreachability"))
		got := "<nil>"
		if res.Culprit != nil {
			got = res.Culprit.String()
		}
		t.Logf("%s %s %s %.2f: %s", res.Category, res.Mechanism, got, res.Confidence, res.RootCause)
		if res.Category != c.cat || res.Mechanism != c.mech || got != c.who {
			t.Errorf("want %s %s %s, got %s %s %s (%.2f): %s\n%+v", c.cat, c.mech, c.who, res.Category, res.Mechanism, got, res.Confidence, res.RootCause, res.Hypotheses)
		}
	}
	res := offlineAnswer(t, worldScenario(nil, "Partial Service Unreachability"))
	if res.Category != analyzer.CategoryUnknown || res.Culprit != nil {
		t.Errorf("a healthy namespace: %s %v (%.2f): %s", res.Category, res.Culprit, res.Confidence, res.RootCause)
	}
}
