package investigation

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// mockRunAgent answers the database agent's step with answer(n) on the n-th
// call (from 1) and returns the call counter.
func mockRunAgent(env *testsuite.TestWorkflowEnvironment, answer func(n int) (AgentSummary, error)) *int {
	calls := 0
	env.OnActivity(NameRunAgentStep, mock.Anything, AgentStepInput{Agent: agentIn("database")}).Return(
		func(context.Context, AgentStepInput) (AgentStepOutput, error) {
			calls++
			s, err := answer(calls)
			return AgentStepOutput{Done: err == nil, Summary: s}, err
		})
	return &calls
}

// TestAgentWaitsOutTheDatabase shows an agent whose every attempt found the
// database away pauses and asks again, and reports once the database answers,
// where it used to fail and leave its pass without its evidence.
func TestAgentWaitsOutTheDatabase(t *testing.T) {
	env := newEnv(t)
	storeDown := temporal.NewApplicationError("the database is unavailable", ErrTypeStoreUnavailable)
	calls := mockRunAgent(env, func(n int) (AgentSummary, error) {
		if n <= 6 { // the preset's 4 attempts, then 2 of the next run's
			return AgentSummary{}, storeDown
		}
		return AgentSummary{AgentRole: "database", Findings: 1, Summary: "pool exhausted"}, nil
	})
	env.ExecuteWorkflow(AgentWorkflowName, agentIn("database"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out AgentSummary
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
	llmDown := temporal.NewApplicationError("llm: request failed: connection refused", ErrTypeLLMUnavailable)
	calls := mockRunAgent(env, func(int) (AgentSummary, error) { return AgentSummary{}, llmDown })
	env.ExecuteWorkflow(AgentWorkflowName, agentIn("database"))
	require.True(t, env.IsWorkflowCompleted())
	require.True(t, temporalx.HasErrorType(env.GetWorkflowError(), ErrTypeLLMUnavailable), "%v", env.GetWorkflowError())
	require.Equal(t, 4, *calls)
	require.Less(t, env.Now().Sub(t0), time.Minute)
}

// TestAgentToolUseStopsAtTheBudget: the model asks for three calls with a
// budget of two. The refused call (bad arguments) counts, the valid one runs
// as its own RunDataSourceQuery, the third is not run, and the next step is
// the final one, told the budget is spent; the summary records the budget.
func TestAgentToolUseStopsAtTheBudget(t *testing.T) {
	env := newEnv(t)
	in := agentIn("database")
	q := datasources.Query{Key: "tool/database/0/1/ds_pg/connections", DataSourceID: "ds_pg", Type: "postgres", Entry: "connections", Text: "select 1", Roles: []string{"database"}}
	first := AgentStepOutput{Tools: true, Budget: ToolBudget{Calls: 2, Bytes: 4096, Tokens: 5000}, QueryTimeout: 5 * time.Second,
		PromptTokens: 400, CompletionTokens: 50, Calls: []ToolCallRecord{
			{ID: "c0", Name: "query_postgres", Arguments: "{", Refusal: "arguments are not a JSON object"},
			{ID: "c1", Name: "query_postgres", Arguments: `{"dataSourceId":"ds_pg"}`, Query: &q},
			{ID: "c2", Name: "query_postgres", Arguments: `{"dataSourceId":"ds_pg","entry":"lock_waits"}`, Query: &datasources.Query{Key: "tool/database/0/2/x"}},
		}}
	env.OnActivity(NameRunAgentStep, mock.Anything, AgentStepInput{Agent: in}).Return(first, nil).Once()
	env.OnActivity(NameRunDataSourceQuery, mock.Anything, QueryInput{TenantID: tenant, InvestigationID: invID, Query: q}).
		Return(QueryOutput{Readings: 1, Text: "client connections: 97 of 100"}, nil).Once()
	wantTurns := []ToolTurnRecord{{Calls: []ToolCallRecord{
		{ID: "c0", Name: "query_postgres", Arguments: "{", Refusal: "arguments are not a JSON object"},
		{ID: "c1", Name: "query_postgres", Arguments: `{"dataSourceId":"ds_pg"}`, FactKey: q.Key},
		{ID: "c2", Name: "query_postgres", Arguments: `{"dataSourceId":"ds_pg","entry":"lock_waits"}`, Refusal: "not run: the tool budget of this agent is spent"},
	}}}
	env.OnActivity(NameRunAgentStep, mock.Anything, AgentStepInput{Agent: in, Turns: wantTurns, Final: true, PromptTokens: 400, CompletionTokens: 50}).
		Return(AgentStepOutput{Done: true, Tools: true, PromptTokens: 600, CompletionTokens: 80,
			Summary: AgentSummary{AgentRole: "database", Findings: 1, Summary: "pool exhausted"}}, nil).Once()

	env.ExecuteWorkflow(AgentWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out AgentSummary
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, &models.Budget{
		Allowed: models.BudgetAmounts{ToolCalls: 2, Bytes: 4096, Tokens: 5000},
		Used:    models.BudgetAmounts{ToolCalls: 2, Bytes: len("client connections: 97 of 100"), Tokens: 1130},
		Stopped: true, StoppedBy: "toolCalls",
	}, out.Budget)
	require.Equal(t, []string{q.Key}, out.Facts)
	require.Contains(t, budgetCoverage(out.Budget), "tool budget reached (toolCalls): 2 of 2 calls")
}

// TestEachToolLimitStopsALoop: a model that asks for one more query on every
// step, forever, is stopped by whichever limit it reaches first: the bytes
// its answers returned, or the tokens its steps spent, with the call limit
// far away. Without that limit the loop would run until the test's mock
// ran out of patience.
func TestEachToolLimitStopsALoop(t *testing.T) {
	const answer = "client connections: 97 of 100" // 29 bytes per query
	for _, c := range []struct {
		name      string
		limits    ToolBudget
		wantCalls int
	}{
		// After 3 answers 87 bytes ≥ 80, so the 4th call is never run.
		{"bytes", ToolBudget{Calls: 1000, Bytes: 80, Tokens: 1_000_000}, 3},
		// Each step spends 100 tokens; after the 5th step 500 ≥ 450.
		{"tokens", ToolBudget{Calls: 1000, Bytes: 1 << 20, Tokens: 450}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			in := agentIn("database")
			steps, queries := 0, 0
			env.OnActivity(NameRunAgentStep, mock.Anything, mock.AnythingOfType("AgentStepInput")).Return(
				func(_ context.Context, si AgentStepInput) (AgentStepOutput, error) {
					steps++
					if steps > 100 {
						return AgentStepOutput{}, temporal.NewNonRetryableApplicationError("the loop was not stopped", "test", nil)
					}
					if si.Final {
						return AgentStepOutput{Done: true, Tools: true, PromptTokens: 90, CompletionTokens: 10,
							Summary: AgentSummary{AgentRole: "database", Summary: "answered"}}, nil
					}
					key := fmt.Sprintf("tool/database/%d/0/ds_pg/connections", steps)
					return AgentStepOutput{Tools: true, Budget: c.limits, QueryTimeout: 5 * time.Second, PromptTokens: 90, CompletionTokens: 10,
						Calls: []ToolCallRecord{{ID: key, Name: "query_postgres", Arguments: `{"dataSourceId":"ds_pg"}`,
							Query: &datasources.Query{Key: key, DataSourceID: "ds_pg", Type: "postgres", Entry: "connections", Text: "select 1"}}}}, nil
				})
			env.OnActivity(NameRunDataSourceQuery, mock.Anything, mock.AnythingOfType("QueryInput")).Return(
				func(context.Context, QueryInput) (QueryOutput, error) {
					queries++
					return QueryOutput{Readings: 1, Text: answer}, nil
				})
			env.ExecuteWorkflow(AgentWorkflowName, in)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var out AgentSummary
			require.NoError(t, env.GetWorkflowResult(&out))
			require.Equal(t, c.wantCalls, queries, "queries run")
			require.NotNil(t, out.Budget)
			require.True(t, out.Budget.Stopped)
			require.Equal(t, c.name, out.Budget.StoppedBy)
		})
	}
}
