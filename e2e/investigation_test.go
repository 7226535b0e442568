package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/investigation"
)

// investigationJSON is the body of GET /v1/investigation/{id}.
type investigationJSON struct {
	IncidentID      string   `json:"incidentId"`
	InvestigationID string   `json:"investigationId"`
	Status          string   `json:"status"`
	RootCause       *string  `json:"rootCause"`
	Confidence      float64  `json:"confidence"`
	Category        string   `json:"category"`
	Model           string   `json:"model"`
	Agents          []string `json:"agents"`
	Evidence        []struct {
		AgentRole string `json:"agentRole"`
		Content   string `json:"content"`
	} `json:"evidence"`
	Coverage []struct {
		AgentRole string `json:"agentRole"`
		Status    string `json:"status"`
		Reason    string `json:"reason"`
	} `json:"coverage"`
	StartedAt   time.Time  `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt"`
}

// openIncident creates a manual incident and returns its id.
func (e *env) openIncident(t *testing.T, token, title, desc string) string {
	t.Helper()
	var inc struct {
		IncidentID string `json:"incidentId"`
	}
	if st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{"title": title, "description": desc}, &inc); st != http.StatusCreated {
		t.Fatalf("create incident: status %d", st)
	}
	return inc.IncidentID
}

// awaitInvestigation polls the result until the pass leaves running.
func (e *env) awaitInvestigation(t *testing.T, token, incidentID string, within time.Duration) investigationJSON {
	t.Helper()
	var out investigationJSON
	eventually(t, within, "investigation of "+incidentID+" to finish", func() bool {
		out = investigationJSON{}
		st := e.call(t, "GET", "/v1/investigation/"+incidentID, token, nil, &out)
		return st == http.StatusOK && out.Status != "running"
	})
	return out
}

// e2eScenario is the public scenario the offline end-to-end test investigates:
// a database incident whose label names two deciding agents, so the answer
// must rest on evidence from more than one of them.
const e2eScenario = "db_connection_exhaustion.json"

// loadE2EScenario reads e2eScenario from the public scenarios.
func loadE2EScenario(t *testing.T) analyzer.Scenario {
	t.Helper()
	s, err := analyzer.LoadScenario(filepath.Join(testenv.ScenariosDir(t), e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Expected.Agents) < 2 {
		t.Fatalf("%s names %d deciding agents; the test needs a multi-agent scenario", e2eScenario, len(s.Expected.Agents))
	}
	return s
}

func TestInvestigationOfflineEndToEnd(t *testing.T) {
	s := loadE2EScenario(t)
	e := newEnv(t)
	token, _ := e.signup(t, "Acme")
	id := e.openIncident(t, token, s.Alert.Title, s.Alert.Description)

	if st := e.call(t, "GET", "/v1/investigation/"+id, token, nil, nil); st != http.StatusNotFound {
		t.Fatalf("before start: status %d, want 404", st)
	}
	if st := e.call(t, "POST", "/v1/investigation/"+id+"/start", token, map[string]any{"agents": []string{"logs", "oracle"}}, nil); st != http.StatusBadRequest {
		t.Fatalf("unknown agent: status %d, want 400", st)
	}
	var started struct {
		IncidentID, InvestigationID, Status string
	}
	scenarioContext := strings.Join(s.Context, "\n\n")
	eventually(t, 30*time.Second, "start accepted", func() bool {
		return e.call(t, "POST", "/v1/investigation/"+id+"/start", token, map[string]any{"context": scenarioContext}, &started) == http.StatusAccepted
	})
	if started.Status != "investigating" || started.InvestigationID == "" {
		t.Fatalf("start answer %+v", started)
	}
	var conflict struct{ Error string }
	if st := e.call(t, "POST", "/v1/investigation/"+id+"/start", token, map[string]any{"agents": []string{"logs"}}, &conflict); st != http.StatusConflict && st != http.StatusAccepted {
		t.Fatalf("second start: status %d", st)
	} else if st == http.StatusConflict && conflict.Error != "investigation_in_progress" {
		t.Fatalf("second start: error %q", conflict.Error)
	}

	res := e.awaitInvestigation(t, token, id, time.Minute)
	if res.Status != "completed" || res.RootCause == nil || res.Model != "offline-analyzer" {
		t.Fatalf("result %+v", res)
	}
	if res.Category != s.Expected.Category {
		t.Fatalf("%s: category %q, the scenario's label is %q", s.ID, res.Category, s.Expected.Category)
	}
	roles := map[string]bool{}
	for _, ev := range res.Evidence {
		roles[ev.AgentRole] = true
	}
	if len(roles) < 2 {
		t.Fatalf("evidence from %d agents, want ≥ 2: %+v", len(roles), res.Evidence)
	}

	// Context with reinvestigate starts pass 2 over all context; a note that
	// rules out a deploy does not change what the evidence says.
	var ctxOut struct {
		Reinvestigating bool `json:"reinvestigating"`
	}
	if st := e.call(t, "POST", "/v1/investigation/"+id+"/context", token, map[string]any{"context": "No deploys in the last 24h.", "reinvestigate": true}, &ctxOut); st != http.StatusOK || !ctxOut.Reinvestigating {
		t.Fatalf("context: status %d %+v", st, ctxOut)
	}
	var second investigationJSON
	eventually(t, time.Minute, "the second pass to finish", func() bool {
		second = investigationJSON{}
		st := e.call(t, "GET", "/v1/investigation/"+id, token, nil, &second)
		return st == http.StatusOK && second.InvestigationID != res.InvestigationID && second.Status != "running"
	})
	if second.Status != "completed" || second.Category != s.Expected.Category {
		t.Fatalf("second pass %+v: want completed with category %q", second, s.Expected.Category)
	}
	var resolved struct{ Status string }
	if st := e.call(t, "POST", "/v1/incidents/"+id+"/resolve", token, map[string]string{"note": "done"}, &resolved); st != http.StatusOK {
		t.Fatalf("resolve: status %d", st)
	}
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, investigation.IncidentWorkflowID(id), "incident.json")
		e.writeHistory(t, investigation.InvestigationWorkflowID(id, 1), "investigation.json")
	}
}

