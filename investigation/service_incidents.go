package investigation

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Limits of incident input: the description minimum is an API rule, the title
// bound keeps a title fit for lists and notifications.
const (
	MaxTitleLength       = 200
	MinDescriptionLength = 10
	MaxDescriptionLength = 4000
	MaxNoteLength        = 2000
	startTimeout         = 3 * time.Second
)

// Incidents serves the incident endpoints.
type Incidents struct {
	store      *models.Store
	temporal   client.Client
	dispatcher *Dispatcher
	cursors    *auth.Signer
	log        *slog.Logger
	now        func() time.Time
}

// NewIncidents wires the incident service.
func NewIncidents(store *models.Store, tc client.Client, d *Dispatcher, cursors *auth.Signer, log *slog.Logger) *Incidents {
	return &Incidents{store: store, temporal: tc, dispatcher: d, cursors: cursors, log: log, now: time.Now}
}

// CreateIncidentInput is the body of POST /v1/incidents/chat.
type CreateIncidentInput struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

// Create records a manual incident (spending one event of the monthly quota) and
// starts its workflow. The answer is given once the incident is durable: if
// Temporal cannot be reached right now, the dispatcher starts the workflow later.
func (s *Incidents) Create(ctx context.Context, p auth.Principal, in CreateIncidentInput) (*models.Incident, models.Remaining, error) {
	title := strings.TrimSpace(in.Title)
	desc := strings.TrimSpace(in.Description)
	switch n := utf8.RuneCountInString(desc); {
	case title == "":
		return nil, models.Remaining{}, errcode.Invalid("title is required")
	case utf8.RuneCountInString(title) > MaxTitleLength:
		return nil, models.Remaining{}, errcode.Invalid("title must be at most %d characters", MaxTitleLength)
	case desc == "":
		return nil, models.Remaining{}, errcode.Invalid("description is required (%d to %d characters)", MinDescriptionLength, MaxDescriptionLength)
	case n < MinDescriptionLength || n > MaxDescriptionLength:
		return nil, models.Remaining{}, errcode.Invalid("description must be %d to %d characters, got %d", MinDescriptionLength, MaxDescriptionLength, n)
	}
	now := s.now().UTC()
	inc := &models.Incident{
		ID: models.NewID("inc"), TenantID: p.TenantID, Title: title, Description: desc,
		Severity: models.SeverityMedium, Status: models.StatusOpen, Source: models.SourceManual,
		Tags: map[string]string{}, Metadata: map[string]any{}, CreatedAt: now, UpdatedAt: now, AlertCount: 1,
	}
	rem, err := s.store.CreateIncident(ctx, inc, models.TimelineEntry{
		At: now, Kind: "created", Message: "Incident opened manually", Actor: p.Email, DedupKey: inc.ID + "/created",
	})
	switch {
	case errors.Is(err, models.ErrQuotaExceeded):
		return nil, rem, errcode.New(errcode.EventQuotaExceeded, "the monthly event quota of this tenant is used up; it resets on the 1st (UTC)")
	case err != nil:
		return nil, rem, errcode.Down("the database", err)
	}
	s.startNow(ctx, inc)
	return inc, rem, nil
}

// startNow is the fast path of workflow creation. Failure is only logged: the
// incident is already durable and queued for the dispatcher's sweep.
func (s *Incidents) startNow(ctx context.Context, inc *models.Incident) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	if err := s.dispatcher.Ensure(sctx, inc); err != nil {
		s.log.Warn("incident workflow not started yet; the dispatcher will retry",
			slog.String("tenant_id", inc.TenantID), slog.String("incident_id", inc.ID), slog.Any("error", err))
	}
}

// ListInput holds the raw query parameters of GET /v1/incidents.
type ListInput struct {
	Limit    string
	Cursor   string
	Status   string
	Severity string
}

// Page is one page of the pagination envelope.
type Page struct {
	Items  []models.Incident
	Cursor string // "" when there are no more pages
	Count  int64
}

