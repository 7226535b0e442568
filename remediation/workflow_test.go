package remediation

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/temporalx"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	tenant  = "ten_1"
	incID   = "inc_01TEST"
	remID   = "rem_test"
	remWfID = "remediation/rem_test"
	plan    = "plan-hash-1"
)

func remEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(t0)
	Register(env, &Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: remWfID})
	t.Cleanup(func() { env.AssertExpectations(t) })
	return env
}

func remInput() Input {
	return Input{TenantID: tenant, IncidentID: incID, RemediationID: remID, PlanHash: plan,
		Steps: []StepRef{{Index: 0, Type: "http"}, {Index: 1, Type: "wait"}, {Index: 2, Type: "verification"}}}
}

func decision(status, actor, reason, msg string, at time.Time) DecisionInput {
	return DecisionInput{TenantID: tenant, RemediationID: remID, Status: status, Actor: actor, Reason: reason,
		At: at, Message: msg, DedupKey: remWfID + "/" + status}
}

func stepIn(i int, typ string) StepInput {
	return StepInput{TenantID: tenant, RemediationID: remID, Index: i, Type: typ,
		IdempotencyKey: StepIdempotencyKey(remWfID, i)}
}

// updateCB records an update's outcome.
type updateCB struct {
	rejected error
	err      error
	done     bool
}

func (u *updateCB) Accept()                   {}
func (u *updateCB) Reject(err error)          { u.rejected, u.done = err, true }
func (u *updateCB) Complete(_ any, err error) { u.err, u.done = err, true }

func send(env *testsuite.TestWorkflowEnvironment, after time.Duration, name string, arg any) *updateCB {
	cb := &updateCB{}
	env.RegisterDelayedCallback(func() { env.UpdateWorkflow(name, name+after.String(), cb, arg) }, after)
	return cb
}

func expectApproved(env *testsuite.TestWorkflowEnvironment, at time.Time) {
	env.OnActivity(NameDecideRemediation, mock.Anything, decision(Approved, "alice@example.com", "",
		"Remediation rem_test approved by alice@example.com", at)).Return(nil).Once()
}

func expectBegun(env *testsuite.TestWorkflowEnvironment, at time.Time) {
	env.OnActivity(NameBeginRemediation, mock.Anything, BeginRemediationInput{
		TenantID: tenant, RemediationID: remID, Actor: "bob@example.com", At: at,
		Message: "Remediation rem_test executing (3 steps), started by bob@example.com", DedupKey: remWfID + "/executing",
	}).Return(nil).Once()
}

// expectVerified expects the verification of steps finished at finished,
// VerifyAfter (10 min) later, answering outcome.
func expectVerified(env *testsuite.TestWorkflowEnvironment, finished time.Time, outcome string) {
	env.OnActivity(NamePlanVerification, mock.Anything, PlanInput{TenantID: tenant, RemediationID: remID}).
		Return(VerifyPlan{After: 10 * time.Minute}, nil).Once()
	env.OnActivity(NameVerifyRemediation, mock.Anything, VerifyInput{TenantID: tenant, IncidentID: incID, RemediationID: remID,
		Since: finished, DedupKey: remWfID + "/verified"}).
		Return(func(context.Context, VerifyInput) (VerifyOutput, error) {
			// The durable timer ran first: the verification starts VerifyAfter
			// after the steps.
			if now := env.Now(); now.Before(finished.Add(10 * time.Minute)) {
				return VerifyOutput{}, fmt.Errorf("verified at %s, before the wait ended", now)
			}
			return VerifyOutput{Outcome: outcome, Summary: "not recovered on 2 readings"}, nil
		}).Once()
}

// approveExecuteAndRun approves at 1 min, executes at 2 min and runs the
// workflow to its end, which must be a success; it returns the final state.
func approveExecuteAndRun(t *testing.T, env *testsuite.TestWorkflowEnvironment) State {
	t.Helper()
	send(env, time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: plan})
	send(env, 2*time.Minute, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	env.ExecuteWorkflow(WorkflowName, remInput())
	require.NoError(t, env.GetWorkflowError())
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	return st
}

// expectStepsSucceed expects each of remInput's three steps to run once and
// succeed.
func expectStepsSucceed(env *testsuite.TestWorkflowEnvironment) {
	for i, typ := range []string{"http", "wait", "verification"} {
		env.OnActivity(NameRunRemediationStep, mock.Anything, stepIn(i, typ)).Return(nil).Once()
	}
}

