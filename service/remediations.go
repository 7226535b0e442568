package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/activities"
	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/workflows"
)

// Limits of a runbook, so one stays something a person can review before
// approving it.
const (
	MaxRunbookSteps     = 20
	MaxRejectReasonSize = 2000
)

// Remediations serves runbooks and remediations. Runbooks and the remediation
// listing are read from the database; approve, reject and execute are updates
// of the remediation's workflow, whose validators own the state rules.
type Remediations struct {
	store        *models.Store
	temporal     client.Client
	sqlTargets   activities.SQLTargets
	allowPrivate bool
	now          func() time.Time
}

// NewRemediations wires the remediation service. sqlTargets are the configured
// target databases and who may use each, against which sql_migration steps are
// validated;
// allowPrivate is EGRESS_ALLOW_PRIVATE, so step URLs the egress client would
// refuse are refused when the runbook is created.
func NewRemediations(store *models.Store, tc client.Client, sqlTargets activities.SQLTargets, allowPrivate bool) *Remediations {
	return &Remediations{store: store, temporal: tc, sqlTargets: sqlTargets, allowPrivate: allowPrivate, now: time.Now}
}

// RunbookInput is the body of POST /v1/runbooks.
type RunbookInput struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Match       models.RunbookMatch  `json:"match"`
	Steps       []models.RunbookStep `json:"steps"`
}

// CreateRunbook validates and stores a runbook: known categories, and steps whose
// types are implemented executors with well-formed params, templates of the
// allowed forms in allowed places, and SQL targets the tenant may use.
func (s *Remediations) CreateRunbook(ctx context.Context, p auth.Principal, in RunbookInput) (*models.Runbook, error) {
	if err := s.validRunbook(&in, p.TenantID); err != nil {
		return nil, err
	}
	rb := &models.Runbook{ID: models.NewID("rb"), TenantID: p.TenantID, Name: in.Name, Description: in.Description,
		Match: in.Match, Steps: in.Steps, CreatedAt: s.now().UTC()}
	if err := s.store.CreateRunbook(ctx, rb); err != nil {
		return nil, unavailable("the database", err)
	}
	return rb, nil
}

func (s *Remediations) validRunbook(in *RunbookInput, tenantID string) error {
	in.Name, in.Description = strings.TrimSpace(in.Name), strings.TrimSpace(in.Description)
	if n := utf8.RuneCountInString(in.Name); n == 0 || n > 200 {
		return validation("name is required and must be at most 200 characters")
	}
	if utf8.RuneCountInString(in.Description) > 4000 {
		return validation("description must be at most 4000 characters")
	}
	if len(in.Match.Categories) == 0 {
		return validation("match.categories must name at least one root-cause category")
	}
	for _, c := range in.Match.Categories {
		if !analyzer.ValidCategory(c) {
			return validation("unknown category %q; valid categories are %s", c, strings.Join(analyzer.Categories, ", "))
		}
	}
	if len(in.Steps) == 0 || len(in.Steps) > MaxRunbookSteps {
		return validation("steps must hold 1 to %d steps", MaxRunbookSteps)
	}
	for i := range in.Steps {
		st := &in.Steps[i]
		if st.Params == nil {
			st.Params = map[string]any{}
		}
		if err := activities.ValidateStep(st.Type, st.Params, s.sqlTargets, tenantID, s.allowPrivate); err != nil {
			return validation("steps[%d]: %v", i, err)
		}
	}
	if b, _ := json.Marshal(in.Steps); len(b) > activities.MaxPlanBytes {
		return validation("steps must be at most %d bytes as JSON, got %d", activities.MaxPlanBytes, len(b))
	}
	return nil
}

// ListRunbooks returns the tenant's runbooks.
func (s *Remediations) ListRunbooks(ctx context.Context, p auth.Principal) ([]models.Runbook, error) {
	out, err := s.store.Runbooks(ctx, p.TenantID)
	if err != nil {
		return nil, unavailable("the database", err)
	}
	return out, nil
}

// DeleteRunbook retires a runbook; remediations already proposed from it stay.
func (s *Remediations) DeleteRunbook(ctx context.Context, p auth.Principal, id string) error {
	err := s.store.DeleteRunbook(ctx, p.TenantID, id, s.now())
	if errors.Is(err, models.ErrNotFound) {
		return Errorf(CodeNotFound, "no runbook with id %q", id)
	}
	if err != nil {
		return unavailable("the database", err)
	}
	return nil
}

// List returns the incident's remediations with step-level progress.
func (s *Remediations) List(ctx context.Context, p auth.Principal, incidentID string) ([]models.Remediation, error) {
	if _, err := findIncident(ctx, s.store, p.TenantID, incidentID); err != nil {
		return nil, err
	}
	rems, err := s.store.Remediations(ctx, p.TenantID, incidentID)
	if err != nil {
		return nil, unavailable("the database", err)
	}
	return rems, nil
}

