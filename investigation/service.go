package investigation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// MaxContextLength bounds one supplemental context entry: enough for a stack trace
// or a page of logs, small enough to keep prompts affordable.
const MaxContextLength = 20000

// Investigations serves the investigation endpoints. Starting a pass is an update
// of the incident's workflow, which owns the one-pass-at-a-time rule and the
// quota; results are read from the database.
type Investigations struct {
	store      *models.Store
	passes     *Store
	temporal   client.Client
	dispatcher *Dispatcher
	log        *slog.Logger
	now        func() time.Time
}

// NewInvestigations wires the investigation service.
func NewInvestigations(store *models.Store, tc client.Client, d *Dispatcher, log *slog.Logger) *Investigations {
	return &Investigations{store: store, passes: NewStore(store.DB()), temporal: tc, dispatcher: d, log: log, now: time.Now}
}

// StartInvestigationInput is the body of POST /v1/investigation/{id}/start.
type StartInvestigationInput struct {
	Agents  []string `json:"agents"`
	Context string   `json:"context"`
	// IdempotencyKey is the request's Idempotency-Key header; see startPass.
	IdempotencyKey string `json:"-"`
}

// MaxIdempotencyKeyLength bounds the Idempotency-Key header.
const MaxIdempotencyKeyLength = 255

// StartedInvestigation identifies the pass a start request began.
type StartedInvestigation struct {
	IncidentID      string
	InvestigationID string
}

// Start begins an investigation pass (one unit of the monthly quota). A retried
// identical request joins the pass the first one started.
func (s *Investigations) Start(ctx context.Context, p auth.Principal, incidentID string, in StartInvestigationInput) (StartedInvestigation, error) {
	if err := validAgents(in.Agents); err != nil {
		return StartedInvestigation{}, err
	}
	if err := validContext(in.Context, false); err != nil {
		return StartedInvestigation{}, err
	}
	if err := validIdempotencyKey(in.IdempotencyKey); err != nil {
		return StartedInvestigation{}, err
	}
	req := StartInvestigationRequest{Agents: in.Agents, Context: strings.TrimSpace(in.Context), Actor: p.Email}
	res, err := s.startPass(ctx, p, incidentID, "start", in.IdempotencyKey, req)
	if err != nil {
		return StartedInvestigation{}, err
	}
	return StartedInvestigation{IncidentID: incidentID, InvestigationID: res.InvestigationID}, nil
}

// Latest returns the incident's most recent pass. Before the first pass (and for
// another tenant's incident) it is not found.
func (s *Investigations) Latest(ctx context.Context, p auth.Principal, incidentID string) (*models.Investigation, error) {
	if _, err := FindIncident(ctx, s.store, p.TenantID, incidentID); err != nil {
		return nil, err
	}
	inv, err := s.store.LatestInvestigation(ctx, p.TenantID, incidentID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "no investigation has started for incident %q", incidentID)
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return inv, nil
}

// AddContextInput is the body of POST /v1/investigation/{id}/context.
type AddContextInput struct {
	Context         string   `json:"context"`
	Reinvestigate   bool     `json:"reinvestigate"`
	SuggestedAgents []string `json:"suggestedAgents"`
	// IdempotencyKey is the request's Idempotency-Key header; it only matters
	// with Reinvestigate (see startPass).
	IdempotencyKey string `json:"-"`
}

// ContextAdded reports what became of the context.
type ContextAdded struct {
	Message         string
	Reinvestigating bool
}

