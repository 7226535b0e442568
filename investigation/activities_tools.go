package investigation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/llm"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// NameRunAgentStep is the registered name of one tool-use step of an agent.
const NameRunAgentStep = "RunAgentStep"

// ToolBudget is the per-pass budget of one agent's tool use
// (CAUSEWAY_LLM_TOOL_*); zero Calls turns tool use off.
type ToolBudget struct {
	Calls  int
	Bytes  int
	Tokens int
}

// Bounds of what a step keeps of a model's tool calls, so the reasoning
// trail in workflow history stays small whatever the model sends.
const (
	maxCallsPerStep = 8
	maxCallIDLength = 64
	maxToolName     = 64
)

// ToolCallRecord is one tool call of a step as history keeps it: the
// model's call (clipped), the query it resolved to or why it was refused,
// and, once the workflow ran it, the key of its answer or why it failed.
type ToolCallRecord struct {
	ID        string
	Name      string
	Arguments string
	// Query is the scoped query to run; nil when the call was refused.
	Query *datasources.Query `json:",omitempty"`
	// Refusal is told to the model instead of running anything.
	Refusal string `json:",omitempty"`
	// FactKey names the stored answer of a call that ran.
	FactKey string `json:",omitempty"`
	// Error is why a call that ran got no answer.
	Error string `json:",omitempty"`
}

// ToolTurnRecord is one round of tool calls.
type ToolTurnRecord struct {
	Calls []ToolCallRecord
}

// AgentStepInput is one step of an agent that may use tools: the turns so
// far (answers by key, so their text is loaded, not carried), whether the
// agent must now answer, and the tokens its earlier steps spent.
type AgentStepInput struct {
	Agent            AgentInput
	Turns            []ToolTurnRecord
	Final            bool
	PromptTokens     int
	CompletionTokens int
}

// AgentStepOutput is a finished agent's summary (Done), or the tool calls
// it asked for. Budget and QueryTimeout are the limits the workflow
// enforces; Tools is false when the agent was offered none and answered
// as RunAgent does.
type AgentStepOutput struct {
	Done             bool
	Summary          AgentSummary
	Calls            []ToolCallRecord
	Tools            bool
	Budget           ToolBudget
	QueryTimeout     time.Duration
	PromptTokens     int
	CompletionTokens int
}

// RunAgentStep runs one step of a specialist agent that may call its
// domain's data-source queries as tools (docs/security.md). Without an LLM,
// a tool budget, or a source the agent's tools read, it is RunAgent. Each
// call the model asks for is resolved here (datasources.ResolveTool) into a
// query of the tenant's own source, inside the incident window, from the
// plan's read-only entries, or refused with the reason the model is told;
// nothing runs here: the workflow runs each query as its own activity.
func (a *Activities) RunAgentStep(ctx context.Context, in AgentStepInput) (AgentStepOutput, error) {
	ag := in.Agent
	if a.LLM == nil || a.DataSources == nil || a.Tools.Calls <= 0 {
		return a.plainStep(ctx, ag)
	}
	runID := ag.InvestigationID + "/" + ag.AgentRole
	prev, err := a.agentRun(ctx, runID)
	if err != nil {
		return AgentStepOutput{}, storeUnavailable(ctx, ag, err)
	}
	if prev != nil && prev.Status == models.CoverageCompleted {
		s, err := summarize(prev)
		return AgentStepOutput{Done: true, Summary: s, Tools: len(in.Turns) > 0}, err
	}
	srcs, tools, err := a.agentTools(ctx, ag)
	if err != nil {
		return AgentStepOutput{}, storeUnavailable(ctx, ag, err)
	}
	if len(tools) == 0 {
		return a.plainStep(ctx, ag)
	}
	input, inv, inc, err := a.agentInput(ctx, ag)
	if err != nil {
		return AgentStepOutput{}, err
	}
	sc := datasources.ScopeOf(alertOf(inc), inv.StartedAt, a.Gathering.Lookback)
	turns, err := a.llmTurns(ctx, ag, in.Turns)
	if err != nil {
		return AgentStepOutput{}, storeUnavailable(ctx, ag, err)
	}
	specs := make([]llm.ToolSpec, len(tools))
	for i, t := range tools {
		specs[i] = llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Schema()}
	}

	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go temporalx.Heartbeat(hctx)
	out := AgentStepOutput{Tools: true, Budget: a.Tools, QueryTimeout: a.DataSources.Options().QueryTimeout}
	step, usage, err := a.LLM.InvestigateStep(ctx, ag.AgentRole, input, toolContext(tools, srcs, sc), specs, turns, in.Final)
	out.PromptTokens, out.CompletionTokens = usage.PromptTokens, usage.CompletionTokens
	metrics.AddLLMTokens(usage.PromptTokens, usage.CompletionTokens)
	run := &models.AgentRun{ID: runID, TenantID: ag.TenantID, InvestigationID: ag.InvestigationID, AgentRole: ag.AgentRole,
		Model: a.LLM.Model(), UpdatedAt: time.Now().UTC(),
		PromptTokens:     in.PromptTokens + usage.PromptTokens,
		CompletionTokens: in.CompletionTokens + usage.CompletionTokens}
	if err != nil {
		run.Status, run.Reason = models.CoverageFailed, shorten(err.Error())
		if serr := a.Passes.SaveAgentRun(ctx, run); serr != nil {
			return AgentStepOutput{}, storeUnavailable(ctx, ag, serr)
		}
		return AgentStepOutput{}, classifyLLM(err)
	}
	if step.Done {
		s, err := a.saveReport(ctx, ag, run, step.Report)
		out.Done, out.Summary = true, s
		return out, err
	}
	out.Calls = resolveCalls(step.Calls, tools, srcs, sc, ag.AgentRole, len(in.Turns))
	return out, nil
}