func TestRemediationApproveExecuteHappyPath(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(time.Minute))
	expectBegun(env, t0.Add(2*time.Minute))
	expectStepsSucceed(env)
	env.OnActivity(NameFinishRemediation, mock.Anything, FinishRemediationInput{
		TenantID: tenant, RemediationID: remID, Status: Completed, FailedStep: -1,
		At: t0.Add(2 * time.Minute), Message: "Remediation rem_test completed: 3 steps succeeded", DedupKey: remWfID + "/finished",
	}).Return(nil).Once()
	expectVerified(env, t0.Add(2*time.Minute), "recovered")

	early := send(env, 30*time.Second, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	approve := send(env, time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: plan})
	second := send(env, 90*time.Second, UpdateApprove, ApproveRequest{Actor: "carol@example.com", PlanHash: plan})
	exec := send(env, 2*time.Minute, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	env.ExecuteWorkflow(WorkflowName, remInput())

	require.NoError(t, env.GetWorkflowError())
	require.True(t, temporalx.HasErrorType(early.rejected, ErrTypeInvalidStatus), "execute before approval: %v", early.rejected)
	require.NoError(t, approve.rejected)
	require.NoError(t, approve.err)
	require.True(t, temporalx.HasErrorType(second.rejected, ErrTypeInvalidStatus), "second approval: %v", second.rejected)
	require.NoError(t, exec.rejected)
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, State{RemediationID: remID, Status: Completed, ApprovedBy: "alice@example.com",
		ExecutedBy: "bob@example.com", FailedStep: -1, Outcome: "recovered"}, st)
}

// A fix that did not hold starts the next pass, telling it what was tried.
func TestRemediationNotRecoveredReinvestigates(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(time.Minute))
	expectBegun(env, t0.Add(2*time.Minute))
	expectStepsSucceed(env)
	env.OnActivity(NameFinishRemediation, mock.Anything, mock.Anything).Return(nil).Once()
	expectVerified(env, t0.Add(2*time.Minute), "not_recovered")
	env.OnActivity(NameReinvestigateAfter, mock.Anything, ReinvestigateInput{TenantID: tenant, IncidentID: incID, Key: "verify-rem_test",
		Context: "Remediation rem_test completed, but its verification 10m0s after the steps found the system not recovered: not recovered on 2 readings. The signals that evidenced the previous answer still show it."}).
		Return(nil).Once()

	st := approveExecuteAndRun(t, env)
	require.Equal(t, "not_recovered", st.Outcome)
}

func TestRemediationReject(t *testing.T) {
	env := remEnv(t)
	env.OnActivity(NameDecideRemediation, mock.Anything, decision(Rejected, "alice@example.com", "too risky",
		"Remediation rem_test rejected by alice@example.com: too risky", t0.Add(time.Hour))).Return(nil).Once()
	rej := send(env, time.Hour, UpdateReject, RejectRequest{Actor: "alice@example.com", Reason: "too risky"})
	env.ExecuteWorkflow(WorkflowName, remInput())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, rej.rejected)
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, Rejected, st.Status)
	require.Equal(t, "too risky", st.RejectReason)
}

func TestRemediationExpires(t *testing.T) {
	env := remEnv(t)
	env.OnActivity(NameDecideRemediation, mock.Anything, decision(Rejected, "causeway",
		"no decision within 168h0m0s; the proposal expired",
		"Remediation rem_test rejected by causeway: no decision within 168h0m0s; the proposal expired",
		t0.Add(DefaultApprovalTimeout))).Return(nil).Once()
	env.ExecuteWorkflow(WorkflowName, remInput())
	require.NoError(t, env.GetWorkflowError())
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, Rejected, st.Status)
	require.Equal(t, "causeway", st.RejectedBy)
}

func TestRemediationPlanHashMismatchRefused(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(2*time.Minute))
	stale := send(env, time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: "other"})
	good := send(env, 2*time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: plan})
	rej := send(env, 3*time.Minute, UpdateReject, RejectRequest{Actor: "alice@example.com"})
	env.RegisterDelayedCallback(func() { env.CancelWorkflow() }, time.Hour)
	env.ExecuteWorkflow(WorkflowName, remInput())
	require.True(t, temporalx.HasErrorType(stale.rejected, ErrTypePlanChanged), "stale plan: %v", stale.rejected)
	require.NoError(t, good.rejected)
	require.True(t, temporalx.HasErrorType(rej.rejected, ErrTypeInvalidStatus), "reject after approval: %v", rej.rejected)
}

func TestRemediationFailedStepStopsRun(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(time.Minute))
	expectBegun(env, t0.Add(2*time.Minute))
	env.OnActivity(NameRunRemediationStep, mock.Anything, stepIn(0, "http")).Return(nil).Once()
	env.OnActivity(NameRunRemediationStep, mock.Anything, stepIn(1, "wait")).
		Return(temporal.NewNonRetryableApplicationError("params.duration is required", ErrTypeStepBadParams, nil)).Once()
	reason := "step 1 (wait) failed: params.duration is required (StepBadParams)"
	env.OnActivity(NameFinishRemediation, mock.Anything, FinishRemediationInput{
		TenantID: tenant, RemediationID: remID, Status: Failed, FailedStep: 1, Reason: reason,
		At: t0.Add(2 * time.Minute), Message: "Remediation rem_test failed: " + reason, DedupKey: remWfID + "/finished",
	}).Return(nil).Once()
	st := approveExecuteAndRun(t, env)
	require.Equal(t, Failed, st.Status)
	require.Equal(t, 1, st.FailedStep)
	// Step 2 (verification) never ran: no expectation was set for it.
}

