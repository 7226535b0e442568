package llm

import (
	"context"
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/causeway/causeway/analyzer"
)

// ToolSpec is a tool offered to the model: its name, what it does and the
// JSON schema of its arguments.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// ToolCall is one call the model asked for, as it asked: the arguments are
// the model's raw JSON, judged by the caller before anything runs.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolTurn is one round of tool use: the calls the model made and the reply
// to each, aligned with Calls.
type ToolTurn struct {
	Calls   []ToolCall
	Replies []string
}

// Step is the outcome of one tool-use step: either calls to run, or the
// agent's final report (Done).
type Step struct {
	Calls  []ToolCall
	Done   bool
	Report analyzer.AgentReport
}

// toolsNote tells the model how tool use works; the budget itself is
// enforced by the caller, the model is only told it exists.
const toolsNote = `

You may call the tools offered to read your domain's data sources before you answer. Every call counts against a small budget, so ask only for what can confirm or rule out a mechanism. Tool answers are context entries: quote them verbatim as citations. When you have enough, reply with the JSON object of the output contract instead of calling a tool.`

// finalNote asks for the answer once no more tools may be called.
const finalNote = "No more tool calls are available: the tool budget of this agent is spent. Answer now with the JSON object of the output contract, using what the tools returned."

// InvestigateStep is one step of an agent that may use tools: the
// conversation so far (the system prompt, the incident with toolContext — the
// sources and the window the tools may read — and every earlier turn with its
// replies) is sent with the tools offered, and the model either calls tools
// (returned unexecuted) or answers. With final set, or no tools, no tools are
// offered and the answer is validated as Investigate validates it, with the
// same one repair. Usage covers every call made, errors included.
func (c *Client) InvestigateStep(ctx context.Context, role string, in analyzer.Input, toolContext string, tools []ToolSpec, turns []ToolTurn, final bool) (Step, Usage, error) {
	var usage Usage
	if c.cfgErr != nil {
		return Step{}, usage, c.cfgErr
	}
	sys := SystemPrompt(role)
	if sys == "" {
		return Step{}, usage, fmt.Errorf("%w: unknown agent role %q", ErrInvalidConfig, role)
	}
	if err := ctx.Err(); err != nil {
		return Step{}, usage, c.classify(ctx, &callState{}, err)
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: sys + toolsNote},
		{Role: openai.ChatMessageRoleUser, Content: UserPrompt(in.ForRole(role)) + "\n\n" + toolContext},
	}
	for _, t := range turns {
		calls := make([]openai.ToolCall, len(t.Calls))
		for i, tc := range t.Calls {
			calls[i] = openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}}
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: calls})
		for i, tc := range t.Calls {
			content := ""
			if i < len(t.Replies) {
				content = t.Replies[i]
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: content})
		}
	}
	var offered []openai.Tool
	if final || len(tools) == 0 {
		if len(turns) > 0 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: finalNote})
		}
	} else {
		for _, t := range tools {
			params, err := json.Marshal(t.Parameters)
			if err != nil {
				return Step{}, usage, fmt.Errorf("%w: tool %s has no JSON schema: %v", ErrInvalidConfig, t.Name, err)
			}
			offered = append(offered, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: t.Name, Description: t.Description, Parameters: json.RawMessage(params)}})
		}
	}
	rep, err := c.complete(ctx, msgs, offered, &usage)
	if err != nil {
		return Step{}, usage, err
	}
	if len(offered) > 0 && len(rep.toolCalls) > 0 {
		calls := make([]ToolCall, len(rep.toolCalls))
		for i, tc := range rep.toolCalls {
			calls[i] = ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		}
		return Step{Calls: calls}, usage, nil
	}
	report, err := c.conclude(ctx, role, msgs, rep, &usage)
	if err != nil {
		return Step{}, usage, err
	}
	return Step{Done: true, Report: report}, usage, nil
}
