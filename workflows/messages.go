package workflows

import (
	"time"

	"github.com/causeway/causeway/activities"
	"github.com/causeway/causeway/models"
)

// Registered workflow, update and query names.
const (
	IncidentWorkflowName = "IncidentWorkflow"

	// UpdateResolve resolves the incident. It is an update rather than a signal so
	// the API can answer with the outcome (or the validator's refusal) once the
	// resolution is durably recorded.
	UpdateResolve = "resolve"

	// QueryState returns IncidentState.
	QueryState = "state"
)

// IncidentInput starts an IncidentWorkflow. Fields are added, never repurposed, so
// running histories keep replaying.
type IncidentInput struct {
	TenantID   string
	IncidentID string
	Source     string
	Status     string // status the incident was created in
	Severity   string
	Title      string
	CreatedAt  time.Time
	Service    string

	// SearchAttributes says the cluster has Causeway's custom search
	// attributes (SearchAttributeTypes), checked by the starter: a workflow
	// that upserted an attribute the cluster does not know would fail every
	// workflow task.
	SearchAttributes bool

	// Continued marks a run started by continue-as-new: the start-up steps
	// (timeline entry, triage) already happened. The fields below carry the
	// previous run's state over.
	Continued       bool
	Pass            int
	InvestigationID string
	Agents          []string
}

// IncidentState is what the workflow knows of its incident, for queries and as the
// answer of updates.
type IncidentState struct {
	IncidentID string
	Status     string
	ResolvedAt time.Time
	ResolvedBy string

	Severity        string
	Pass            int    // number of the latest pass, 0 before the first
	InvestigationID string // id of the latest pass
	Investigating   bool   // a pass is running
}

// ResolveRequest is the payload of UpdateResolve.
type ResolveRequest struct {
	Actor string
	Note  string
}

// Names of the investigation workflows and of the update that starts a pass.
const (
	InvestigationWorkflowName = "InvestigationWorkflow"
	AgentWorkflowName         = "AgentWorkflow"

	// UpdateStartInvestigation starts a pass. It is an update so the API learns
	// at once whether the pass started, was refused (one already running) or hit
	// the quota.
	UpdateStartInvestigation = "startInvestigation"
)

// Types of the application errors the startInvestigation update fails with; the
// service maps each to its API error.
const (
	ErrTypeInvestigationInProgress = "InvestigationInProgress"
	ErrTypeQuotaExceeded           = "InvestigationQuotaExceeded"
	ErrTypeIncidentResolved        = "IncidentResolved"
)

// DefaultAgentTimeout is how long a pass waits for its agents before it
// synthesizes whatever finished; the rest are reported as timed out.
const DefaultAgentTimeout = 5 * time.Minute

// StartInvestigationRequest is the payload of UpdateStartInvestigation. Empty
// Agents means the previous pass's agents, else triage's choice; Context is new
// supplemental text recorded with the pass.
type StartInvestigationRequest struct {
	Agents  []string
	Context string
	Actor   string
}

// StartInvestigationResult answers UpdateStartInvestigation.
type StartInvestigationResult struct {
	InvestigationID string
	Pass            int
}

// InvestigationInput starts one InvestigationWorkflow (one pass).
type InvestigationInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Pass            int
	Agents          []string
	// AgentTimeout bounds the wait for agents; zero means DefaultAgentTimeout.
	AgentTimeout time.Duration
	// Service is the incident's service, for the search attributes.
	Service string
	// SearchAttributes is the incident workflow's IncidentInput.SearchAttributes.
	SearchAttributes bool
}

// InvestigationOutcome is how a pass ended, and the incident's status afterwards.
type InvestigationOutcome struct {
	InvestigationID string
	Status          string
	IncidentStatus  string
	Category        string
	Confidence      float64
	Coverage        []models.Coverage
	Reason          string
}

// Names of the remediation workflow and of the updates that decide and execute a
// remediation. They are updates rather than signals so the validator refuses a
// second decision atomically and the API can answer 409 at once.
const (
	RemediationWorkflowName = "RemediationWorkflow"

	UpdateApproveRemediation = "approve"
	UpdateRejectRemediation  = "reject"
	UpdateExecuteRemediation = "execute"

	// QueryRemediationState returns RemediationState.
	QueryRemediationState = "remediationState"
)

// Types of the application errors the remediation updates fail with; the service
// maps each to its API error.
const (
	ErrTypeRemediationInvalidStatus = "RemediationInvalidStatus"
	ErrTypeRemediationPlanChanged   = "RemediationPlanChanged"
)

// DefaultApprovalTimeout is how long a proposal waits for a decision before it
// expires as rejected: a week-old plan was made for a system that has moved on.
const DefaultApprovalTimeout = 7 * 24 * time.Hour

// DefaultExecuteTimeout is how long an approval waits for execute before it
// expires: the approver judged the system as it was then, and a plan approved
// during one shift should not run unreviewed in another.
const DefaultExecuteTimeout = 24 * time.Hour

// RemediationInput starts a RemediationWorkflow. PlanHash is the digest of the
// rendered steps the approval must name.
type RemediationInput struct {
	TenantID      string
	IncidentID    string
	RemediationID string
	PlanHash      string
	Steps         []activities.StepRef
	// ApprovalTimeout bounds the wait for a decision; zero means
	// DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// ExecuteTimeout bounds the wait for execute after an approval; zero means
	// DefaultExecuteTimeout.
	ExecuteTimeout time.Duration
}

// RemediationState is what the workflow knows of its remediation, for queries
// and as the answer of updates.
type RemediationState struct {
	RemediationID string
	Status        string
	ApprovedBy    string
	RejectedBy    string
	RejectReason  string
	ExecutedBy    string
	FailedStep    int // index of the failed step, -1 when none failed
	FailureReason string
}

// ApproveRequest is the payload of UpdateApproveRemediation: who approves, and
// the plan hash of the steps they were shown.
type ApproveRequest struct {
	Actor    string
	PlanHash string
}

// RejectRequest is the payload of UpdateRejectRemediation.
type RejectRequest struct {
	Actor  string
	Reason string
}

// ExecuteRequest is the payload of UpdateExecuteRemediation.
type ExecuteRequest struct {
	Actor string
}