// writeHistory exports a finished workflow's history for the replay tests.
func (e *env) writeHistory(t *testing.T, workflowID, name string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 30*time.Second, workflowID+" to close", func() bool {
		d, err := e.Temporal.DescribeWorkflowExecution(ctx, workflowID, "")
		return err == nil && d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(e.history(t, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(repoFile("worker", "testdata", "histories", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// history is a workflow's whole history as the server stores it.
func (e *env) history(t testing.TB, workflowID string) *historypb.History {
	t.Helper()
	it := e.Temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	return hist
}

// fakeLLM speaks chat-completions. Each agent role behaves as configured:
// "ok" answers with a cited finding, "429" is rate limited once then answers,
// "malformed" never returns JSON, "refuse" refuses. delay is added to every call.
type fakeLLM struct {
	mu       sync.Mutex
	behavior map[string]string
	calls    map[string]int
	delay    time.Duration
	served   []llmCall // every call's role and times, for tracePass
}

// llmCall is one request the fake LLM served.
type llmCall struct {
	role       string
	start, end time.Time
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	role := ""
	for _, k := range analyzer.Roles {
		if len(req.Messages) > 0 && strings.Contains(req.Messages[0].Content, "You are the "+strings.ToUpper(k)+" specialist") {
			role = k
		}
	}
	f.mu.Lock()
	f.calls[role]++
	n := f.calls[role]
	f.mu.Unlock()
	start := time.Now()
	defer func() {
		f.mu.Lock()
		f.served = append(f.served, llmCall{role, start, time.Now()})
		f.mu.Unlock()
	}()
	time.Sleep(f.delay)
	msg := map[string]any{"role": "assistant"}
	switch f.behavior[role] {
	case "429":
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down","type":"rate_limit"}}`))
			return
		}
		msg["content"] = finding(role)
	case "malformed":
		msg["content"] = "Sure! The root cause is probably the database."
	case "refuse":
		msg["content"] = ""
		msg["refusal"] = "I can't help with that."
	default:
		msg["content"] = finding(role)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

func finding(role string) string {
	return `{"findings":[{"category":"db_connection_exhaustion","stance":"supports","strength":0.9,` +
		`"summary":"The pool is exhausted (` + role + `).","citation":"too many connections"}]}`
}

// newLLMEnv is an environment whose agents call the chat-completions server llm.
func newLLMEnv(t *testing.T, llm http.Handler) *env {
	srv := httptest.NewServer(llm)
	t.Cleanup(srv.Close)
	cfg := testConfig(t)
	cfg.LLMBaseURL, cfg.LLMModel, cfg.LLMAPIKey = srv.URL+"/v1", "fake-model", "sk-test"
	return newEnvWith(t, cfg)
}

func TestInvestigationLLMPath(t *testing.T) {
	f := &fakeLLM{calls: map[string]int{}, behavior: map[string]string{
		"database": "ok", "logs": "429", "metrics": "malformed", "network": "refuse",
	}}
	e := newLLMEnv(t, f)
	token, _ := e.signup(t, "Acme")
	id := e.openIncident(t, token, "Checkout errors", "Checkout API fails with FATAL: too many connections for role app")
	eventually(t, 30*time.Second, "start accepted", func() bool {
		return e.call(t, "POST", "/v1/investigation/"+id+"/start", token,
			map[string]any{"agents": []string{"network", "metrics", "logs", "database"}}, nil) == http.StatusAccepted
	})
	res := e.awaitInvestigation(t, token, id, 2*time.Minute)
	if res.Status != "completed" || res.Model != "fake-model" || res.Category != "db_connection_exhaustion" {
		t.Fatalf("result %+v", res)
	}
	want := map[string]string{"database": "completed", "logs": "completed", "metrics": "failed", "network": "failed"}
	for _, c := range res.Coverage {
		if want[c.AgentRole] != c.Status {
			t.Errorf("coverage %s: %s (%s), want %s", c.AgentRole, c.Status, c.Reason, want[c.AgentRole])
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls["logs"] != 2 || f.calls["metrics"] != 2 || f.calls["network"] != 1 {
		t.Errorf("calls %v: want logs retried once, metrics repaired once, refusal not retried", f.calls)
	}
}

// BenchmarkInvestigationOverhead measures a pass end to end through the API
// against an LLM that takes 300 ms per call. The critical path is the slowest
// agent (one call) plus synthesis (well under a millisecond), so the rest of
// the time is orchestration overhead. The incident and its workflow exist
// before the clock starts, so only the pass is measured: wall is from the start
// request until the pass's workflow has closed and a GET returns its result;
// server is the pass's own startedAt → completedAt as the workflows recorded
// them. CAUSEWAY_BENCH_TRACE=1 prints the last pass's history events and LLM
// calls in time order.
func BenchmarkInvestigationOverhead(b *testing.B) {
	f := &fakeLLM{calls: map[string]int{}, behavior: map[string]string{}, delay: 300 * time.Millisecond}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := benchEnv(b, srv.URL+"/v1")
	var signup struct {
		AccessToken string `json:"accessToken"`
	}
	e.call(b, "POST", "/auth/signup", "", map[string]string{
		"tenantName": "Bench", "email": "bench@example.com", "password": "correct horse battery", "name": "B"}, &signup)
	token := signup.AccessToken
	var wallTotal, serverTotal time.Duration
	var last string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := benchIncident(b, e, token)
		b.StartTimer()
		start := time.Now()
		if st := e.call(b, "POST", "/v1/investigation/"+id+"/start", token,
			map[string]any{"agents": []string{"database", "logs", "metrics", "network"}}, nil); st != http.StatusAccepted {
			b.Fatalf("start: status %d", st)
		}
		awaitClosed(b, e, investigation.InvestigationWorkflowID(id, 1))
		var out investigationJSON
		e.call(b, "GET", "/v1/investigation/"+id, token, nil, &out)
		wallTotal += time.Since(start)
		if out.Status != "completed" || out.CompletedAt == nil {
			b.Fatalf("pass %s", out.Status)
		}
		serverTotal += out.CompletedAt.Sub(out.StartedAt)
		last = id
	}
	b.StopTimer()
	wall, server := wallTotal/time.Duration(b.N), serverTotal/time.Duration(b.N)
	critical := f.delay
	b.ReportMetric(float64(wall.Milliseconds()), "wall-ms/pass")
	b.ReportMetric(float64(server.Milliseconds()), "server-ms/pass")
	b.ReportMetric(float64(critical.Milliseconds()), "critical-ms/pass")
	b.ReportMetric(100*float64(wall-critical)/float64(critical), "overhead-%")
	b.ReportMetric(100*float64(server-critical)/float64(critical), "server-overhead-%")
	if os.Getenv("CAUSEWAY_BENCH_TRACE") != "" {
		tracePass(b, e, f, last, []string{"database", "logs", "metrics", "network"})
	}
}

// awaitClosed waits for a workflow to close with a long poll rather than a busy
// loop that would compete with the pass for CPU. The start update answers once
// the child's start is recorded, a moment before the child exists.
func awaitClosed(b *testing.B, e *env, workflowID string) {
	for {
		err := e.Temporal.GetWorkflow(context.Background(), workflowID, "").Get(context.Background(), nil)
		var missing *serviceerror.NotFound
		if !errors.As(err, &missing) {
			if err != nil {
				b.Fatal(err)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// benchIncident opens a manual incident and waits until its workflow answers a
// query, so the benchmark times the pass rather than the incident's creation.
func benchIncident(b *testing.B, e *env, token string) string {
	var inc struct {
		IncidentID string `json:"incidentId"`
	}
	e.call(b, "POST", "/v1/incidents/chat", token, map[string]string{
		"title": "Checkout errors", "description": "FATAL: too many connections for role app"}, &inc)
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := e.Temporal.QueryWorkflow(context.Background(), investigation.IncidentWorkflowID(inc.IncidentID), "", investigation.QueryState)
		if err == nil && v.HasValue() {
			return inc.IncidentID
		}
		if time.Now().After(deadline) {
			b.Fatalf("incident workflow of %s did not start: %v", inc.IncidentID, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tracePass logs every history event of one pass (incident, investigation and
// agent workflows) in time order, with the gap to the previous event, to show
// where orchestration spends its time.
func tracePass(b *testing.B, e *env, f *fakeLLM, incidentID string, roles []string) {
	ids := [][2]string{
		{"incident", investigation.IncidentWorkflowID(incidentID)},
		{"investigation", investigation.InvestigationWorkflowID(incidentID, 1)},
	}
	for _, r := range roles {
		ids = append(ids, [2]string{"agent/" + r, investigation.AgentWorkflowID(incidentID, 1, r)})
	}
	var extra []traceRow
	n := len(f.served) - len(roles) // the last pass's calls
	for _, c := range f.served[max(n, 0):] {
		extra = append(extra, traceRow{c.start, "llm/" + c.role + " call started"}, traceRow{c.end, "llm/" + c.role + " call answered"})
	}
	traceWorkflows(b, e.Temporal, ids, extra)
}

// traceRow is one line of a trace: something that happened, and when.
type traceRow struct {
	at   time.Time
	name string
}

// traceWorkflows prints the history events of the labelled workflows, and the
// extra rows, in time order with the gap to the previous row.
func traceWorkflows(b *testing.B, c client.Client, ids [][2]string, extra []traceRow) {
	rows := slices.Clone(extra)
	for _, id := range ids {
		it := c.GetWorkflowHistory(context.Background(), id[1], "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			rows = append(rows, traceRow{ev.GetEventTime().AsTime(), fmt.Sprintf("%-14s %3d %s", id[0], ev.GetEventId(), ev.GetEventType())})
		}
	}
	slices.SortStableFunc(rows, func(x, y traceRow) int { return x.at.Compare(y.at) })
	prev := rows[0].at
	for _, r := range rows {
		fmt.Fprintf(os.Stderr, "%+8.1fms %+7.1fms  %s\n", float64(r.at.Sub(rows[0].at).Microseconds())/1e3, float64(r.at.Sub(prev).Microseconds())/1e3, r.name)
		prev = r.at
	}
}

// benchEnv is an environment whose agents call the LLM at llmURL, with quotas off
// so a benchmark can run as many passes as it likes.
func benchEnv(b *testing.B, llmURL string) *env {
	cfg := testConfig(b)
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 0, 0
	cfg.LLMBaseURL, cfg.LLMModel = llmURL, "fake-model"
	return newEnvWith(b, cfg)
}