// agentTools lists the tenant's data sources and the tools the agent's role
// may use on them; no tools means the agent runs without.
func (a *Activities) agentTools(ctx context.Context, ag AgentInput) ([]datasources.Source, []datasources.Tool, error) {
	_, srcs, err := a.tenantSources(ctx, ag.TenantID)
	if err != nil {
		return nil, nil, err
	}
	types := make([]string, len(srcs))
	for i, s := range srcs {
		types[i] = s.Type
	}
	return srcs, datasources.ToolsFor(ag.AgentRole, types), nil
}

// resolveCalls turns the calls the model asked for (at most maxCallsPerStep)
// into scoped queries or refusals, each recorded bounded for history. A query's
// key names the agent, the turn and the call, so every answer is its own fact.
func resolveCalls(calls []llm.ToolCall, tools []datasources.Tool, srcs []datasources.Source, sc datasources.Scope, role string, turn int) []ToolCallRecord {
	var out []ToolCallRecord
	for i, c := range calls {
		if i == maxCallsPerStep {
			break
		}
		rec := ToolCallRecord{ID: clip.To(c.ID, maxCallIDLength), Name: clip.To(c.Name, maxToolName), Arguments: clip.To(c.Arguments, datasources.MaxToolArguments)}
		q, err := datasources.ResolveTool(tools, c.Name, c.Arguments, role, srcs, sc)
		if err != nil {
			rec.Refusal = shorten(err.Error())
		} else {
			q.Key = fmt.Sprintf("tool/%s/%d/%d/%s", role, turn, i, q.Key)
			rec.Query = &q
		}
		out = append(out, rec)
	}
	return out
}

// plainStep is an agent offered no tools: one RunAgent.
func (a *Activities) plainStep(ctx context.Context, in AgentInput) (AgentStepOutput, error) {
	s, err := a.RunAgent(ctx, in)
	return AgentStepOutput{Done: true, Summary: s}, err
}

// llmTurns rebuilds the conversation's tool turns: each reply is the
// stored answer of a call that ran, or the error the model is told.
func (a *Activities) llmTurns(ctx context.Context, in AgentInput, recs []ToolTurnRecord) ([]llm.ToolTurn, error) {
	var keys []string
	for _, t := range recs {
		for _, c := range t.Calls {
			if c.FactKey != "" {
				keys = append(keys, c.FactKey)
			}
		}
	}
	facts, err := a.Store.GatheredFacts(ctx, in.TenantID, in.InvestigationID, keys)
	if err != nil {
		return nil, err
	}
	text := map[string]string{}
	for _, f := range facts {
		text[f.ID] = f.Text
	}
	out := make([]llm.ToolTurn, len(recs))
	for i, t := range recs {
		for _, c := range t.Calls {
			out[i].Calls = append(out[i].Calls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
			var reply string
			switch {
			case c.Refusal != "":
				reply = "error: " + c.Refusal
			case c.Error != "":
				reply = "error: the query failed: " + c.Error
			default:
				reply = text[models.GatheredFactID(in.InvestigationID, c.FactKey)]
				if strings.TrimSpace(reply) == "" {
					reply = "(no data)"
				}
			}
			out[i].Replies = append(out[i].Replies, reply)
		}
	}
	return out, nil
}

// toolContext tells the model what its tools may read: the tenant's sources
// of the tools' types, the endpoints probes may target, and the window.
func toolContext(tools []datasources.Tool, srcs []datasources.Source, sc datasources.Scope) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool scope: service %q, window %s to %s (RFC 3339, UTC).\nData sources your tools may read:\n",
		sc.Service, sc.Start.Format(time.RFC3339), sc.End.Format(time.RFC3339))
	for _, s := range srcs {
		if !slices.ContainsFunc(tools, func(t datasources.Tool) bool { return slices.Contains(t.Types, s.Type) }) {
			continue
		}
		fmt.Fprintf(&b, "- dataSourceId %s: %s source %q", s.ID, s.Type, s.Name)
		if t := datasources.ProbeTargets(s, sc); len(t) > 0 {
			fmt.Fprintf(&b, "; endpoints: %s", strings.Join(t, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}