// Get returns one remediation with its steps; another tenant's is not found.
func (s *Remediations) Get(ctx context.Context, p auth.Principal, id string) (*models.Remediation, error) {
	return s.remediation(ctx, p.TenantID, id)
}

// ApproveInput is the optional body of approve: the plan hash the caller
// reviewed. Without it, the plan the service loads is the one approved.
type ApproveInput struct {
	PlanHash string `json:"planHash"`
}

// Approve approves a remediation awaiting approval, bound to its plan hash.
func (s *Remediations) Approve(ctx context.Context, p auth.Principal, id string, in ApproveInput) error {
	rem, err := s.remediation(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	hash := rem.PlanHash
	if in.PlanHash != "" {
		hash = in.PlanHash
	}
	return s.update(ctx, rem, workflows.UpdateApproveRemediation, models.RemediationAwaitingApproval,
		workflows.ApproveRequest{Actor: p.Email, PlanHash: hash})
}

// RejectInput is the body of reject.
type RejectInput struct {
	Reason string `json:"reason"`
}

// Reject rejects a remediation awaiting approval.
func (s *Remediations) Reject(ctx context.Context, p auth.Principal, id string, in RejectInput) error {
	reason := strings.TrimSpace(in.Reason)
	if utf8.RuneCountInString(reason) > MaxRejectReasonSize {
		return validation("reason must be at most %d characters", MaxRejectReasonSize)
	}
	rem, err := s.remediation(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	return s.update(ctx, rem, workflows.UpdateRejectRemediation, models.RemediationAwaitingApproval,
		workflows.RejectRequest{Actor: p.Email, Reason: reason})
}

// Execute starts an approved remediation; the steps then run asynchronously.
func (s *Remediations) Execute(ctx context.Context, p auth.Principal, id string) error {
	rem, err := s.remediation(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	return s.update(ctx, rem, workflows.UpdateExecuteRemediation, models.RemediationApproved, workflows.ExecuteRequest{Actor: p.Email})
}

// update sends one update to the remediation's workflow. Every request gets its
// own update ID, so of concurrent identical requests the validator admits one
// and refuses the rest (409). A remediation already past want is refused here
// without asking Temporal, which also covers workflows that have ended.
func (s *Remediations) update(ctx context.Context, rem *models.Remediation, name, want string, arg any) error {
	if rem.Status != want {
		return invalidStatus(rem, want)
	}
	wctx, cancel := workflowCall(ctx)
	defer cancel()
	err := s.send(wctx, rem.ID, name, arg)
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case workflows.ErrTypeRemediationPlanChanged:
			return Errorf(CodePlanChanged, "the plan of remediation %s is not the one approved; reload it and review again", rem.ID)
		case workflows.ErrTypeRemediationInvalidStatus:
			return s.refused(ctx, rem, want)
		}
	}
	if again, gerr := s.store.GetRemediation(ctx, rem.TenantID, rem.ID); gerr == nil && again.Status != want {
		return invalidStatus(again, want)
	}
	return unavailable("the workflow service", err)
}

// A remediation is recorded a moment before its workflow starts; an update in
// between is retried for up to startAttempts × startDelay.
const (
	startAttempts = 50
	startDelay    = 100 * time.Millisecond
)

func (s *Remediations) send(ctx context.Context, remID, name string, arg any) error {
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   workflows.RemediationWorkflowID(remID),
		UpdateID:     name + "-" + models.NewID("upd"),
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	for attempt := 0; ; attempt++ {
		handle, err := s.temporal.UpdateWorkflow(ctx, opts)
		if err == nil {
			return handle.Get(ctx, nil)
		}
		var missing *serviceerror.NotFound
		if attempt >= startAttempts || !errors.As(err, &missing) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(startDelay):
		}
	}
}

// refused answers a validator's refusal with the status the database shows now.
func (s *Remediations) refused(ctx context.Context, rem *models.Remediation, want string) error {
	if again, err := s.store.GetRemediation(ctx, rem.TenantID, rem.ID); err == nil && again.Status != want {
		return invalidStatus(again, want)
	}
	return Errorf(CodeInvalidStatus, "remediation %s is no longer %s", rem.ID, want)
}

func invalidStatus(rem *models.Remediation, want string) error {
	return Errorf(CodeInvalidStatus, "remediation %s is %s; this needs it %s", rem.ID, rem.Status, want)
}

func (s *Remediations) remediation(ctx context.Context, tenantID, id string) (*models.Remediation, error) {
	rem, err := s.store.GetRemediation(ctx, tenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, Errorf(CodeRemediationNotFound, "no remediation with id %q", id)
	}
	if err != nil {
		return nil, unavailable("the database", fmt.Errorf("remediation %s: %w", id, err))
	}
	return rem, nil
}
