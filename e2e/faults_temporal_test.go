//go:build faults

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// Shape of the Temporal outage: tmBefore alerts while it is up, tmDuring while
// it is down for at least tmOutage, and a quota of tmInvestigations passes so a
// few incidents are investigated on both sides of the outage.
const (
	tmBefore         = 10
	tmDuring         = 60
	tmOutage         = 15 * time.Second
	tmInvestigations = 16
)

// TestFaultTemporalUnreachable stops the Temporal server under a running
// Causeway and starts it again on the same port and persistence. While it is
// down, alerts and manual incidents are still acknowledged, and durably (the
// row is the queue); requests that need a workflow answer 503 unavailable and
// /health/detailed says unhealthy. Once it is back every acknowledged incident
// gets exactly one IncidentWorkflow and settles, without restarting Causeway.
func TestFaultTemporalUnreachable(t *testing.T) {
	ts := startTemporal(t)
	cfg := testConfig(t)
	cfg.TemporalNamespace = "default"
	cfg.QuotaInvestigationsPerMonth = tmInvestigations
	e := startEnvOn(t, cfg, ts.Address(), true)
	token, tenantID := e.signup(t, "temporal-fault")
	key, secret := e.hookKey(t, token)
	ctx := context.Background()
	db := e.Store.DB().WithContext(ctx)

	run := strings.ToLower(fmt.Sprint(time.Now().UnixNano() % 1e9))
	acked := map[string]string{} // alert id → incident id
	send := func(n int, prefix string) statusCounts {
		counts := statusCounts{}
		for i := range n {
			id := fmt.Sprintf("tm-%s-%s-%02d", run, prefix, i)
			st, out := e.alert(t, tenantID, key, secret, firing(id))
			counts[st]++
			if inc, _ := out["incidentId"].(string); st == http.StatusAccepted && inc != "" {
				acked[id] = inc
			}
		}
		return counts
	}
	if c := send(tmBefore, "before"); c[http.StatusAccepted] != tmBefore {
		t.Fatalf("alerts while Temporal is up: %s", c)
	}
	manual := e.openIncident(t, token, "Queue backlog", "orders queue has 40k messages waiting")
	eventually(t, 30*time.Second, "the first incidents' workflows", func() bool {
		var pending int64
		db.Model(&models.Incident{}).Where("tenant_id = ? AND workflow_started_at IS NULL", tenantID).Count(&pending)
		return pending == 0
	})

	ts.Stop()
	downAt := time.Now()
	e.awaitHealth(t, 10*time.Second, "unhealthy", map[string]string{"temporal": "unhealthy"})

	// Ingest acknowledges durably: every 202 is a committed incident whose
	// workflow is still to be started.
	if c := send(tmDuring, "during"); c[http.StatusAccepted] != tmDuring {
		t.Fatalf("alerts while Temporal is down: %s, want %d×202", c, tmDuring)
	}
	manualDuring := e.openIncident(t, token, "Cache misses", "redis cache hit ratio fell to 12% on checkout")
	var queued int64
	db.Model(&models.Incident{}).Where("tenant_id = ? AND workflow_started_at IS NULL", tenantID).Count(&queued)
	if queued != tmDuring+1 {
		t.Fatalf("%d incidents queued for a workflow while Temporal is down, want %d", queued, tmDuring+1)
	}

	// What needs a workflow answers 503 unavailable; reads still work.
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/investigation/" + manual + "/start"},
		{"POST", "/v1/incidents/" + manual + "/resolve"},
	} {
		start := time.Now()
		expectUnavailable(t, e, c.method, c.path, token, nil)
		t.Logf("%s %s while Temporal is down: 503 after %s", c.method, c.path, time.Since(start).Round(time.Millisecond))
	}
	if st := e.call(t, "GET", "/v1/incidents/"+manualDuring, token, nil, nil); st != http.StatusOK {
		t.Errorf("GET an incident while Temporal is down: %d", st)
	}
	upAt := e.endOutage(t, "temporal", downAt, tmOutage, ts.Restart)

	// Every acknowledged incident gets exactly one workflow.
	var incidents int64
	db.Model(&models.Incident{}).Where("tenant_id = ?", tenantID).Count(&incidents)
	if want := int64(tmBefore + tmDuring + 2); incidents != want || len(acked) != tmBefore+tmDuring {
		t.Fatalf("%d incidents (%d alerts acknowledged), want %d", incidents, len(acked), want)
	}
	eventually(t, 2*time.Minute, "every queued incident to get its workflow", func() bool {
		var pending int64
		db.Model(&models.Incident{}).Where("tenant_id = ? AND workflow_started_at IS NULL", tenantID).Count(&pending)
		return pending == 0
	})
	t.Logf("all %d queued workflows started %s after Temporal came back", queued, time.Since(upAt).Round(time.Millisecond))
	query := fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", investigation.IncidentWorkflowName, cfg.TemporalTaskQueue)
	eventually(t, 30*time.Second, "one workflow per incident in visibility", func() bool {
		resp, err := e.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: cfg.TemporalNamespace, Query: query})
		return err == nil && resp.GetCount() == incidents
	})
	for alert, id := range acked {
		if !e.workflowExists(id) {
			t.Errorf("alert %s: incident %s has no workflow", alert, id)
		}
	}

	// Every incident settles: investigated while the quota lasted, open after.
	var byStatus map[string]int64
	eventually(t, 3*time.Minute, "every incident to settle", func() bool {
		byStatus = incidentStatuses(t, e, tenantID)
		return byStatus[models.StatusTriaging]+byStatus[models.StatusInvestigating] == 0
	})
	var passes, completed int64
	db.Model(&models.Investigation{}).Where("tenant_id = ?", tenantID).Count(&passes)
	db.Model(&models.Investigation{}).Where("tenant_id = ? AND status = ?", tenantID, models.InvestigationCompleted).Count(&completed)
	t.Logf("settled: incidents %v; %d passes, %d completed", byStatus, passes, completed)
	if passes != tmInvestigations || completed != passes || byStatus[models.StatusInvestigated] != completed {
		t.Errorf("incidents %v, %d passes (%d completed); want %d completed passes, one per investigated incident",
			byStatus, passes, completed, tmInvestigations)
	}

	// The requests refused during the outage work now.
	if st := e.call(t, "POST", "/v1/incidents/"+manual+"/resolve", token, nil, nil); st != http.StatusOK {
		t.Errorf("resolve after recovery: %d", st)
	}
}
