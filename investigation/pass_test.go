package investigation

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/models"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	tenant = "ten_1"
	incID  = "inc_01TEST"
	invID  = "inv_01TEST_1"
)

// newEnv is a pass's test environment: every workflow and activity
// registered, no runbooks and no recorded changes.
func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	env := changesEnv(t)
	// Passes read the tenant's recorded changes; these tests record none.
	env.OnActivity(NameReadChanges, mock.Anything, mock.AnythingOfType("ChangesInput")).
		Return(ChangesOutput{}, nil).Maybe()
	t.Cleanup(func() { env.AssertExpectations(t) })
	return env
}

func agentIn(role string) AgentInput {
	return AgentInput{TenantID: tenant, IncidentID: incID, InvestigationID: invID, AgentRole: role}
}

// onAgent answers an agent offered no tools: its one step is its report, or
// the error.
func onAgent(env *testsuite.TestWorkflowEnvironment, in AgentInput, s AgentSummary, err error) *testsuite.MockCallWrapper {
	out := AgentStepOutput{Done: err == nil, Summary: s}
	return env.OnActivity(NameRunAgentStep, mock.Anything, AgentStepInput{Agent: in}).Return(out, err)
}

func agentOK(env *testsuite.TestWorkflowEnvironment, role string, findings int, summary string) *testsuite.MockCallWrapper {
	return onAgent(env, agentIn(role), AgentSummary{AgentRole: role, Findings: findings, Model: OfflineModel, Summary: summary}, nil)
}

func passInput(agents ...string) InvestigationInput {
	return InvestigationInput{TenantID: tenant, IncidentID: incID, InvestigationID: invID, Pass: 1, Agents: agents}
}

func finishIn(status string, cov []models.Coverage, reason, msg string, at time.Time) FinishInput {
	return FinishInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Status: status, Coverage: cov,
		Reason: reason, Message: msg, At: at, DedupKey: "investigation/" + incID + "/1/finished",
	}
}

func TestInvestigationAllAgentsSucceed(t *testing.T) {
	env := newEnv(t)
	agentOK(env, "database", 2, "pool exhausted").Once()
	agentOK(env, "logs", 1, "connection timeouts").Once()
	agentOK(env, "metrics", 0, "no findings").Once()
	syn := SynthesisSummary{Category: "db_connection_exhaustion", Confidence: 0.82, Evidence: 2}
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"database", "logs", "metrics"},
	}).Return(syn, nil).Once()
	cov := []models.Coverage{
		{AgentRole: "database", Status: "completed", Reason: "2 findings; pool exhausted"},
		{AgentRole: "logs", Status: "completed", Reason: "1 findings; connection timeouts"},
		{AgentRole: "metrics", Status: "completed", Reason: "0 findings; no findings"},
	}
	env.OnActivity(NameFinishInvestigation, mock.Anything, finishIn(models.InvestigationCompleted, cov, "",
		"Investigation pass 1 completed: db_connection_exhaustion (confidence 0.82), 3 of 3 agents reported", t0)).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()

	// Unsorted and duplicated on purpose: the fan-out ranges a sorted, unique slice.
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("metrics", "logs", "database", "logs"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out InvestigationOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, InvestigationOutcome{
		InvestigationID: invID, Status: models.InvestigationCompleted, IncidentStatus: models.StatusInvestigated,
		Category: "db_connection_exhaustion", Confidence: 0.82, Coverage: cov,
	}, out)
}

func TestInvestigationOneAgentFails(t *testing.T) {
	env := newEnv(t)
	agentOK(env, "logs", 1, "connection timeouts").Once()
	agentOK(env, "metrics", 1, "p95 up").Once()
	onAgent(env, agentIn("database"), AgentSummary{}, temporal.NewNonRetryableApplicationError("llm: model refused to answer", ErrTypeLLMRefused, nil)).Once()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"logs", "metrics"},
	}).Return(SynthesisSummary{Category: "unknown", Confidence: 0.2}, nil).Once()
	cov := []models.Coverage{
		{AgentRole: "database", Status: "failed", Reason: "llm: model refused to answer (LLMRefused)"},
		{AgentRole: "logs", Status: "completed", Reason: "1 findings; connection timeouts"},
		{AgentRole: "metrics", Status: "completed", Reason: "1 findings; p95 up"},
	}
	env.OnActivity(NameFinishInvestigation, mock.Anything, finishIn(models.InvestigationCompleted, cov, "",
		"Investigation pass 1 completed: unknown (confidence 0.20), 2 of 3 agents reported", t0)).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()

	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("database", "logs", "metrics"))
	require.NoError(t, env.GetWorkflowError())
	var out InvestigationOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, models.InvestigationCompleted, out.Status)
	require.Equal(t, cov, out.Coverage)
}