// AddContext stores supplemental context for the incident's next passes. With
// Reinvestigate it starts a pass over all context at once instead, and the entry
// is recorded with that pass, so a refused start (409, 429) stores nothing.
func (s *Investigations) AddContext(ctx context.Context, p auth.Principal, incidentID string, in AddContextInput) (ContextAdded, error) {
	if err := validContext(in.Context, true); err != nil {
		return ContextAdded{}, err
	}
	if err := validAgents(in.SuggestedAgents); err != nil {
		return ContextAdded{}, err
	}
	if err := validIdempotencyKey(in.IdempotencyKey); err != nil {
		return ContextAdded{}, err
	}
	text := strings.TrimSpace(in.Context)
	if in.Reinvestigate {
		req := StartInvestigationRequest{Agents: in.SuggestedAgents, Context: text, Actor: p.Email}
		res, err := s.startPass(ctx, p, incidentID, "context", in.IdempotencyKey, req)
		if err != nil {
			return ContextAdded{}, err
		}
		return ContextAdded{Reinvestigating: true,
			Message: fmt.Sprintf("Context added; investigation pass %d (%s) started with all context", res.Pass, res.InvestigationID)}, nil
	}
	inc, err := FindIncident(ctx, s.store, p.TenantID, incidentID)
	if err != nil {
		return ContextAdded{}, err
	}
	err = s.passes.AddInvestigationContextWithin(ctx, &models.InvestigationContext{
		TenantID: inc.TenantID, IncidentID: inc.ID, Content: text, Actor: p.Email,
		CreatedAt: s.now().UTC(), DedupKey: inc.ID + "/context/" + models.NewID("ctx"),
	}, models.IncidentContextLimits)
	if err != nil {
		return ContextAdded{}, contextError(err)
	}
	return ContextAdded{Message: "Context added; it will be used by the next investigation pass"}, nil
}

// startPass sends the startInvestigation update. Without an idempotency key the
// update ID is the next pass number plus a digest of the request, so a retried
// request joins its first attempt while a different concurrent request is
// refused as in progress; a retry that arrives after that pass has ended starts
// another. With a key the update ID is derived from the key alone, and the
// incident's workflow run remembers every update it completed, so a request
// repeated with the same key gets the first one's answer (the same pass, or the
// same refusal) and never spends quota twice. A run continues as new only once
// its history is long, between passes; a key is not remembered across that.
func (s *Investigations) startPass(ctx context.Context, p auth.Principal, incidentID, kind, idempotencyKey string, req StartInvestigationRequest) (StartInvestigationResult, error) {
	var res StartInvestigationResult
	inc, err := FindIncident(ctx, s.store, p.TenantID, incidentID)
	if err != nil {
		return res, err
	}
	if inc.Status == models.StatusResolved {
		return res, errcode.New(errcode.InvalidStatus, "incident %s is resolved; it cannot be investigated again", incidentID)
	}
	if req.Context != "" {
		if err := s.contextFits(ctx, inc, req.Context); err != nil {
			return res, err
		}
	}
	wctx, cancel := temporalx.Call(ctx)
	defer cancel()
	if inc.WorkflowStartedAt == nil {
		if err := s.dispatcher.Ensure(wctx, inc); err != nil {
			return res, errcode.Down("the workflow service", err)
		}
	}
	last, err := s.store.LatestInvestigation(ctx, p.TenantID, incidentID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return res, errcode.Down("the database", err)
	}
	updateID := startUpdateID(last, kind, idempotencyKey, req)
	// A pass recorded finished whose workflow has not yet reported back is
	// waited for by the update's handler, not refused.
	if last != nil && last.Status != models.InvestigationRunning {
		req.FinishedPass = last.Pass
	}
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   IncidentWorkflowID(incidentID),
		UpdateID:     updateID,
		UpdateName:   UpdateStartInvestigation,
		Args:         []any{req},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	handle, err := s.temporal.UpdateWorkflow(wctx, opts)
	if err == nil {
		err = handle.Get(wctx, &res)
	}
	if err != nil {
		return res, s.startError(ctx, p, incidentID, err)
	}
	return res, nil
}

// startUpdateID is the ID of a start request's update (see startPass): from
// the idempotency key alone when there is one, else from the next pass number
// after last (nil when the incident has none) and a digest of the request.
func startUpdateID(last *models.Investigation, kind, idempotencyKey string, req StartInvestigationRequest) string {
	if idempotencyKey != "" {
		sum := sha256.Sum256([]byte(idempotencyKey))
		return fmt.Sprintf("%s-key-%s", kind, hex.EncodeToString(sum[:16]))
	}
	next := 1
	if last != nil {
		next = last.Pass + 1
	}
	digest, _ := json.Marshal([]any{req.Agents, req.Context})
	sum := sha256.Sum256(digest)
	return fmt.Sprintf("%s-%d-%s", kind, next, hex.EncodeToString(sum[:6]))
}

