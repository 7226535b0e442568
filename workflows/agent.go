package workflows

import (
	"time"

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
	// A database outage that outlasted the preset's retries is no verdict on the
	// agent: wait for the database and ask again, as every other write does,
	// until the pass stops waiting for this agent (it cancels it at its
	// deadline). Histories from before this rule ended the agent here.
	for hasErrorType(err, activities.ErrTypeStoreUnavailable) {
		if workflow.GetVersion(ctx, versionAgentWaitsForStore, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			break
		}
		if err := workflow.Sleep(ctx, storeWaitInterval); err != nil {
			return out, err
		}
		err = workflow.ExecuteActivity(withLLMOptions(ctx), activities.NameRunAgent, a.in).Get(ctx, &out)
	}
	return out, err
}

// versionAgentWaitsForStore marks the change that made agents wait out a
// database outage instead of failing.
const versionAgentWaitsForStore = "agent-waits-for-store"

// storeWaitInterval is the pause before an agent asks again after the database
// was away for all of its attempts.
const storeWaitInterval = 10 * time.Second
