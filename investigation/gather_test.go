package investigation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/models"
)

func planned(key, entry string, roles ...string) datasources.Query {
	return datasources.Query{Key: "ds_1/" + key, DataSourceID: "ds_1", Source: "prod", Type: "prometheus", Entry: entry,
		Text: entry + "{service=\"checkout\"}", Roles: roles}
}

// A pass asks its data sources before its agents run: each agent reads the
// answers meant for it, a refusing or silent source becomes a coverage note of
// the agents that wanted it, and the pass completes all the same.
func TestInvestigationGathersFromDataSources(t *testing.T) {
	env := newEnv(t)
	memory := planned("memory_usage", "memory_usage", "infrastructure", "metrics")
	lag := planned("kafka_consumer_lag", "kafka_consumer_lag", "metrics")
	disk := planned("filesystem_free", "filesystem_free", "infrastructure", "metrics")
	plan := GatherPlan{Queries: []datasources.Query{memory, lag, disk}, Notes: []string{"probe source \"edge\" has no targets"},
		QueryTimeout: 10 * time.Second, Budget: 30 * time.Second}
	env.OnActivity(NamePlanGathering, mock.Anything, GatherPlanInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Agents: []string{"infrastructure", "metrics"}, At: t0,
	}).Return(plan, nil).Once()
	queryIn := func(q datasources.Query) QueryInput {
		return QueryInput{TenantID: tenant, InvestigationID: invID, Query: q}
	}
	env.OnActivity(NameRunDataSourceQuery, mock.Anything, queryIn(memory)).
		Return(QueryOutput{Readings: 1, Text: "memory working set: 1.00 GiB of 1.00 GiB limit (100%)"}, nil).Once()
	env.OnActivity(NameRunDataSourceQuery, mock.Anything, queryIn(lag)).
		Return(QueryOutput{}, temporal.NewNonRetryableApplicationError("data source denied access: HTTP 403", ErrTypeDataSourceDenied, nil)).Once()
	// The disk query never answers within the budget; time skipping gets there.
	env.OnActivity(NameRunDataSourceQuery, mock.Anything, queryIn(disk)).After(time.Hour).
		Return(QueryOutput{}, nil).Maybe()

	infra := agentIn("infrastructure")
	infra.Facts = []string{memory.Key}
	metricsIn := agentIn("metrics")
	metricsIn.Facts = []string{memory.Key}
	onAgent(env, infra, AgentSummary{AgentRole: "infrastructure", Findings: 1, Summary: "memory at its limit"}, nil).Once()
	onAgent(env, metricsIn, AgentSummary{AgentRole: "metrics", Findings: 1, Summary: "memory at its limit"}, nil).Once()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"infrastructure", "metrics"},
		Facts: []string{memory.Key},
	}).Return(SynthesisSummary{Category: "memory_exhaustion", Confidence: 0.8}, nil).Once()
	var finished FinishInput
	env.OnActivity(NameFinishInvestigation, mock.Anything, mock.AnythingOfType("FinishInput")).
		Run(func(args mock.Arguments) { finished = args.Get(1).(FinishInput) }).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()

	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("metrics", "infrastructure"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, models.InvestigationCompleted, finished.Status)
	require.Equal(t, []models.Coverage{
		{AgentRole: "infrastructure", Status: "completed", Reason: "1 findings; memory at its limit; data sources: 1 answers; " +
			"probe source \"edge\" has no targets; prometheus filesystem_free of \"prod\": no answer within the gathering budget of 30s"},
		{AgentRole: "metrics", Status: "completed", Reason: "1 findings; memory at its limit; data sources: 1 answers; " +
			"probe source \"edge\" has no targets; prometheus kafka_consumer_lag of \"prod\" failed: data source denied access: HTTP 403 (DataSourceDenied); " +
			"prometheus filesystem_free of \"prod\": no answer within the gathering budget of 30s"},
	}, finished.Coverage)
	// The agents started once the budget was spent, not before.
	require.Equal(t, t0.Add(30*time.Second), finished.At)
}

// A tenant without data sources gets the pass it always had.
func TestInvestigationWithoutDataSources(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(NamePlanGathering, mock.Anything, mock.AnythingOfType("GatherPlanInput")).
		Return(GatherPlan{}, nil).Once()
	agentOK(env, "logs", 0, "no findings").Once()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"logs"},
	}).Return(SynthesisSummary{Category: "unknown", Confidence: 0.15}, nil).Once()
	env.OnActivity(NameFinishInvestigation, mock.Anything, finishIn(models.InvestigationCompleted,
		[]models.Coverage{{AgentRole: "logs", Status: "completed", Reason: "0 findings; no findings"}}, "",
		"Investigation pass 1 completed: unknown (confidence 0.15), 1 of 1 agents reported", t0)).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("logs"))
	require.NoError(t, env.GetWorkflowError())
}
