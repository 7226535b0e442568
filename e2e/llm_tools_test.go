package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/investigation"
)

// toolLLM speaks the chat-completions tools protocol for the metrics agent:
// while tools are offered it sends the scripted tool calls of its turn (the
// turn is the number of assistant tool-call messages already in the
// conversation); otherwise, or once the script ends, it answers with a
// finding citing the first line of a tool reply that starts with
// "memory working set: ". Every other agent answers with no findings at once.
type toolLLM struct {
	script [][]map[string]any // per turn, the tool_calls to send

	mu       sync.Mutex
	requests []toolRequest // the metrics agent's requests, in order
}

// toolRequest is what the fake saw in one of the metrics agent's requests.
type toolRequest struct {
	tools     []string
	toolMsgs  map[string]string // tool_call_id → content
	finalNote bool
}

func (f *toolLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []any  `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	msg := map[string]any{"role": "assistant", "content": `{"findings":[]}`}
	finish := "stop"
	if strings.Contains(req.Messages[0].Content, "You are the METRICS specialist") {
		seen := toolRequest{toolMsgs: map[string]string{}}
		turn := 0
		for _, m := range req.Messages {
			switch {
			case m.Role == "assistant" && len(m.ToolCalls) > 0:
				turn++
			case m.Role == "tool":
				seen.toolMsgs[m.ToolCallID] = m.Content
			case m.Role == "user" && strings.Contains(m.Content, "tool budget of this agent is spent"):
				seen.finalNote = true
			}
		}
		for _, tl := range req.Tools {
			if tl.Type == "function" && tl.Function.Parameters["type"] == "object" {
				seen.tools = append(seen.tools, tl.Function.Name)
			}
		}
		f.mu.Lock()
		f.requests = append(f.requests, seen)
		f.mu.Unlock()
		if len(req.Tools) > 0 && turn < len(f.script) {
			msg, finish = map[string]any{"role": "assistant", "content": nil, "tool_calls": f.script[turn]}, "tool_calls"
		} else {
			findings := []map[string]any{}
			for _, content := range seen.toolMsgs {
				for _, line := range strings.Split(content, "\n") {
					if strings.HasPrefix(line, "memory working set: ") && len(findings) == 0 {
						findings = append(findings, map[string]any{"category": "memory_exhaustion", "stance": "supports", "strength": 0.9,
							"summary": "The working set reached the container's memory limit.", "citation": line})
					}
				}
			}
			body, _ := json.Marshal(map[string]any{"findings": findings})
			msg["content"] = string(body)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-t", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 500, "completion_tokens": 60, "total_tokens": 560},
	})
}

func (f *toolLLM) seen() []toolRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]toolRequest(nil), f.requests...)
}

func call(id, name, args string) map[string]any {
	return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
}

// budgetResult is the coverage of GET /v1/investigation/{id} with budgets.
type budgetResult struct {
	Status   string `json:"status"`
	Category string `json:"category"`
	Evidence []struct {
		AgentRole string `json:"agentRole"`
		Source    *struct {
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"source"`
	} `json:"evidence"`
	Coverage []struct {
		AgentRole string `json:"agentRole"`
		Status    string `json:"status"`
		Reason    string `json:"reason"`
		Budget    *struct {
			Allowed   struct{ ToolCalls, Bytes, Tokens int } `json:"allowed"`
			Used      struct{ ToolCalls, Bytes, Tokens int } `json:"used"`
			Stopped   bool                                   `json:"stopped"`
			StoppedBy string                                 `json:"stoppedBy"`
		} `json:"budget"`
	} `json:"coverage"`
}

