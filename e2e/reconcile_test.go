package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/causeway/causeway/activities"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/workflows"
)

// TestRemediationWithoutWorkflowIsReconciled shows a remediation recorded
// without its workflow (the pass that proposed it ended before starting it)
// cannot be approved, until the reconciler, which runs in every worker, starts
// the missing workflow; then approve and execute work as usual.
func TestRemediationWithoutWorkflowIsReconciled(t *testing.T) {
	e := newEnv(t)
	owner, tenantID := e.signup(t, "Acme")
	incID := e.openIncident(t, owner, "Checkout errors", "Checkout API fails with FATAL: too many connections for role app")
	ctx := context.Background()
	created := time.Now().Add(-10 * time.Minute).UTC()
	remID := models.RemediationID("inv_orphan", "rb_orphan")
	steps := []models.RemediationStep{{RemediationID: remID, Index: 0, Type: activities.StepWait, Description: "settle",
		Params: map[string]any{"duration": "10ms"}, Status: models.StepPending}}
	rem := models.Remediation{ID: remID, TenantID: tenantID, IncidentID: incID, InvestigationID: "inv_orphan", RunbookID: "rb_orphan",
		Description: "orphan", Status: models.RemediationAwaitingApproval, PlanHash: models.PlanHash(steps), CreatedAt: created, Steps: steps}
	if err := e.Store.ProposeRemediations(ctx, []models.Remediation{rem}, []models.TimelineEntry{{TenantID: tenantID, IncidentID: incID,
		At: created, Kind: "remediation_proposed", Message: "proposed", Actor: "causeway", DedupKey: remID + "/proposed"}}); err != nil {
		t.Fatal(err)
	}
	approve := "/v1/remediation/" + remID + "/approve"
	expectCall(t, e, "approve without a workflow", "POST", approve, owner, nil, http.StatusServiceUnavailable, "unavailable")

	n, err := e.App.Reconciler().Sweep(ctx, time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("sweep started %d workflows: %v", n, err)
	}
	if _, err := e.Temporal.DescribeWorkflowExecution(ctx, workflows.RemediationWorkflowID(remID), ""); err != nil {
		t.Fatalf("workflow after the sweep: %v", err)
	}
	if n, err := e.App.Reconciler().Sweep(ctx, time.Minute); err != nil || n != 0 {
		t.Fatalf("second sweep started %d: %v", n, err)
	}
	expectCall(t, e, "approve", "POST", approve, owner, nil, http.StatusOK, "")
	expectCall(t, e, "execute", "POST", "/v1/remediation/"+remID+"/execute", owner, nil, http.StatusOK, "")
	eventually(t, 30*time.Second, "remediation to complete", func() bool {
		return e.remediation(t, owner, incID, remID).Status == models.RemediationCompleted
	})
}
