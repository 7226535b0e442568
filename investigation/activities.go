package investigation

import (
	"context"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/llm"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Registered activity names. Workflows refer to activities by these constants so a
// rename of a Go method never silently changes what running histories call.
const (
	NameSetIncidentStatus = "SetIncidentStatus"
	NameAddTimeline       = "AddTimeline"
)

// Activities holds the dependencies every activity uses.
type Activities struct {
	// Store reads incidents and passes and writes the timeline (the kernel).
	Store *models.Store
	// Passes writes the pipeline's own rows: passes, agent runs, answers.
	Passes *Store
	// LLM runs the specialist agents when an LLM is configured; nil means the
	// offline analyzer answers instead.
	LLM *llm.Client
	// Sealer opens the sealed credentials of the tenants' data sources.
	Sealer *auth.Sealer
	// DataSources reaches the tenants' data sources through the guarded
	// client and dialer with the operator's allowlist; nil disables gathering.
	DataSources *datasources.Connector
	// Gathering bounds each pass's data-source queries.
	Gathering Gathering
	// Tools is the budget of each LLM agent's tool use in a pass.
	Tools ToolBudget
	// Released, when set, is told that an investigation may have left the
	// in-flight bound (a pass finished, an incident moved out of triage), so
	// the dispatcher admits the next waiting alert without waiting for its tick.
	Released func()
}

// released tells Released, if anyone listens.
func (a *Activities) released() {
	if a.Released != nil {
		a.Released()
	}
}

// TimelineInput is one timeline entry to record. DedupKey is derived from the
// workflow ID and the step, so the entry is written once however often it retries.
type TimelineInput struct {
	TenantID   string
	IncidentID string
	At         time.Time
	Kind       string
	Message    string
	Actor      string
	DedupKey   string
}

// StatusInput moves an incident to Status and records why.
type StatusInput struct {
	Timeline TimelineInput
	Status   string
}

// StatusOutput is the incident's status before the change, so the workflow can tell
// a fresh change from a retried one.
type StatusOutput struct {
	PreviousStatus string
}

// SetIncidentStatus writes an incident's status and its timeline entry in one
// transaction.
func (a *Activities) SetIncidentStatus(ctx context.Context, in StatusInput) (StatusOutput, error) {
	inc, err := a.Store.SetIncidentStatus(ctx, models.StatusChange{
		TenantID:   in.Timeline.TenantID,
		IncidentID: in.Timeline.IncidentID,
		Status:     in.Status,
		At:         in.Timeline.At,
		Entry:      in.Timeline.entry(),
	})
	if err != nil {
		return StatusOutput{}, temporalx.Classify(err)
	}
	a.released()
	return StatusOutput{PreviousStatus: inc.Status}, nil
}

// AddTimeline records one timeline entry.
func (a *Activities) AddTimeline(ctx context.Context, in TimelineInput) error {
	e := in.entry()
	return temporalx.Classify(a.Store.AddTimeline(ctx, &e))
}

func (in TimelineInput) entry() models.TimelineEntry {
	return models.TimelineEntry{
		TenantID: in.TenantID, IncidentID: in.IncidentID, At: in.At.UTC(),
		Kind: in.Kind, Message: in.Message, Actor: in.Actor, DedupKey: in.DedupKey,
	}
}
