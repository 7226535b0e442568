package investigation

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// changesEnv is newEnv without its blanket ReadChanges answer, so a test can
// expect the pass to read changes with concrete arguments. Completed passes
// look for runbooks; these tests have none.
func changesEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(t0)
	Register(env, &Activities{})
	remediation.Register(env, &remediation.Activities{})
	env.OnActivity(remediation.NameProposeRemediations, mock.Anything, mock.AnythingOfType("remediation.ProposeInput")).
		Return(remediation.ProposeOutput{}, nil).Maybe()
	t.Cleanup(func() { env.AssertExpectations(t) })
	return env
}

// The pass reads the recorded changes once, gives them to the deployments
// agent alone, and to synthesis so evidence citing a change is valid.
func TestInvestigationGivesChangesToTheDeploymentsAgent(t *testing.T) {
	env := changesEnv(t)
	end := t0.Add(-3 * time.Minute)
	changes := []analyzer.Change{{ID: "chg_1", Service: "checkout", Kind: "deployment", Version: "v2",
		Description: "release v2", StartedAt: t0.Add(-6 * time.Minute), FinishedAt: &end}}
	env.OnActivity(NameReadChanges, mock.Anything, ChangesInput{TenantID: tenant, IncidentID: incID, At: t0}).
		Return(ChangesOutput{Changes: changes}, nil).Once()
	dep := agentIn("deployments")
	dep.Changes = changes
	onAgent(env, dep, AgentSummary{AgentRole: "deployments", Findings: 1, Summary: "release v2"}, nil).Once()
	agentOK(env, "logs", 1, "errors").Once()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"deployments", "logs"}, Changes: changes,
	}).Return(SynthesisSummary{Category: "bad_deployment", Confidence: 0.8}, nil).Once()
	env.OnActivity(NameFinishInvestigation, mock.Anything, mock.AnythingOfType("FinishInput")).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("logs", "deployments"))
	require.NoError(t, env.GetWorkflowError())
	var out InvestigationOutcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "bad_deployment", out.Category)
}

// Changes that cannot be read never cost the pass its answer.
func TestInvestigationWithoutReadableChanges(t *testing.T) {
	env := changesEnv(t)
	env.OnActivity(NameReadChanges, mock.Anything, mock.AnythingOfType("ChangesInput")).
		Return(ChangesOutput{}, errors.New("database unavailable"))
	agentOK(env, "logs", 0, "no findings").Once()
	env.OnActivity(NameSynthesizeInvestigation, mock.Anything, SynthesisInput{
		TenantID: tenant, IncidentID: incID, InvestigationID: invID, Completed: []string{"logs"},
	}).Return(SynthesisSummary{Category: "unknown", Confidence: 0.15}, nil).Once()
	env.OnActivity(NameFinishInvestigation, mock.Anything, mock.AnythingOfType("FinishInput")).
		Return(FinishOutput{IncidentStatus: models.StatusInvestigated}, nil).Once()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: InvestigationWorkflowID(incID, 1)})
	env.ExecuteWorkflow(InvestigationWorkflowName, passInput("logs"))
	require.NoError(t, env.GetWorkflowError())
}