// startError turns the workflow's refusal into the API's answer.
func (s *Investigations) startError(ctx context.Context, p auth.Principal, incidentID string, err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case ErrTypeInvestigationInProgress:
			return errcode.New(errcode.InvestigationInProgress, "an investigation of incident %s is already running; wait for it to finish", incidentID)
		case ErrTypeQuotaExceeded, errTypeQuotaExceededBefore:
			return errcode.New(errcode.InvestigationQuota, "the monthly investigation quota of this tenant is used up; it resets on the 1st (UTC)")
		case ErrTypeIncidentResolved:
			return errcode.New(errcode.InvalidStatus, "incident %s is resolved; it cannot be investigated again", incidentID)
		}
	}
	if again, gerr := FindIncident(ctx, s.store, p.TenantID, incidentID); gerr == nil && again.Status == models.StatusResolved {
		return errcode.New(errcode.InvalidStatus, "incident %s is resolved; it cannot be investigated again", incidentID)
	}
	return errcode.Down("the workflow service", err)
}

// contextFits refuses new context for a pass when the incident's context would
// exceed models.IncidentContextLimits. The pass records the entry later, in its own
// transaction; a concurrent addition can slip past this check once, and what
// an agent reads stays bounded by the analyzer either way.
func (s *Investigations) contextFits(ctx context.Context, inc *models.Incident, text string) error {
	n, b, err := s.store.ContextUsage(ctx, inc.TenantID, inc.ID)
	if err != nil {
		return errcode.Down("the database", err)
	}
	lim := models.IncidentContextLimits
	if !lim.Admit(n, b, len(text)) {
		return contextError(&ContextLimitError{Limits: lim, Entries: n, Bytes: b, Adding: len(text)})
	}
	return nil
}

// contextError answers a refused context entry with the limit it hit.
func contextError(err error) error {
	var full *ContextLimitError
	if !errors.As(err, &full) {
		return errcode.Down("the database", err)
	}
	if full.Entries >= full.Limits.Entries {
		return errcode.Invalid("context: this incident already holds %d context entries, the most one incident may hold", full.Limits.Entries)
	}
	return errcode.Invalid("context: an incident's context is limited to %d bytes in all; it holds %d and this entry has %d",
		full.Limits.Bytes, full.Bytes, full.Adding)
}

func validAgents(agents []string) error {
	seen := map[string]bool{}
	for _, a := range agents {
		if !analyzer.ValidRole(a) {
			return errcode.Invalid("unknown agent %q; valid agents are %s", a, strings.Join(analyzer.Roles, ", "))
		}
		if seen[a] {
			return errcode.Invalid("agent %q is listed twice", a)
		}
		seen[a] = true
	}
	return nil
}

// validIdempotencyKey accepts what clients send as keys in practice (UUIDs,
// ULIDs, hashes): 1 to 255 visible ASCII characters, or no key at all.
func validIdempotencyKey(key string) error {
	if len(key) > MaxIdempotencyKeyLength {
		return errcode.Invalid("Idempotency-Key must be at most %d characters, got %d", MaxIdempotencyKeyLength, len(key))
	}
	for _, r := range key {
		if r < '!' || r > '~' {
			return errcode.Invalid("Idempotency-Key must be visible ASCII characters without spaces")
		}
	}
	return nil
}

func validContext(text string, required bool) error {
	n := utf8.RuneCountInString(strings.TrimSpace(text))
	switch {
	case required && n == 0:
		return errcode.Invalid("context is required")
	case n > MaxContextLength:
		return errcode.Invalid("context must be at most %d characters, got %d", MaxContextLength, n)
	}
	return nil
}