// List returns one page of the tenant's incidents, newest first.
func (s *Incidents) List(ctx context.Context, p auth.Principal, in ListInput) (Page, error) {
	if in.Status != "" && !models.ValidStatus(in.Status) {
		return Page{}, errcode.Invalid("status must be one of open, triaging, investigating, investigated, remediating, resolved")
	}
	if in.Severity != "" && !models.ValidSeverity(in.Severity) {
		return Page{}, errcode.Invalid("severity must be one of critical, high, medium, low, info")
	}
	query := in.Status + "|" + in.Severity
	limit, after, err := s.cursors.OpenPage(p.TenantID, query, in.Limit, in.Cursor)
	if err != nil {
		return Page{}, err
	}
	items, total, err := s.store.ListIncidents(ctx, p.TenantID, models.IncidentFilter{Status: in.Status, Severity: in.Severity}, after, limit+1)
	if err != nil {
		return Page{}, errcode.Down("the database", err)
	}
	items, next, err := auth.CutPage(s.cursors, p.TenantID, query, limit, items, func(i models.Incident) string { return i.ID })
	if err != nil {
		return Page{}, err
	}
	return Page{Items: items, Cursor: next, Count: total}, nil
}

// Get returns an incident with its timeline. Another tenant's incident is reported
// missing, exactly like one that does not exist.
func (s *Incidents) Get(ctx context.Context, p auth.Principal, id string) (*models.Incident, []models.TimelineEntry, error) {
	inc, err := FindIncident(ctx, s.store, p.TenantID, id)
	if err != nil {
		return nil, nil, err
	}
	tl, err := s.store.Timeline(ctx, p.TenantID, id)
	if err != nil {
		return nil, nil, errcode.Down("the database", err)
	}
	return inc, tl, nil
}

// FindIncident is the one lookup every service uses for a path's incident id:
// missing and another tenant's incident are the same incident_not_found.
func FindIncident(ctx context.Context, store *models.Store, tenantID, id string) (*models.Incident, error) {
	inc, err := store.GetIncident(ctx, tenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.IncidentNotFound, "no incident with id %q", id)
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return inc, nil
}

// Resolve asks the incident's workflow to resolve it and answers once the
// resolution is recorded. The update ID is fixed, so a retried request joins the
// first one instead of resolving twice.
func (s *Incidents) Resolve(ctx context.Context, p auth.Principal, id, note string) (*models.Incident, []models.TimelineEntry, error) {
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxNoteLength {
		return nil, nil, errcode.Invalid("note must be at most %d characters", MaxNoteLength)
	}
	inc, err := FindIncident(ctx, s.store, p.TenantID, id)
	if err != nil {
		return nil, nil, err
	}
	if err := s.ResolveAs(ctx, inc, p.Email, note); err != nil {
		return nil, nil, err
	}
	return s.Get(ctx, p, id)
}

// ResolveAs resolves inc through its IncidentWorkflow's resolve update on behalf of
// actor: a user's e-mail, or a monitoring tool's name when its own "resolved"
// notification closes the incident. Both paths share it so a resolution is always
// recorded by the workflow, once. An incident already resolved is errcode.InvalidStatus.
func (s *Incidents) ResolveAs(ctx context.Context, inc *models.Incident, actor, note string) error {
	if inc.Status == models.StatusResolved {
		return errcode.New(errcode.InvalidStatus, "incident %s is already resolved", inc.ID)
	}
	wctx, cancel := temporalx.Call(ctx)
	defer cancel()
	if inc.WorkflowStartedAt == nil {
		if err := s.dispatcher.Ensure(wctx, inc); err != nil {
			return errcode.Down("the workflow service", err)
		}
	}
	handle, err := s.temporal.UpdateWorkflow(wctx, client.UpdateWorkflowOptions{
		WorkflowID:   IncidentWorkflowID(inc.ID),
		UpdateID:     "resolve",
		UpdateName:   UpdateResolve,
		Args:         []any{ResolveRequest{Actor: actor, Note: note}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(wctx, nil)
	}
	if err != nil {
		// A refusal (already resolved) or a finished workflow: the database says
		// which. Anything else means Temporal is unreachable right now.
		if again, gerr := FindIncident(ctx, s.store, inc.TenantID, inc.ID); gerr == nil && again.Status == models.StatusResolved {
			return errcode.New(errcode.InvalidStatus, "incident %s is already resolved", inc.ID)
		}
		return errcode.Down("the workflow service", err)
	}
	return nil
}
