package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// TestRemediationWithoutWorkflowIsReconciled shows a remediation recorded
// without its workflow (the pass that proposed it ended before starting it)
// still works: an approval starts the workflow with the update
// (update-with-start), and the reconciler, which runs in every worker, starts
// the workflow of one nobody has touched and marks both; then approve and
// execute work as usual.
func TestRemediationWithoutWorkflowIsReconciled(t *testing.T) {
	e := newEnv(t)
	owner, tenantID := e.signup(t, "Acme")
	incID := e.openIncident(t, owner, "Checkout errors", "Checkout API fails with FATAL: too many connections for role app")
	ctx := context.Background()
	created := time.Now().Add(-10 * time.Minute).UTC()
	orphan := func(runbookID string) string {
		remID := remediation.RemediationID("inv_orphan", runbookID)
		steps := []remediation.RemediationStep{{RemediationID: remID, Index: 0, Type: remediation.StepWait, Description: "settle",
			Params: map[string]any{"duration": "10ms"}, Status: remediation.StepPending}}
		rem := remediation.Remediation{ID: remID, TenantID: tenantID, IncidentID: incID, InvestigationID: "inv_orphan", RunbookID: runbookID,
			Description: "orphan", Status: remediation.AwaitingApproval, PlanHash: remediation.PlanHash(steps), CreatedAt: created, Steps: steps}
		if err := remediation.NewStore(e.Store.DB()).ProposeRemediations(ctx, []remediation.Remediation{rem}, []models.TimelineEntry{{TenantID: tenantID, IncidentID: incID,
			At: created, Kind: "remediation_proposed", Message: "proposed", Actor: "causeway", DedupKey: remID + "/proposed"}}); err != nil {
			t.Fatal(err)
		}
		return remID
	}
	early, untouched := orphan("rb_early"), orphan("rb_untouched")
	expectCall(t, e, "approve without a workflow", "POST", "/v1/remediation/"+early+"/approve", owner, nil, http.StatusOK, "")

	n, err := e.App.Reconciler().Sweep(ctx, time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("sweep started %d workflows, want 1 (the untouched one): %v", n, err)
	}
	if _, err := e.Temporal.DescribeWorkflowExecution(ctx, remediation.WorkflowID(untouched), ""); err != nil {
		t.Fatalf("workflow after the sweep: %v", err)
	}
	if n, err := e.App.Reconciler().Sweep(ctx, time.Minute); err != nil || n != 0 {
		t.Fatalf("second sweep started %d: %v", n, err)
	}
	expectCall(t, e, "approve", "POST", "/v1/remediation/"+untouched+"/approve", owner, nil, http.StatusOK, "")
	for _, remID := range []string{early, untouched} {
		expectCall(t, e, "execute", "POST", "/v1/remediation/"+remID+"/execute", owner, nil, http.StatusOK, "")
		eventually(t, 30*time.Second, "remediation to complete", func() bool {
			return e.remediation(t, owner, incID, remID).Status == remediation.Completed
		})
	}
}
