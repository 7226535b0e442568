package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// listWorkflowIDs runs a visibility query, as the Temporal UI's filter does, and
// returns the sorted workflow IDs it finds.
func (e *env) listWorkflowIDs(t *testing.T, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.Config.TemporalNamespace, Query: query})
	if err != nil {
		t.Fatalf("list workflows %q: %v", query, err)
	}
	var ids []string
	for _, ex := range resp.GetExecutions() {
		ids = append(ids, ex.GetExecution().GetWorkflowId())
	}
	slices.Sort(ids)
	return ids
}

// awaitQuery waits until query finds exactly want (visibility follows the
// workflows with a short lag).
func (e *env) awaitQuery(t *testing.T, query string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	eventually(t, 30*time.Second, fmt.Sprintf("%q to find %v", query, want), func() bool {
		got = e.listWorkflowIDs(t, query)
		return slices.Equal(got, want)
	})
}

// TestSearchAttributesFilterWorkflows is what an SRE does in the Temporal UI:
// filter "the critical incidents of tenant X", "the passes of tenant X that
// found category Y", "tenant X's resolved incidents". Two tenants send alerts
// of different severities; each query must find exactly the right workflows.
func TestSearchAttributesFilterWorkflows(t *testing.T) {
	e := newEnv(t)
	tokenA, tenantA := e.signup(t, "Alpha")
	tokenB, tenantB := e.signup(t, "Beta")
	keyA, secretA := e.hookKey(t, tokenA)
	keyB, secretB := e.hookKey(t, tokenB)
	send := func(tenantID, key, secret, id, severity string) string {
		t.Helper()
		st, out := e.alert(t, tenantID, key, secret, map[string]string{
			"title": "Checkout errors", "description": "checkout-api fails: FATAL: too many connections for role app",
			"sourceAlertId": id, "severity": severity, "service": "checkout", "environment": "prod",
		})
		incID, _ := out["incidentId"].(string)
		if st != http.StatusAccepted || incID == "" {
			t.Fatalf("alert %s: %d %v", id, st, out)
		}
		return incID
	}
	critA := send(tenantA, keyA, secretA, "crit-a", "critical")
	lowA := send(tenantA, keyA, secretA, "low-a", "low")
	critB := send(tenantB, keyB, secretB, "crit-b", "critical")

	// Webhook incidents are investigated after triage; wait for every answer.
	resA := e.awaitInvestigation(t, tokenA, critA, time.Minute)
	resLow := e.awaitInvestigation(t, tokenA, lowA, time.Minute)
	resB := e.awaitInvestigation(t, tokenB, critB, time.Minute)
	for _, r := range []investigationJSON{resA, resLow, resB} {
		if r.Status != models.InvestigationCompleted || r.Category == "" {
			t.Fatalf("pass %+v", r)
		}
	}

	e.awaitQuery(t, fmt.Sprintf("CausewayTenant = '%s' AND CausewaySeverity = 'critical'", tenantA), investigation.IncidentWorkflowID(critA))
	e.awaitQuery(t, fmt.Sprintf("CausewayTenant = '%s' AND CausewaySeverity = 'critical'", tenantB), investigation.IncidentWorkflowID(critB))
	e.awaitQuery(t, fmt.Sprintf("CausewayTenant = '%s' AND CausewayService = 'checkout' AND CausewayIncidentStatus = '%s'", tenantA, models.StatusInvestigated),
		investigation.IncidentWorkflowID(critA), investigation.IncidentWorkflowID(lowA))

	// The passes carry the category they found.
	var wantPasses []string
	for id, r := range map[string]investigationJSON{critA: resA, lowA: resLow} {
		if r.Category == resA.Category {
			wantPasses = append(wantPasses, investigation.InvestigationWorkflowID(id, 1))
		}
	}
	e.awaitQuery(t, fmt.Sprintf("WorkflowType = '%s' AND CausewayTenant = '%s' AND CausewayCategory = '%s'",
		investigation.InvestigationWorkflowName, tenantA, resA.Category), wantPasses...)

	// Status follows the incident: resolving one moves it in the filter.
	if st := e.call(t, "POST", "/v1/incidents/"+lowA+"/resolve", tokenA, map[string]string{"note": "fixed"}, nil); st != http.StatusOK {
		t.Fatalf("resolve: %d", st)
	}
	e.awaitQuery(t, fmt.Sprintf("CausewayTenant = '%s' AND CausewayIncidentStatus = '%s'", tenantA, models.StatusResolved), investigation.IncidentWorkflowID(lowA))
	e.awaitQuery(t, fmt.Sprintf("CausewayTenant = '%s' AND CausewayIncidentStatus = '%s'", tenantA, models.StatusInvestigated), investigation.IncidentWorkflowID(critA))
}