func TestInvestigationAgentTimesOut(t *testing.T) {
	env := newEnv(t)
	agentOK(env, "logs", 1, "connection timeouts").Once()
	// metrics answers long after the deadline; time skipping gets there at once.
	agentOK(env, "metrics", 1, "too late").After(time.Hour).Maybe()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"logs"},
	}).Return(SynthesisSummary{Category: "upstream_dependency", Confidence: 0.5}, nil).Once()
	cov := []models.Coverage{
		{AgentRole: "logs", Status: "completed", Reason: "1 findings; connection timeouts"},
		{AgentRole: "metrics", Status: "timed_out", Reason: "no report within 5m0s"},
	}
	env.OnActivity(NameFinishInvestigation, mock.Anything, finishIn(models.InvestigationCompleted, cov, "",
		"Investigation pass 1 completed: upstream_dependency (confidence 0.50), 1 of 2 agents reported", t0.Add(DefaultAgentTimeout))).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()

	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("logs", "metrics"))
	require.NoError(t, env.GetWorkflowError())
	var out InvestigationOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, cov, out.Coverage)
}

func TestInvestigationAllAgentsFail(t *testing.T) {
	env := newEnv(t)
	for _, role := range []string{"logs", "metrics"} {
		onAgent(env, agentIn(role), AgentSummary{}, temporal.NewNonRetryableApplicationError("llm: endpoint returned HTTP 401", ErrTypeLLMRejected, nil)).Once()
	}
	cov := []models.Coverage{
		{AgentRole: "logs", Status: "failed", Reason: "llm: endpoint returned HTTP 401 (LLMRequestRejected)"},
		{AgentRole: "metrics", Status: "failed", Reason: "llm: endpoint returned HTTP 401 (LLMRequestRejected)"},
	}
	reason := "no agent produced a report: logs failed: llm: endpoint returned HTTP 401 (LLMRequestRejected); " +
		"metrics failed: llm: endpoint returned HTTP 401 (LLMRequestRejected)"
	env.OnActivity(NameFinishInvestigation, mock.Anything, finishIn(models.InvestigationFailed, cov, reason,
		"Investigation pass 1 failed: "+reason, t0)).
		Return(FinishOutput{IncidentStatus: models.StatusOpen}, nil).Once()

	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("logs", "metrics"))
	require.NoError(t, env.GetWorkflowError(), "a failed pass is an outcome, not a workflow failure")
	var out InvestigationOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, models.InvestigationFailed, out.Status)
	require.Equal(t, models.StatusOpen, out.IncidentStatus, "the incident is not left investigating")
	require.Equal(t, reason, out.Reason)
}

func TestFailureReasonUnwrapsToTheActivityError(t *testing.T) {
	err := temporal.NewNonRetryableApplicationError("llm: model refused to answer", ErrTypeLLMRefused, errors.New("inner"))
	require.Equal(t, "llm: model refused to answer (LLMRefused)", failureReason(err))
	require.Equal(t, "agent failed", failureReason(errors.New("boom")))
}

// The pass's database writes run as local activities; a transient failure of
// one is retried under its preset instead of failing the pass.
func TestInvestigationRetriesLocalWrites(t *testing.T) {
	env := newEnv(t)
	// A local activity's retries are bounded by workflow time plus its
	// ScheduleToClose, checked against the wall clock: t0 lies in the past.
	env.SetStartTime(time.Now())
	agentOK(env, "logs", 1, "connection timeouts").Once()
	syn := SynthesisSummary{Category: "db_connection_exhaustion", Confidence: 0.5, Evidence: 1}
	synIn := SynthesisInput{TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"logs"}}
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, synIn).
		Return(SynthesisSummary{}, errors.New("connection refused")).Once()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, synIn).Return(syn, nil).Once()
	env.OnActivity(NameFinishInvestigation, mock.Anything, mock.AnythingOfType("FinishInput")).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()

	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("logs"))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out InvestigationOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, models.InvestigationCompleted, out.Status)
	require.Equal(t, "db_connection_exhaustion", out.Category)
}
