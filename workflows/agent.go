package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/activities"
)

// AgentWorkflow runs one specialist agent of one pass. It is a child workflow
// rather than a bare activity so each agent has its own deadline, its own entry in
// the Temporal UI and can be cancelled alone when the pass stops waiting. The
// report itself is stored by the activity; only a summary comes back.
func AgentWorkflow(ctx workflow.Context, in activities.AgentInput) (activities.AgentSummary, error) {
	a := &agent{in: in}
	return a.run(ctx)
}

type agent struct {
	in activities.AgentInput
}

func (a *agent) run(ctx workflow.Context) (activities.AgentSummary, error) {
	// Ask the agent (LLM or offline analyzer) for its report; transient LLM
	// failures retry within the LLM preset, the rest fail the agent at once.
	var out activities.AgentSummary
	err := workflow.ExecuteActivity(withLLMOptions(ctx), activities.NameRunAgent, a.in).Get(ctx, &out)
	return out, err
}