// toolEnv starts the stack with the fake LLM and a tool-call budget, a
// tenant whose Prometheus (a real one) holds a memory-exhaustion scenario
// and carries a bearer token, and another tenant with its own source.
func toolEnv(t *testing.T, f *toolLLM, calls int) (e *env, token, tenantID, key, ownID, otherID, secret string) {
	t.Helper()
	prom := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := testConfig(t)
	cfg.LLMBaseURL, cfg.LLMModel, cfg.LLMAPIKey = srv.URL+"/v1", "fake-model", "sk-test"
	cfg.LLMToolCalls = calls
	e = newEnvWith(t, cfg)
	token, tenantID, key = e.tenantWithKey(t, "tools")
	secret = "prom-token-" + auth.RandomToken(8)
	ownID = e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": prom.URL, "auth": map[string]any{"bearerToken": secret}})
	otherToken, _ := e.signup(t, "other tenant")
	otherID = e.addSource(t, otherToken, map[string]any{"name": "their metrics", "type": "prometheus", "url": prom.URL})
	return
}

func (e *env) awaitBudget(t *testing.T, token, incidentID string) budgetResult {
	t.Helper()
	var out budgetResult
	eventually(t, 2*time.Minute, "the investigation of "+incidentID, func() bool {
		out = budgetResult{}
		return e.call(t, "GET", "/v1/investigation/"+incidentID, token, nil, &out) == http.StatusOK && out.Status != "" && out.Status != "running"
	})
	return out
}

// TestLLMAgentChoosesToolsWithinBudget: the metrics agent calls
// query_prometheus once validly and three times in ways it may not — another
// tenant's source, a range outside the incident window, malformed
// arguments. The valid call runs as its own activity against the real
// Prometheus; the others run nothing and come back to the model as tool
// errors, counted against the budget. The model then answers citing the
// tool's answer, the pass names memory exhaustion with evidence naming the
// query, and coverage records the budget, not stopped.
func TestLLMAgentChoosesToolsWithinBudget(t *testing.T) {
	f := &toolLLM{}
	e, token, tenantID, key, own, other, secret := toolEnv(t, f, 6)
	inWindow := time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339)
	f.script = [][]map[string]any{{
		call("call_ok", "query_prometheus", `{"dataSourceId":"`+own+`","entry":"memory_usage","start":"`+inWindow+`"}`),
		call("call_other", "query_prometheus", `{"dataSourceId":"`+other+`","entry":"memory_usage"}`),
		call("call_old", "query_prometheus", `{"dataSourceId":"`+own+`","entry":"memory_usage","start":"2020-01-01T00:00:00Z"}`),
		call("call_bad", "query_prometheus", `{"dataSourceId":`),
	}}
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	res := e.awaitBudget(t, token, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryMemoryExhaustion {
		t.Fatalf("pass: %s %s %+v", res.Status, res.Category, res.Coverage)
	}

	reqs := f.seen()
	if len(reqs) != 2 {
		t.Fatalf("the metrics agent made %d LLM calls, want 2 (tools, then its answer)", len(reqs))
	}
	if !strings.Contains(strings.Join(reqs[0].tools, ","), "query_prometheus") {
		t.Fatalf("tools offered: %v", reqs[0].tools)
	}
	replies := reqs[1].toolMsgs
	for callID, want := range map[string]string{
		"call_ok":    "memory working set: ",
		"call_other": "error: dataSourceId \"" + other + "\" is not one of the listed data sources",
		"call_old":   "error: start 2020-01-01T00:00:00Z is outside the incident window",
		"call_bad":   "error: arguments are not a JSON object",
	} {
		if !strings.Contains(replies[callID], want) {
			t.Errorf("tool reply to %s = %q, want it to contain %q", callID, replies[callID], want)
		}
	}
	if strings.Contains(replies["call_other"], "memory working set") {
		t.Fatal("another tenant's source was queried")
	}

	var metrics *struct {
		Allowed   struct{ ToolCalls, Bytes, Tokens int } `json:"allowed"`
		Used      struct{ ToolCalls, Bytes, Tokens int } `json:"used"`
		Stopped   bool                                   `json:"stopped"`
		StoppedBy string                                 `json:"stoppedBy"`
	}
	for _, c := range res.Coverage {
		if c.AgentRole == analyzer.RoleMetrics {
			metrics = c.Budget
			if strings.Contains(c.Reason, "tool budget reached") {
				t.Errorf("coverage says the budget stopped the agent: %s", c.Reason)
			}
		}
	}
	if metrics == nil || metrics.Allowed.ToolCalls != 6 || metrics.Used.ToolCalls != 4 || metrics.Used.Bytes == 0 ||
		metrics.Used.Tokens != 2*560 || metrics.Stopped {
		t.Fatalf("metrics budget = %+v", metrics)
	}
	cited := false
	for _, ev := range res.Evidence {
		cited = cited || (ev.AgentRole == analyzer.RoleMetrics && ev.Source != nil && ev.Source.Type == "prometheus" &&
			strings.Contains(ev.Source.Query, "container_memory_working_set_bytes"))
	}
	if !cited {
		t.Fatalf("no metrics evidence names the query: %+v", res.Evidence)
	}

	// The trail is in the agent's history: its steps and the one query that ran.
	hist := historyText(t, e, investigation.AgentWorkflowID(id, 1, analyzer.RoleMetrics))
	if strings.Count(hist, `"RunDataSourceQuery"`) != 1 || strings.Count(hist, `"RunAgentStep"`) != 2 {
		t.Fatalf("agent history: %d queries, %d steps", strings.Count(hist, `"RunDataSourceQuery"`), strings.Count(hist, `"RunAgentStep"`))
	}
	if strings.Contains(hist, secret) {
		t.Fatal("the source's bearer token is in workflow history")
	}
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, investigation.AgentWorkflowID(id, 1, analyzer.RoleMetrics), "agent-tool-use.json")
	}
}

