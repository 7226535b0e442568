//go:build faults

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// Shape of the PostgreSQL outage: a burst of pgAlerts unique alerts from
// pgSenders goroutines, the database crashed once pgCrashAfter of them were
// answered, and kept down for pgOutage while the rest of the burst and the
// other checks hit it. pgPassesInFlight incidents have an investigation pass
// running when it goes, and pgInvestigations is the tenant's investigation
// quota, so the alerts' workflows investigate a few and park the rest open.
const (
	pgAlerts         = 240
	pgSenders        = 8
	pgCrashAfter     = 80
	pgOutage         = 30 * time.Second
	pgInvestigations = 12
	pgPassesInFlight = 3
)

// burst sends one signed custom alert per body from senders goroutines and
// calls after with the number of answers so far after each answer.
func burst(c *http.Client, url, tenantID, key, secret string, bodies [][]byte, senders int, after func(answered int64)) []crashOutcome {
	out := make([]crashOutcome, len(bodies))
	var next, answered atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				out[i] = postAlert(c, url, tenantID, key, secret, bodies[i])
				if out[i].status != 0 && after != nil {
					after(answered.Add(1))
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// expectUnavailable checks that a request answered 503 with the unavailable
// code and a Retry-After, and returns what it answered for the log.
func expectUnavailable(t *testing.T, e *env, method, path, token string, body any) int {
	t.Helper()
	st, raw, header := e.raw(t, method, path, token, body)
	var eb errorBody
	_ = json.Unmarshal(raw, &eb)
	if st != http.StatusServiceUnavailable || eb.Error != "unavailable" || header.Get("Retry-After") == "" {
		t.Errorf("%s %s while the database is down: %d %s, want 503 unavailable with Retry-After", method, path, st, raw)
	}
	return st
}

// TestFaultPostgresStoppedMidBurst crashes the database in the middle of a burst
// of webhook alerts and brings it back, without restarting Causeway. While it is
// down every write and read answers 503 unavailable (never 500, never a 401 for
// a good key) and /health/detailed says unhealthy; afterwards every alert is
// recorded exactly once with its first timeline entry and the quota it spent,
// every incident gets exactly one workflow, and every workflow settles.
func TestFaultPostgresStoppedMidBurst(t *testing.T) {
	pg := startPostgres(t)
	// Agents answer from an LLM that takes a few seconds, so the passes begun
	// before the burst are waiting for it when the database goes.
	llm := &fakeLLM{calls: map[string]int{}, behavior: map[string]string{}, delay: 4 * time.Second}
	llmSrv := httptest.NewServer(llm)
	t.Cleanup(llmSrv.Close)
	cfg := testConfig(t)
	cfg.DatabaseURL = pg.URL()
	cfg.QuotaInvestigationsPerMonth = pgInvestigations
	cfg.LLMBaseURL, cfg.LLMModel, cfg.LLMAPIKey = llmSrv.URL+"/v1", "fake-model", "sk-test"
	e := newEnvWith(t, cfg)
	token, tenantID := e.signup(t, "pg-fault")
	key, secret := e.hookKey(t, token)
	// A second key is never used before the outage, so it is not in the
	// verified-key cache and its first delivery needs the database.
	spareKey, spareSecret := e.hookKey(t, token)
	e.awaitHealth(t, 10*time.Second, "healthy", map[string]string{"postgres": "healthy"})

	run := strings.ToLower(fmt.Sprint(time.Now().UnixNano() % 1e9))
	alertID := func(i int) string { return fmt.Sprintf("pg-%s-%03d", run, i) }
	bodies := make([][]byte, pgAlerts)
	for i := range bodies {
		bodies[i], _ = json.Marshal(firing(alertID(i)))
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: pgSenders}}
	t.Cleanup(client.CloseIdleConnections)

	// Investigation passes in flight when the database goes: their agents
	// read and write it.
	var inFlight []string
	for i := range pgPassesInFlight {
		id := e.openIncident(t, token, fmt.Sprintf("Checkout errors %d", i), "Checkout API fails with FATAL: too many connections for role app")
		if st := e.call(t, "POST", "/v1/investigation/"+id+"/start", token, map[string]any{"agents": analyzer.Roles}, nil); st != http.StatusAccepted {
			t.Fatalf("start pass: %d", st)
		}
		inFlight = append(inFlight, id)
	}
	eventually(t, 30*time.Second, "every agent of those passes to be asking the LLM", func() bool {
		return llm.total() == pgPassesInFlight*len(analyzer.Roles)
	})

	crashed := make(chan struct{})
	var once sync.Once
	outcomes := burst(client, e.URL, tenantID, key, secret, bodies, pgSenders, func(n int64) {
		if n == pgCrashAfter {
			once.Do(func() { pg.Crash(); close(crashed) })
		}
	})
	downAt := time.Now()
	select {
	case <-crashed:
	default:
		t.Fatal("the burst ended before the crash")
	}

	// Tally the burst: acknowledged (202), or refused as unavailable (503).
	counts := statusCounts{}
	acked := map[int]string{}
	var retry []int
	for i, o := range outcomes {
		counts[o.status]++
		switch o.status {
		case http.StatusAccepted:
			if o.incidentID == "" {
				t.Fatalf("alert %d: 202 without an incident id", i)
			}
			acked[i] = o.incidentID
		case http.StatusServiceUnavailable:
			retry = append(retry, i)
		default:
			t.Errorf("alert %d during the crash: status %d (%v), want 202 or 503", i, o.status, o.err)
			retry = append(retry, i)
		}
	}
	t.Logf("burst of %d: %s", pgAlerts, counts)
	if len(acked) < pgCrashAfter || counts[http.StatusServiceUnavailable] < pgAlerts/2 {
		t.Fatalf("the crash did not land mid-burst: %s", counts)
	}

	// While the database is down: health says so, and every endpoint that needs
	// it answers 503 unavailable.
	h := e.awaitHealth(t, 10*time.Second, "unhealthy", map[string]string{"postgres": "unhealthy"})
	t.Logf("health while down: %+v", h)
	refused := 0
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/incidents/chat", map[string]string{"title": "Disk full", "description": "node-3 disk is 100% full"}},
		{"GET", "/v1/incidents", nil},
		{"POST", "/v1/api-keys", map[string]string{"name": "during outage"}},
		{"POST", "/v1/runbooks", map[string]any{"name": "r", "description": "d", "match": map[string]any{"categories": []string{"bad_deployment"}},
			"steps": []any{map[string]any{"type": "wait", "description": "w", "params": map[string]any{"duration": "1s"}}}}},
		{"GET", "/v1/analytics/incidents?period=7d", nil},
		{"POST", "/auth/login", map[string]string{"email": "nobody@example.com", "password": "correct horse battery"}},
	} {
		expectUnavailable(t, e, c.method, c.path, token, c.body)
		refused++
	}
	for _, k := range []struct{ what, key, secret string }{{"verified", key, secret}, {"not yet verified", spareKey, spareSecret}} {
		i := len(bodies)
		bodies = append(bodies, mustJSON(firing(alertID(i))))
		if o := postAlert(client, e.URL, tenantID, k.key, k.secret, bodies[i]); o.status != http.StatusServiceUnavailable {
			t.Errorf("alert with a %s key while the database is down: %d, want 503", k.what, o.status)
		}
		retry = append(retry, i)
		refused++
	}
	t.Logf("while down: %d further requests, each answered 503 unavailable", refused)
	// Back up, with the same Causeway processes.
	e.endOutage(t, "postgres", downAt, pgOutage, pg.Restart)

	// Retrying every unacknowledged alert records it once: 202 if the crash lost
	// it, 409 naming the incident if its commit made it before the crash.
	committedBefore := 0
	for _, i := range retry {
		o := postAlert(client, e.URL, tenantID, key, secret, bodies[i])
		switch o.status {
		case http.StatusAccepted:
		case http.StatusConflict:
			committedBefore++
		default:
			t.Fatalf("retry of alert %d after recovery: %d %v, want 202 or 409", i, o.status, o.err)
		}
		again := postAlert(client, e.URL, tenantID, key, secret, bodies[i])
		if again.status != http.StatusConflict || again.incidentID != o.incidentID {
			t.Fatalf("second retry of alert %d: %d %q, want 409 naming %s", i, again.status, again.incidentID, o.incidentID)
		}
		acked[i] = o.incidentID
	}
	t.Logf("retried %d alerts after recovery: %d had been committed before the crash took the answer (409), %d recorded now",
		len(retry), committedBefore, len(retry)-committedBefore)
	e.openIncident(t, token, "Disk full", "node-3 disk is 100% full")
	// The passes in flight when the database went down waited for it: their
	// agents could not record their reports, retried, and those that ran out of
	// attempts during the outage asked again once it was over; every agent
	// reported.
	met, waited, whole := 0, 0, 0
	for _, id := range inFlight {
		res := e.awaitInvestigation(t, token, id, 2*time.Minute)
		if res.Status != models.InvestigationCompleted || completedAgents(res) != len(analyzer.Roles) {
			t.Errorf("pass of %s in flight at the crash: %s, coverage %+v; want completed by every agent", id, res.Status, res.Coverage)
		} else {
			whole++
		}
		for _, role := range analyzer.Roles {
			runs, attempts := e.activityAttempts(t, investigation.AgentWorkflowID(id, 1, role))
			if runs > 1 || attempts > 1 {
				met++
			}
			if runs > 1 {
				waited++
			}
		}
	}
	if agents := pgPassesInFlight * len(analyzer.Roles); met != agents || waited == 0 {
		t.Errorf("%d of %d agents met the outage, %d outlasted their retries: the crash did not catch the passes in flight", met, agents, waited)
	}
	t.Logf("passes in flight at the crash: %d of %d completed by every agent; %d agents met the outage, %d of them waited past their retries",
		whole, len(inFlight), met, waited)
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, investigation.AgentWorkflowID(inFlight[0], 1, analyzer.RoleDatabase), "agent-waited-for-store.json")
	}

	// Nothing half-written: one incident per alert, the one its 202 named; one
	// first timeline entry per incident and none without its incident; the
	// event quota spent exactly once per incident.
	ctx := context.Background()
	db := e.Store.DB().WithContext(ctx)
	var perAlert []struct {
		SourceAlertID string
		N             int
		ID            string
	}
	if err := db.Model(&models.Incident{}).Select("source_alert_id, COUNT(*) AS n, MIN(id) AS id").
		Where("tenant_id = ? AND source = ?", tenantID, "custom").Group("source_alert_id").Scan(&perAlert).Error; err != nil {
		t.Fatal(err)
	}
	if len(perAlert) != len(bodies) {
		t.Errorf("%d alerts recorded, want %d", len(perAlert), len(bodies))
	}
	byAlert := map[string]string{}
	for _, r := range perAlert {
		if r.N != 1 {
			t.Errorf("alert %s has %d incidents", r.SourceAlertID, r.N)
		}
		byAlert[r.SourceAlertID] = r.ID
	}
	for i, id := range acked {
		if byAlert[alertID(i)] != id {
			t.Errorf("alert %d: acknowledged as %s, recorded as %q", i, id, byAlert[alertID(i)])
		}
	}
	var incidents, firstEntries, orphanEntries int64
	db.Model(&models.Incident{}).Where("tenant_id = ?", tenantID).Count(&incidents)
	db.Raw("SELECT COUNT(*) FROM incident_timeline t JOIN incidents i ON i.id = t.incident_id "+
		"WHERE i.tenant_id = ? AND t.kind IN ('alert_received', 'created')", tenantID).Scan(&firstEntries)
	db.Raw("SELECT COUNT(*) FROM incident_timeline t LEFT JOIN incidents i ON i.id = t.incident_id "+
		"WHERE t.tenant_id = ? AND i.id IS NULL", tenantID).Scan(&orphanEntries)
	var usage models.UsageCounter
	if err := db.Where("tenant_id = ?", tenantID).First(&usage).Error; err != nil {
		t.Fatal(err)
	}
	wantIncidents := int64(len(bodies) + pgPassesInFlight + 1)
	if incidents != wantIncidents || firstEntries != incidents || orphanEntries != 0 || int64(usage.Events) != incidents {
		t.Errorf("incidents %d (want %d), first timeline entries %d, orphan entries %d, events spent %d",
			incidents, wantIncidents, firstEntries, orphanEntries, usage.Events)
	}
	t.Logf("recorded: %d incidents (%d alerts + %d manual), %d first entries, %d orphans, %d events spent",
		incidents, len(bodies), pgPassesInFlight+1, firstEntries, orphanEntries, usage.Events)

	// Every incident gets exactly one workflow, and every workflow settles:
	// investigated while the quota lasted, open after it (none left triaging or
	// investigating), each pass recorded once.
	eventually(t, 90*time.Second, "every incident to have its workflow", func() bool {
		var pending int64
		db.Model(&models.Incident{}).Where("tenant_id = ? AND workflow_started_at IS NULL", tenantID).Count(&pending)
		return pending == 0
	})
	query := fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", investigation.IncidentWorkflowName, cfg.TemporalTaskQueue)
	eventually(t, 30*time.Second, "one workflow per incident in visibility", func() bool {
		resp, err := e.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: cfg.TemporalNamespace, Query: query})
		return err == nil && resp.GetCount() == incidents
	})
	var byStatus map[string]int64
	eventually(t, 3*time.Minute, "every incident to settle", func() bool {
		byStatus = incidentStatuses(t, e, tenantID)
		return byStatus[models.StatusTriaging]+byStatus[models.StatusInvestigating] == 0
	})
	var invs []models.Investigation
	db.Where("tenant_id = ?", tenantID).Find(&invs)
	invByStatus := map[string]int{}
	for _, inv := range invs {
		invByStatus[inv.Status]++
	}
	if err := db.Where("tenant_id = ?", tenantID).First(&usage).Error; err != nil {
		t.Fatal(err)
	}
	t.Logf("settled: incidents %v; passes %v; investigations spent %d", byStatus, invByStatus, usage.Investigations)
	if len(invs) != pgInvestigations || usage.Investigations != pgInvestigations || invByStatus[models.InvestigationRunning] != 0 {
		t.Errorf("%d passes %v, %d investigations spent; want %d, none running", len(invs), invByStatus, usage.Investigations, pgInvestigations)
	}
	if byStatus[models.StatusOpen] != incidents-int64(invByStatus[models.InvestigationCompleted]) {
		t.Errorf("incidents %v: want every incident without a completed pass open", byStatus)
	}
}

// incidentStatuses counts the tenant's incidents by status.
func incidentStatuses(t *testing.T, e *env, tenantID string) map[string]int64 {
	t.Helper()
	var rows []struct {
		Status string
		N      int64
	}
	if err := e.Store.DB().Model(&models.Incident{}).Select("status, COUNT(*) AS n").
		Where("tenant_id = ?", tenantID).Group("status").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// activityAttempts reads a workflow's history: how many activities it
// scheduled (retries are attempts of one activity, not new ones) and the
// highest attempt any of them started.
func (e *env) activityAttempts(t *testing.T, workflowID string) (scheduled, maxAttempt int) {
	t.Helper()
	iter := e.Temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		if ev.GetActivityTaskScheduledEventAttributes() != nil {
			scheduled++
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			maxAttempt = max(maxAttempt, int(a.GetAttempt()))
		}
	}
	return scheduled, maxAttempt
}
