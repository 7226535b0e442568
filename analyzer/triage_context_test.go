package analyzer

import (
	"slices"
	"testing"
)

// A pass started with pasted context dispatches the specialists that context
// calls for, even when the alert's own words never named their domain.
func TestSelectAgentsReadsContext(t *testing.T) {
	in := Input{Title: "checkout-api error rate above 5%", Description: "errors on the payment step", Severity: "high"}
	if got := SelectAgents(in); slices.Contains(got, RoleDeployments) || slices.Contains(got, RoleDatabase) {
		t.Fatalf("alert alone selected %v", got)
	}
	in.Context = []string{"14:02 feature flag new-pricing enabled for 100% of traffic", "ERROR: deadlock detected on orders"}
	got := SelectAgents(in)
	if !slices.Contains(got, RoleDeployments) || !slices.Contains(got, RoleDatabase) {
		t.Fatalf("with context selected %v, want deployments and database too", got)
	}
}
