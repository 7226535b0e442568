package remediation

import (
	"fmt"
	"time"
)

// Names of the remediation workflow and of the updates that decide and execute a
// remediation. They are updates rather than signals so the validator refuses a
// second decision atomically and the API can answer 409 at once.
const (
	WorkflowName = "RemediationWorkflow"

	UpdateApprove = "approve"
	UpdateReject  = "reject"
	UpdateExecute = "execute"

	// QueryState returns State.
	QueryState = "remediationState"
)

// ErrTypePlanChanged is the application error an approval naming another
// plan fails with; the service maps it to plan_changed. A refusal for the
// remediation's state fails with ErrTypeInvalidStatus.
const ErrTypePlanChanged = "RemediationPlanChanged"

// DefaultApprovalTimeout is how long a proposal waits for a decision before it
// expires as rejected: a week-old plan was made for a system that has moved on.
const DefaultApprovalTimeout = 7 * 24 * time.Hour

// DefaultExecuteTimeout is how long an approval waits for execute before it
// expires: the approver judged the system as it was then, and a plan approved
// during one shift should not run unreviewed in another.
const DefaultExecuteTimeout = 24 * time.Hour

// Input starts a Workflow. PlanHash is the digest of the
// rendered steps the approval must name.
type Input struct {
	TenantID      string
	IncidentID    string
	RemediationID string
	PlanHash      string
	Steps         []StepRef
	// ApprovalTimeout bounds the wait for a decision; zero means
	// DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// ExecuteTimeout bounds the wait for execute after an approval; zero means
	// DefaultExecuteTimeout.
	ExecuteTimeout time.Duration
}

// State is what the workflow knows of its remediation, for queries
// and as the answer of updates.
type State struct {
	RemediationID string
	Status        string
	ApprovedBy    string
	RejectedBy    string
	RejectReason  string
	ExecutedBy    string
	FailedStep    int // index of the failed step, -1 when none failed
	FailureReason string
	// Outcome is what the verification after completed steps found
	// (models.OutcomeRecovered, …); empty until then.
	Outcome string
}

// ApproveRequest is the payload of UpdateApprove: who approves, and
// the plan hash of the steps they were shown.
type ApproveRequest struct {
	Actor    string
	PlanHash string
}

// RejectRequest is the payload of UpdateReject.
type RejectRequest struct {
	Actor  string
	Reason string
}

// ExecuteRequest is the payload of UpdateExecute.
type ExecuteRequest struct {
	Actor string
}

// WorkflowID names the workflow of one remediation; the remediation
// id is its business key, so a proposal retried after a crash finds its workflow.
func WorkflowID(remediationID string) string { return "remediation/" + remediationID }

// StepIdempotencyKey is the key a remediation step sends to its target: the
// workflow and the step, the same on every retry of that step.
func StepIdempotencyKey(workflowID string, index int) string {
	return fmt.Sprintf("%s/step/%d", workflowID, index)
}
