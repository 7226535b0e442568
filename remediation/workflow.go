package remediation

import (
	"errors"
	"fmt"

	"github.com/causeway/causeway/temporalx"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Workflow owns one proposed remediation: it waits for an approval or
// a rejection (expiring as rejected after the approval timeout), then for
// execute, then runs the steps in order, each an activity with its type's
// timeout and retry policy. A failed step stops the run; later steps stay
// pending. Decisions and execute are updates whose validators refuse anything
// but the one legal move, so of two concurrent approvals exactly one wins. Its ID
// is WorkflowID(remediation id).
func Workflow(ctx workflow.Context, in Input) (State, error) {
	w := &remediation{in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID,
		state: State{RemediationID: in.RemediationID, Status: AwaitingApproval, FailedStep: -1}}
	if w.in.ApprovalTimeout <= 0 {
		w.in.ApprovalTimeout = DefaultApprovalTimeout
	}
	if w.in.ExecuteTimeout <= 0 {
		w.in.ExecuteTimeout = DefaultExecuteTimeout
	}
	if err := w.setup(ctx); err != nil {
		return w.state, err
	}
	return w.run(ctx)
}

type remediation struct {
	in    Input
	id    string
	state State
	begun bool // execution is recorded in the database; steps may run
}

func (w *remediation) setup(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) { return w.state, nil }); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove, w.approve, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req ApproveRequest) error { return w.canApprove(req) },
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateReject, w.reject, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req RejectRequest) error {
			return w.expect(AwaitingApproval)
		},
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateExecute, w.execute, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req ExecuteRequest) error { return w.expect(Approved) },
	})
}

func (w *remediation) run(ctx workflow.Context) (State, error) {
	// Wait for a person to decide; an unanswered proposal expires as rejected.
	decided, err := workflow.AwaitWithTimeout(ctx, w.in.ApprovalTimeout, func() bool {
		return w.state.Status != AwaitingApproval
	})
	if err != nil {
		return w.state, err
	}
	if !decided {
		reason := fmt.Sprintf("no decision within %s; the proposal expired", w.in.ApprovalTimeout)
		if _, err := w.decide(ctx, Rejected, "causeway", reason); err != nil {
			return w.state, err
		}
	}
	if w.state.Status != Rejected {
		// Approved: wait for execute, and for the execution to be recorded.
		begun, err := w.awaitExecute(ctx)
		if err != nil {
			return w.state, err
		}
		if begun {
			if err := w.runSteps(ctx); err != nil {
				return w.state, err
			}
			if w.state.Status == Completed {
				if err := w.verify(ctx); err != nil {
					return w.state, err
				}
			}
		}
	}
	return w.state, workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// awaitExecute waits for an execution to be recorded. An approval nobody acts on
// within ExecuteTimeout expires as rejected, so the workflow ends and a stale plan
// cannot run days later. Histories from before the expiry existed wait forever,
// as they did then.
func (w *remediation) awaitExecute(ctx workflow.Context) (bool, error) {
	if workflow.GetVersion(ctx, versionApprovalExpiry, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return true, workflow.Await(ctx, func() bool { return w.begun })
	}
	begun, err := workflow.AwaitWithTimeout(ctx, w.in.ExecuteTimeout, func() bool { return w.begun })
	if err != nil || begun {
		return begun, err
	}
	// An execute already claimed (its activity in flight) settles first: it
	// either begins the run or hands the approval back.
	if err := workflow.Await(ctx, func() bool { return w.begun || w.state.Status == Approved }); err != nil {
		return false, err
	}
	if w.begun {
		return true, nil
	}
	reason := fmt.Sprintf("approved by %s but not executed within %s; the approval expired", w.state.ApprovedBy, w.in.ExecuteTimeout)
	_, err = w.decideFrom(ctx, Approved, Rejected, "causeway", reason)
	return false, err
}

// versionApprovalExpiry marks the change that made approvals expire.
const versionApprovalExpiry = "approval-expiry"

// runSteps runs the steps in order and records the outcome; the first failure
// stops the run.
func (w *remediation) runSteps(ctx workflow.Context) error {
	status, reason := Completed, ""
	for _, s := range w.in.Steps {
		err := workflow.ExecuteActivity(withStepOptions(ctx, s.Type), NameRunRemediationStep, StepInput{
			TenantID: w.in.TenantID, RemediationID: w.in.RemediationID, Index: s.Index, Type: s.Type,
			IdempotencyKey: StepIdempotencyKey(w.id, s.Index),
		}).Get(ctx, nil)
		if err != nil {
			status, reason = Failed, fmt.Sprintf("step %d (%s) failed: %s", s.Index, s.Type, stepFailure(err))
			w.state.FailedStep = s.Index
			break
		}
	}
	msg := fmt.Sprintf("Remediation %s completed: %d steps succeeded", w.in.RemediationID, len(w.in.Steps))
	if status == Failed {
		msg = fmt.Sprintf("Remediation %s failed: %s", w.in.RemediationID, reason)
	}
	err := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameFinishRemediation, FinishRemediationInput{
		TenantID: w.in.TenantID, RemediationID: w.in.RemediationID, Status: status, FailedStep: w.state.FailedStep,
		Reason: reason, At: workflow.Now(ctx), Message: msg, DedupKey: temporalx.TimelineKey(w.id, "finished"),
	}).Get(ctx, nil)
	if err != nil {
		return err
	}
	w.state.Status, w.state.FailureReason = status, reason
	return nil
}

