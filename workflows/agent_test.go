package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/activities"
)

// mockRunAgent answers the database agent's RunAgent with answer(n) on the n-th
// call (from 1) and returns the call counter.
func mockRunAgent(env *testsuite.TestWorkflowEnvironment, answer func(n int) (activities.AgentSummary, error)) *int {
	calls := 0
	env.OnActivity(activities.NameRunAgent, mock.Anything, agentIn("database")).Return(
		func(context.Context, activities.AgentInput) (activities.AgentSummary, error) {
			calls++
			return answer(calls)
		})
	return &calls
}

// TestAgentWaitsOutTheDatabase shows an agent whose every attempt found the
// database away pauses and asks again, and reports once the database answers,
// where it used to fail and leave its pass without its evidence.
func TestAgentWaitsOutTheDatabase(t *testing.T) {
	env := newEnv(t)
	storeDown := temporal.NewApplicationError("the database is unavailable", activities.ErrTypeStoreUnavailable)
	calls := mockRunAgent(env, func(n int) (activities.AgentSummary, error) {
		if n <= 6 { // the preset's 4 attempts, then 2 of the next run's
			return activities.AgentSummary{}, storeDown
		}
		return activities.AgentSummary{AgentRole: "database", Findings: 1, Summary: "pool exhausted"}, nil
	})
	env.ExecuteWorkflow(AgentWorkflowName, agentIn("database"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out activities.AgentSummary
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "pool exhausted", out.Summary)
	require.Equal(t, 7, *calls)
	require.GreaterOrEqual(t, env.Now().Sub(t0), storeWaitInterval, "the agent asks again only after a pause")
}

// TestAgentLLMOutageStillEnds shows the wait is for the database only: an LLM
// that stays unavailable through the preset's attempts fails the agent at once,
// so its pass ends while it is still useful.
func TestAgentLLMOutageStillEnds(t *testing.T) {
	env := newEnv(t)
	llmDown := temporal.NewApplicationError("llm: request failed: connection refused", activities.ErrTypeLLMUnavailable)
	calls := mockRunAgent(env, func(int) (activities.AgentSummary, error) { return activities.AgentSummary{}, llmDown })
	env.ExecuteWorkflow(AgentWorkflowName, agentIn("database"))
	require.True(t, env.IsWorkflowCompleted())
	require.True(t, hasErrorType(env.GetWorkflowError(), activities.ErrTypeLLMUnavailable), "%v", env.GetWorkflowError())
	require.Equal(t, 4, *calls)
	require.Less(t, env.Now().Sub(t0), time.Minute)
}