// TestLLMAgentStopsAtTheBudget: with a budget of two calls, a model that
// keeps asking for tools gets two run, the rest answered "not run", and is
// then asked for its answer with no tools offered; coverage says the budget
// stopped it.
func TestLLMAgentStopsAtTheBudget(t *testing.T) {
	f := &toolLLM{}
	e, token, tenantID, key, own, _, _ := toolEnv(t, f, 2)
	args := `{"dataSourceId":"` + own + `","entry":"memory_usage"}`
	f.script = [][]map[string]any{
		{call("c1", "query_prometheus", args), call("c2", "query_prometheus", `{"dataSourceId":"`+own+`","entry":"oom_kills"}`), call("c3", "query_prometheus", args)},
		{call("c4", "query_prometheus", args)},
	}
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	res := e.awaitBudget(t, token, id)
	if res.Status != "completed" {
		t.Fatalf("pass: %s %+v", res.Status, res.Coverage)
	}
	reqs := f.seen()
	if len(reqs) != 2 || len(reqs[1].tools) != 0 || !reqs[1].finalNote {
		t.Fatalf("metrics requests = %+v; want the second to offer no tools and ask for the answer", reqs)
	}
	if !strings.Contains(reqs[1].toolMsgs["c3"], "not run: the tool budget of this agent is spent") ||
		!strings.Contains(reqs[1].toolMsgs["c1"], "memory working set: ") {
		t.Fatalf("tool replies = %v", reqs[1].toolMsgs)
	}
	for _, c := range res.Coverage {
		if c.AgentRole != analyzer.RoleMetrics {
			continue
		}
		b := c.Budget
		if b == nil || !b.Stopped || b.StoppedBy != "toolCalls" || b.Used.ToolCalls != 2 || b.Allowed.ToolCalls != 2 {
			t.Fatalf("metrics budget = %+v", b)
		}
		if !strings.Contains(c.Reason, "tool budget reached (toolCalls): 2 of 2 calls") {
			t.Fatalf("coverage reason = %q", c.Reason)
		}
		hist := historyText(t, e, investigation.AgentWorkflowID(id, 1, analyzer.RoleMetrics))
		if n := strings.Count(hist, `"RunDataSourceQuery"`); n != 2 {
			t.Fatalf("%d queries ran, want 2", n)
		}
		return
	}
	t.Fatalf("no metrics coverage: %+v", res.Coverage)
}