// stepFailure is the executor's own words, without activity wrapping.
func stepFailure(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return fmt.Sprintf("%s (%s)", app.Message(), app.Type())
	}
	if temporalx.IsTimeout(err) {
		return "step timed out"
	}
	return "step failed"
}

// expect refuses an update unless the remediation is in status.
func (w *remediation) expect(status string) error {
	if w.state.Status != status {
		return temporal.NewApplicationError(fmt.Sprintf("remediation is %s, not %s", w.state.Status, status), ErrTypeInvalidStatus)
	}
	return nil
}

// canApprove also binds the approval to the plan: a request naming another plan
// hash than the one proposed is refused.
func (w *remediation) canApprove(req ApproveRequest) error {
	if err := w.expect(AwaitingApproval); err != nil {
		return err
	}
	if req.PlanHash != w.in.PlanHash {
		return temporal.NewApplicationError("the plan changed since it was shown; reload and review it", ErrTypePlanChanged)
	}
	return nil
}

// approve and the other handlers check again (validators of updates delivered
// together all run before any handler) and claim the new status before their
// activity runs, so a concurrent second request is refused.
func (w *remediation) approve(ctx workflow.Context, req ApproveRequest) (State, error) {
	if err := w.canApprove(req); err != nil {
		return w.state, err
	}
	w.state.ApprovedBy = req.Actor
	return w.decide(ctx, Approved, req.Actor, "")
}

func (w *remediation) reject(ctx workflow.Context, req RejectRequest) (State, error) {
	if err := w.expect(AwaitingApproval); err != nil {
		return w.state, err
	}
	return w.decide(ctx, Rejected, req.Actor, req.Reason)
}

// decide records an approval or rejection (a person's, or the expiry's) of a
// proposal awaiting approval.
func (w *remediation) decide(ctx workflow.Context, status, actor, reason string) (State, error) {
	return w.decideFrom(ctx, "", status, actor, reason)
}

// decideFrom records a decision on the remediation in status from (empty for a
// proposal awaiting approval, see Decision).
func (w *remediation) decideFrom(ctx workflow.Context, from, status, actor, reason string) (State, error) {
	before := w.state
	w.state.Status = status
	msg := fmt.Sprintf("Remediation %s approved by %s", w.in.RemediationID, actor)
	if status == Rejected {
		w.state.RejectedBy, w.state.RejectReason = actor, reason
		msg = fmt.Sprintf("Remediation %s rejected by %s", w.in.RemediationID, actor)
		if reason != "" {
			msg += ": " + reason
		}
	}
	err := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameDecideRemediation, DecisionInput{
		TenantID: w.in.TenantID, RemediationID: w.in.RemediationID, Status: status, From: from, Actor: actor, Reason: reason,
		At: workflow.Now(ctx), Message: msg, DedupKey: temporalx.TimelineKey(w.id, status),
	}).Get(ctx, nil)
	if err != nil {
		// The decision was not recorded: the remediation stays as it was, open
		// for another decision.
		w.state = before
		if status == Approved {
			w.state.ApprovedBy = ""
		}
	}
	return w.state, err
}

// execute records who started the execution (the incident moves to
// remediating); the main loop then runs the steps.
func (w *remediation) execute(ctx workflow.Context, req ExecuteRequest) (State, error) {
	if err := w.expect(Approved); err != nil {
		return w.state, err
	}
	w.state.Status, w.state.ExecutedBy = Executing, req.Actor
	err := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameBeginRemediation, BeginRemediationInput{
		TenantID: w.in.TenantID, RemediationID: w.in.RemediationID, Actor: req.Actor, At: workflow.Now(ctx),
		Message:  fmt.Sprintf("Remediation %s executing (%d steps), started by %s", w.in.RemediationID, len(w.in.Steps), req.Actor),
		DedupKey: temporalx.TimelineKey(w.id, "executing"),
	}).Get(ctx, nil)
	if err != nil {
		// Nothing was recorded (store errors are retried until they stick, so
		// this one was final): release the claim, or the remediation would
		// refuse every later execute while the main loop waits for ever.
		w.state.Status, w.state.ExecutedBy = Approved, ""
		return w.state, err
	}
	w.begun = true
	return w.state, nil
}
