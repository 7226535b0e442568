//go:build faults

package e2e

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// llmOutage is how long the LLM endpoint stays down: 30 s unless
// CAUSEWAY_FAULT_LLM_OUTAGE says otherwise (2m is the length the failure-mode
// document describes).
//
// Why 30 s stands for two minutes: a refused connection fails an agent's call
// at once, so what happens to an agent depends on its retry schedule, not on
// how long the endpoint stays away. Its attempts are spread over about 15 s
// (see withLLMOptions in workflows/options.go); an agent whose schedule ends
// inside the outage has failed, and its pass with it, and nothing a longer
// outage does can change that. An agent whose schedule reaches past the end of
// the outage succeeds on the first attempt after it. Only the first and the
// last ~15 s of an outage therefore decide anything, and 30 s holds both. The
// test does not take that on trust: it requires every pass that began during
// the outage to be final before the endpoint comes back, and the pass that
// straddles the return to have retried.
func llmOutage(t *testing.T) time.Duration {
	t.Helper()
	raw := os.Getenv("CAUSEWAY_FAULT_LLM_OUTAGE")
	if raw == "" {
		return 30 * time.Second
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 20*time.Second {
		t.Fatalf("CAUSEWAY_FAULT_LLM_OUTAGE=%q: want a duration of at least 20s", raw)
	}
	return d
}

// total is how many calls the fake LLM has received.
func (f *fakeLLM) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// TestFaultLLMDown takes the LLM endpoint away (connections refused, calls in
// flight cut) and brings it back at the same address. Every pass ends: one
// whose agents exhausted their retries during the outage ends failed with
// coverage naming the unreachable endpoint for each agent, one that straddles
// the return completes once the endpoint answers, and none stays running. The
// incidents stay workable: a new pass after the outage completes.
func TestFaultLLMDown(t *testing.T) {
	outage := llmOutage(t)
	f := &fakeLLM{calls: map[string]int{}, behavior: map[string]string{}}
	srv := newSwitchableServer(t, f)
	cfg := testConfig(t)
	cfg.LLMBaseURL, cfg.LLMModel, cfg.LLMAPIKey = srv.URL()+"/v1", "fake-model", "sk-test"
	e := newEnvWith(t, cfg)
	token, _ := e.signup(t, "llm-fault")
	roles := analyzer.Roles
	open := func(title string) string {
		return e.openIncident(t, token, title, "Checkout API fails with FATAL: too many connections for role app")
	}
	start := func(id string) {
		eventually(t, 30*time.Second, "start of "+id, func() bool {
			return e.call(t, "POST", "/v1/investigation/"+id+"/start", token, map[string]any{"agents": roles}, nil) == http.StatusAccepted
		})
	}

	// The endpoint is up: a pass completes with every agent.
	before := open("before the outage")
	start(before)
	if res := e.awaitInvestigation(t, token, before, time.Minute); res.Status != models.InvestigationCompleted || completedAgents(res) != len(roles) {
		t.Fatalf("pass before the outage: %+v", res)
	}

	// Calls in flight when the endpoint goes away are cut.
	f.delay = 3 * time.Second
	cut := open("cut in flight")
	callsBefore := f.total()
	start(cut)
	eventually(t, 30*time.Second, "every agent of the pass to be calling the LLM", func() bool { return f.total() == callsBefore+len(roles) })
	srv.Off()
	downAt := time.Now()
	f.delay = 0 // no handler runs while the server is off

	// Passes that begin while the endpoint is down.
	var during []string
	for _, title := range []string{"during the outage 1", "during the outage 2", "during the outage 3"} {
		id := open(title)
		start(id)
		during = append(during, id)
	}
	// A pass that begins shortly before the endpoint comes back: its first
	// attempts fail, a retry after the return succeeds.
	time.Sleep(time.Until(downAt.Add(outage - 5*time.Second)))
	straddle := open("straddling the return")
	start(straddle)
	time.Sleep(time.Until(downAt.Add(outage)))
	srv.On()
	upAt := time.Now()
	t.Logf("LLM endpoint down for %s", upAt.Sub(downAt).Round(time.Millisecond))

	// Every pass ends; those that began during the outage had ended before it
	// was over, so a longer outage could not have changed them.
	failedPasses := 0
	for _, id := range append([]string{cut}, during...) {
		res := e.awaitInvestigation(t, token, id, 2*time.Minute)
		if res.Status != models.InvestigationFailed || res.CompletedAt == nil || !res.CompletedAt.Before(upAt) {
			t.Errorf("pass of %s: %s, completed %v; want failed before the endpoint came back at %s", id, res.Status, res.CompletedAt, upAt)
		}
		for _, c := range res.Coverage {
			if c.Status != models.CoverageFailed || !strings.Contains(c.Reason, "LLMUnavailable") {
				t.Errorf("pass of %s, agent %s: %s %q; want failed naming the unreachable endpoint", id, c.AgentRole, c.Status, c.Reason)
			}
		}
		if len(res.Coverage) != len(roles) {
			t.Errorf("pass of %s: coverage of %d agents, want %d", id, len(res.Coverage), len(roles))
		}
		failedPasses++
	}
	res := e.awaitInvestigation(t, token, straddle, 2*time.Minute)
	if res.Status != models.InvestigationCompleted || completedAgents(res) != len(roles) {
		t.Errorf("pass straddling the return: %+v; want completed by every agent", res)
	}
	retried := e.agentsRetried(t, straddle, roles)
	if retried == 0 {
		t.Errorf("no agent of the straddling pass needed a retry: it did not meet the outage")
	}
	t.Logf("passes: 1 completed before, %d failed during the outage (all final before the return), "+
		"1 straddling the return completed (%d of %d agents retried)", failedPasses, retried, len(roles))

	// Nothing is stuck: no incident is left investigating, and an incident whose
	// pass failed can be investigated again now.
	for _, id := range append([]string{cut, straddle}, during...) {
		var inc struct {
			Status string `json:"status"`
		}
		e.call(t, "GET", "/v1/incidents/"+id, token, nil, &inc)
		if inc.Status == models.StatusInvestigating {
			t.Errorf("incident %s is still investigating", id)
		}
	}
	start(during[0])
	again := e.awaitInvestigationPass(t, token, during[0], 2, time.Minute)
	if again.Status != models.InvestigationCompleted || completedAgents(again) != len(roles) {
		t.Errorf("new pass after the outage: %+v", again)
	}
	t.Logf("LLM calls received: %d (%v)", f.total(), f.calls)
}

func completedAgents(res investigationJSON) int {
	n := 0
	for _, c := range res.Coverage {
		if c.Status == models.CoverageCompleted {
			n++
		}
	}
	return n
}

// agentsRetried counts the agents of the incident's first pass whose report
// came from a second or later attempt, read from their workflows' histories.
func (e *env) agentsRetried(t *testing.T, incidentID string, roles []string) int {
	t.Helper()
	n := 0
	for _, role := range roles {
		if _, attempts := e.activityAttempts(t, investigation.AgentWorkflowID(incidentID, 1, role)); attempts > 1 {
			n++
		}
	}
	return n
}

// awaitInvestigationPass waits for pass number pass of the incident to end.
func (e *env) awaitInvestigationPass(t *testing.T, token, incidentID string, pass int, within time.Duration) investigationJSON {
	t.Helper()
	want := investigation.InvestigationID(incidentID, pass)
	var out investigationJSON
	eventually(t, within, "pass "+want, func() bool {
		out = investigationJSON{}
		st := e.call(t, "GET", "/v1/investigation/"+incidentID, token, nil, &out)
		return st == http.StatusOK && out.InvestigationID == want && out.Status != models.InvestigationRunning
	})
	return out
}