// An execute whose record is refused (a final store error) releases its claim:
// the remediation stays approved and a later execute runs it.
func TestRemediationRefusedExecuteCanBeRetried(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(time.Minute))
	env.OnActivity(NameBeginRemediation, mock.Anything, BeginRemediationInput{
		TenantID: tenant, RemediationID: remID, Actor: "bob@example.com", At: t0.Add(2 * time.Minute),
		Message: "Remediation rem_test executing (3 steps), started by bob@example.com", DedupKey: remWfID + "/executing",
	}).Return(temporal.NewNonRetryableApplicationError("not recorded", temporalx.ErrTypeNotFound, nil)).Once()
	env.OnActivity(NameBeginRemediation, mock.Anything, BeginRemediationInput{
		TenantID: tenant, RemediationID: remID, Actor: "bob@example.com", At: t0.Add(3 * time.Minute),
		Message: "Remediation rem_test executing (3 steps), started by bob@example.com", DedupKey: remWfID + "/executing",
	}).Return(nil).Once()
	expectStepsSucceed(env)
	env.OnActivity(NameFinishRemediation, mock.Anything, FinishRemediationInput{
		TenantID: tenant, RemediationID: remID, Status: Completed, FailedStep: -1,
		At: t0.Add(3 * time.Minute), Message: "Remediation rem_test completed: 3 steps succeeded", DedupKey: remWfID + "/finished",
	}).Return(nil).Once()
	expectVerified(env, t0.Add(3*time.Minute), "unknown")

	send(env, time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: plan})
	first := send(env, 2*time.Minute, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	again := send(env, 3*time.Minute, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	env.ExecuteWorkflow(WorkflowName, remInput())

	require.NoError(t, env.GetWorkflowError())
	require.Error(t, first.err, "the refused execute reports its failure")
	require.NoError(t, again.rejected)
	require.NoError(t, again.err)
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, Completed, st.Status)
}

// An approval nobody executes expires as rejected, so the workflow ends and the
// stale plan can no longer run.
func TestRemediationApprovalExpires(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(time.Minute))
	expired := t0.Add(time.Minute + DefaultExecuteTimeout)
	reason := "approved by alice@example.com but not executed within 24h0m0s; the approval expired"
	in := decision(Rejected, "causeway", reason, "Remediation rem_test rejected by causeway: "+reason, expired)
	in.From = Approved
	env.OnActivity(NameDecideRemediation, mock.Anything, in).Return(nil).Once()

	send(env, time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: plan})
	late := send(env, time.Minute+DefaultExecuteTimeout+time.Second, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	env.ExecuteWorkflow(WorkflowName, remInput())

	require.NoError(t, env.GetWorkflowError())
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, State{RemediationID: remID, Status: Rejected, ApprovedBy: "alice@example.com",
		RejectedBy: "causeway", RejectReason: reason, FailedStep: -1}, st)
	// The workflow had ended: the late execute never reached a handler.
	require.False(t, late.done && late.err == nil && late.rejected == nil, "late execute accepted")
}

// An execute whose record is still being written when the approval's deadline
// passes wins: the run goes ahead rather than expiring under it.
func TestRemediationExecuteInFlightAtDeadlineRuns(t *testing.T) {
	env := remEnv(t)
	expectApproved(env, t0.Add(time.Minute))
	claimed := t0.Add(time.Minute + DefaultExecuteTimeout - time.Second)
	env.OnActivity(NameBeginRemediation, mock.Anything, BeginRemediationInput{
		TenantID: tenant, RemediationID: remID, Actor: "bob@example.com", At: claimed,
		Message: "Remediation rem_test executing (3 steps), started by bob@example.com", DedupKey: remWfID + "/executing",
	}).After(time.Minute).Return(nil).Once()
	expectStepsSucceed(env)
	env.OnActivity(NameFinishRemediation, mock.Anything, mock.Anything).Return(nil).Once()
	expectVerified(env, claimed.Add(time.Minute), "recovered")

	send(env, time.Minute, UpdateApprove, ApproveRequest{Actor: "alice@example.com", PlanHash: plan})
	exec := send(env, time.Minute+DefaultExecuteTimeout-time.Second, UpdateExecute, ExecuteRequest{Actor: "bob@example.com"})
	env.ExecuteWorkflow(WorkflowName, remInput())

	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, exec.rejected)
	require.NoError(t, exec.err)
	var st State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, Completed, st.Status)
}
