package investigation

import (
	"time"

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
// service maps each to its API error. ErrTypeQuotaExceeded is also the type of
// the BeginInvestigation activity's refusal, so the update passes it on as is.
const (
	ErrTypeInvestigationInProgress = "InvestigationInProgress"
	ErrTypeQuotaExceeded           = "QuotaExceeded"
	ErrTypeIncidentResolved        = "IncidentResolved"

	// errTypeQuotaExceededBefore is the update's quota refusal from workers
	// of earlier releases, which an API may still hear during a rolling
	// upgrade.
	errTypeQuotaExceededBefore = "InvestigationQuotaExceeded"
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
	// FinishedPass is the pass the caller saw recorded as finished. A pass is
	// recorded a moment before its workflow reports back to the incident's;
	// while the incident still follows that pass, the update waits for it
	// (up to finishingPassWait) instead of refusing as in progress.
	FinishedPass int `json:",omitempty"`
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
