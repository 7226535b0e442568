package investigation

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// AgentWorkflow runs one specialist agent of one pass. It is a child workflow
// rather than a bare activity so each agent has its own deadline, its own entry in
// the Temporal UI and can be cancelled alone when the pass stops waiting. The
// report itself is stored by the activity; only a summary comes back.
func AgentWorkflow(ctx workflow.Context, in AgentInput) (AgentSummary, error) {
	a := &agent{in: in}
	return a.run(ctx)
}

type agent struct {
	in AgentInput
}

// versionAgentTools marks agents that may call their domain's data-source
// queries as tools, step by step. Histories from before it ran one RunAgent.
const versionAgentTools = "agent-tool-use"

func (a *agent) run(ctx workflow.Context) (AgentSummary, error) {
	if workflow.GetVersion(ctx, versionAgentTools, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		// Ask the agent (LLM or offline analyzer) for its report; transient LLM
		// failures retry within the LLM preset, the rest fail the agent at once.
		var out AgentSummary
		err := a.execute(ctx, NameRunAgent, a.in, &out)
		return out, err
	}
	return a.runWithTools(ctx)
}

// execute runs one of the agent's LLM activities. A database outage that
// outlasted the preset's retries is no verdict on the agent: wait for the
// database and ask again, as every other write does, until the pass stops
// waiting for this agent (it cancels it at its deadline). Histories from
// before this rule ended the agent here.
func (a *agent) execute(ctx workflow.Context, name string, in, out any) error {
	err := workflow.ExecuteActivity(withLLMOptions(ctx), name, in).Get(ctx, out)
	for temporalx.HasErrorType(err, ErrTypeStoreUnavailable) {
		if workflow.GetVersion(ctx, versionAgentWaitsForStore, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			break
		}
		if err := workflow.Sleep(ctx, storeWaitInterval); err != nil {
			return err
		}
		err = workflow.ExecuteActivity(withLLMOptions(ctx), name, in).Get(ctx, out)
	}
	return err
}

// runWithTools is the agent as a loop of steps: each step asks the model
// (RunAgentStep), which answers or asks for tool calls; each call that the
// step resolved into a scoped query runs as its own activity, so the
// reasoning trail is in history. The budget is enforced here, in code: a
// call past the call or byte limit is not run, and once any limit is reached
// the next step offers no tools and asks for the answer. Refused calls
// count against the budget, so a model cannot loop on bad arguments.
func (a *agent) runWithTools(ctx workflow.Context) (AgentSummary, error) {
	var (
		turns    []ToolTurnRecord
		facts    []string
		budget   toolBudget
		timeout  time.Duration
		pt, ct   int
		usedTool bool
	)
	for step := 0; ; step++ {
		var out AgentStepOutput
		err := a.execute(ctx, NameRunAgentStep, AgentStepInput{
			Agent: a.in, Turns: turns, Final: budget.Stopped, PromptTokens: pt, CompletionTokens: ct,
		}, &out)
		if err != nil {
			return AgentSummary{}, err
		}
		pt, ct = pt+out.PromptTokens, ct+out.CompletionTokens
		if step == 0 {
			budget, timeout, usedTool = newToolBudget(out.Budget), out.QueryTimeout, out.Tools
		}
		budget.Used.Tokens = pt + ct
		if out.Done {
			s := out.Summary
			if usedTool {
				s.Budget, s.Facts = &budget.Budget, facts
			}
			return s, nil
		}
		if budget.Stopped {
			// RunAgentStep offers no tools on a final step, so it always
			// answers; anything else is a broken step, not a reason to loop.
			return AgentSummary{}, fmt.Errorf("agent step %d asked for tools after the budget was spent", step)
		}
		turn := ToolTurnRecord{Calls: out.Calls}
		facts = append(facts, a.runCalls(ctx, turn.Calls, &budget, timeout)...)
		turns = append(turns, turn)
		budget.endTurn()
	}
}

// runCalls runs the turn's tool calls that the budget still allows, each as
// its own data-source query activity, and returns the keys of the answers
// read. A call past the budget is answered "not run"; a call the step refused
// counts but runs nothing.
func (a *agent) runCalls(ctx workflow.Context, calls []ToolCallRecord, budget *toolBudget, timeout time.Duration) []string {
	var facts []string
	for i := range calls {
		c := &calls[i]
		if budget.StoppedBy = budget.callLimit(); budget.StoppedBy != "" {
			c.Query, c.Refusal = nil, "not run: the tool budget of this agent is spent"
			continue
		}
		budget.Used.ToolCalls++
		if c.Query == nil {
			continue // refused by the step: the model is told why
		}
		var qo QueryOutput
		err := workflow.ExecuteActivity(withQueryOptions(ctx, timeout, timeout+5*time.Second), NameRunDataSourceQuery,
			QueryInput{TenantID: a.in.TenantID, InvestigationID: a.in.InvestigationID, Query: *c.Query}).Get(ctx, &qo)
		if err != nil {
			c.Error = failureReason(err)
		} else {
			c.FactKey = c.Query.Key
			facts = append(facts, c.Query.Key)
			budget.Used.Bytes += len(qo.Text)
		}
		// The answer is loaded by key; the query text stays in this
		// activity's input and is not carried into every later step.
		c.Query = nil
	}
	return facts
}

// toolBudget is one agent's tool budget in a pass: the limits its first step
// reported, what it has used, and which limit stopped it.
type toolBudget struct {
	models.Budget
	limits ToolBudget
}

func newToolBudget(l ToolBudget) toolBudget {
	return toolBudget{Budget: models.Budget{Allowed: models.BudgetAmounts{ToolCalls: l.Calls, Bytes: l.Bytes, Tokens: l.Tokens}}, limits: l}
}

// callLimit names the limit another call would pass ("toolCalls", "bytes"),
// or is empty while calls may still run. A stop already recorded stays.
func (b *toolBudget) callLimit() string {
	switch {
	case b.StoppedBy != "":
		return b.StoppedBy
	case b.Used.ToolCalls >= b.limits.Calls:
		return "toolCalls"
	case b.Used.Bytes >= b.limits.Bytes:
		return "bytes"
	}
	return ""
}

// endTurn decides after a turn whether tool use is over: a call or byte limit
// reached, or the tokens spent. The next step is then the final one.
func (b *toolBudget) endTurn() {
	if b.StoppedBy = b.callLimit(); b.StoppedBy == "" && b.Used.Tokens >= b.limits.Tokens {
		b.StoppedBy = "tokens"
	}
	b.Stopped = b.StoppedBy != ""
}

// budgetCoverage is the part of an agent's coverage reason that says its
// tool budget ended its tool use.
func budgetCoverage(b *models.Budget) string {
	if b == nil || !b.Stopped {
		return ""
	}
	return fmt.Sprintf("; tool budget reached (%s): %d of %d calls, %d of %d bytes, %d of %d tokens; the agent answered with what it had read",
		b.StoppedBy, b.Used.ToolCalls, b.Allowed.ToolCalls, b.Used.Bytes, b.Allowed.Bytes, b.Used.Tokens, b.Allowed.Tokens)
}

// versionAgentWaitsForStore marks the change that made agents wait out a
// database outage instead of failing.
const versionAgentWaitsForStore = "agent-waits-for-store"

// storeWaitInterval is the pause before an agent asks again after the database
// was away for all of its attempts.
const storeWaitInterval = 10 * time.Second
