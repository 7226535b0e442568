package llm

import (
	"context"
	"net/http"
	"testing"

	"github.com/causeway/causeway/analyzer"
)

// toolCalls answers with an assistant message calling tools, as the
// chat-completions API does (content null, finish_reason "tool_calls").
func toolCalls(calls ...[3]string) func(w http.ResponseWriter) {
	var tc []any
	for _, c := range calls {
		tc = append(tc, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
	}
	return completionWith(map[string]any{"role": "assistant", "content": nil, "tool_calls": tc}, "tool_calls", 300, 40)
}

func TestInvestigateStepSpeaksToolProtocol(t *testing.T) {
	f := newFake(t,
		toolCalls([3]string{"call_1", "query_postgres", `{"dataSourceId":"ds_pg","entry":"connections"}`}),
		answer(goodFindings, 900, 120))
	c := f.client(t)
	tools := []ToolSpec{{Name: "query_postgres", Description: "read-only diagnostics",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"dataSourceId": map[string]any{"type": "string"}}, "required": []string{"dataSourceId"}}}}

	step, usage, err := c.InvestigateStep(context.Background(), analyzer.RoleDatabase, testInput(), "Data sources: ds_pg (postgres)", tools, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if step.Done || len(step.Calls) != 1 || step.Calls[0] != (ToolCall{ID: "call_1", Name: "query_postgres", Arguments: `{"dataSourceId":"ds_pg","entry":"connections"}`}) {
		t.Fatalf("step = %+v", step)
	}
	if usage.TotalTokens != 340 {
		t.Fatalf("usage = %+v", usage)
	}
	req := f.requests()[0].body
	offered, _ := req["tools"].([]any)
	if len(offered) != 1 {
		t.Fatalf("tools sent = %v", req["tools"])
	}
	fn := offered[0].(map[string]any)["function"].(map[string]any)
	if offered[0].(map[string]any)["type"] != "function" || fn["name"] != "query_postgres" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Fatalf("tool sent = %v", offered[0])
	}
	if _, ok := req["response_format"]; ok {
		t.Fatalf("a step offering tools asked for a JSON response format: %v", req["response_format"])
	}

	turns := []ToolTurn{{Calls: step.Calls, Replies: []string{"client connections: 97 of max_connections 100"}}}
	step, _, err = c.InvestigateStep(context.Background(), analyzer.RoleDatabase, testInput(), "Data sources: ds_pg (postgres)", tools, turns, true)
	if err != nil {
		t.Fatal(err)
	}
	if !step.Done || len(step.Report.Findings) != 3 {
		t.Fatalf("final step = %+v", step)
	}
	req = f.requests()[1].body
	if _, ok := req["tools"]; ok {
		t.Fatal("the final step offered tools")
	}
	msgs := req["messages"].([]any)
	asst := msgs[2].(map[string]any)
	call := asst["tool_calls"].([]any)[0].(map[string]any)
	if asst["role"] != "assistant" || call["id"] != "call_1" || call["function"].(map[string]any)["arguments"] != `{"dataSourceId":"ds_pg","entry":"connections"}` {
		t.Fatalf("assistant turn sent back = %v", asst)
	}
	toolMsg := msgs[3].(map[string]any)
	if toolMsg["role"] != "tool" || toolMsg["tool_call_id"] != "call_1" || toolMsg["content"] != "client connections: 97 of max_connections 100" {
		t.Fatalf("tool reply sent = %v", toolMsg)
	}
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "user" || last["content"] != finalNote {
		t.Fatalf("last message = %v", last)
	}
}
