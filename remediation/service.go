package remediation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Limits of a runbook, so one stays something a person can review before
// approving it.
const (
	MaxRunbookSteps     = 20
	MaxRejectReasonSize = 2000
)

// Service serves runbooks and remediations. Runbooks and the remediation
// listing are read from the database; approve, reject and execute are updates
// of the remediation's workflow, whose validators own the state rules.
type Service struct {
	kernel       *models.Store
	store        *Store
	taskQueue    string
	temporal     client.Client
	sqlTargets   SQLTargets
	allowPrivate bool
	now          func() time.Time
}

// NewService wires the remediation service. sqlTargets are the configured
// target databases and who may use each, against which sql_migration steps are
// validated;
// allowPrivate is EGRESS_ALLOW_PRIVATE, so step URLs the egress client would
// refuse are refused when the runbook is created.
func NewService(kernel *models.Store, tc client.Client, taskQueue string, sqlTargets SQLTargets, allowPrivate bool) *Service {
	return &Service{kernel: kernel, store: NewStore(kernel.DB()), taskQueue: taskQueue, temporal: tc, sqlTargets: sqlTargets, allowPrivate: allowPrivate, now: time.Now}
}

// RunbookInput is the body of POST /v1/runbooks.
type RunbookInput struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Match       RunbookMatch  `json:"match"`
	Steps       []RunbookStep `json:"steps"`
}

// CreateRunbook validates and stores a runbook: known categories, and steps whose
// types are implemented executors with well-formed params, templates of the
// allowed forms in allowed places, and SQL targets the tenant may use.
func (s *Service) CreateRunbook(ctx context.Context, p auth.Principal, in RunbookInput) (*Runbook, error) {
	if err := s.validRunbook(&in, p.TenantID); err != nil {
		return nil, err
	}
	rb := &Runbook{ID: models.NewID("rb"), TenantID: p.TenantID, Name: in.Name, Description: in.Description,
		Match: in.Match, Steps: in.Steps, CreatedAt: s.now().UTC()}
	if err := s.store.CreateRunbook(ctx, rb); err != nil {
		return nil, errcode.Down("the database", err)
	}
	return rb, nil
}

func (s *Service) validRunbook(in *RunbookInput, tenantID string) error {
	in.Name, in.Description = strings.TrimSpace(in.Name), strings.TrimSpace(in.Description)
	if n := utf8.RuneCountInString(in.Name); n == 0 || n > 200 {
		return errcode.Invalid("name is required and must be at most 200 characters")
	}
	if utf8.RuneCountInString(in.Description) > 4000 {
		return errcode.Invalid("description must be at most 4000 characters")
	}
	if len(in.Match.Categories) == 0 {
		return errcode.Invalid("match.categories must name at least one root-cause category")
	}
	for _, c := range in.Match.Categories {
		if !analyzer.ValidCategory(c) {
			return errcode.Invalid("unknown category %q; valid categories are %s", c, strings.Join(analyzer.Categories, ", "))
		}
	}
	if len(in.Steps) == 0 || len(in.Steps) > MaxRunbookSteps {
		return errcode.Invalid("steps must hold 1 to %d steps", MaxRunbookSteps)
	}
	for i := range in.Steps {
		st := &in.Steps[i]
		if st.Params == nil {
			st.Params = map[string]any{}
		}
		if err := ValidateStep(st.Type, st.Params, s.sqlTargets, tenantID, s.allowPrivate); err != nil {
			return errcode.Invalid("steps[%d]: %v", i, err)
		}
	}
	if b, _ := json.Marshal(in.Steps); len(b) > MaxPlanBytes {
		return errcode.Invalid("steps must be at most %d bytes as JSON, got %d", MaxPlanBytes, len(b))
	}
	return nil
}

// ListRunbooks returns the tenant's runbooks.
func (s *Service) ListRunbooks(ctx context.Context, p auth.Principal) ([]Runbook, error) {
	out, err := s.store.Runbooks(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return out, nil
}

// DeleteRunbook retires a runbook; remediations already proposed from it stay.
func (s *Service) DeleteRunbook(ctx context.Context, p auth.Principal, id string) error {
	err := s.store.DeleteRunbook(ctx, p.TenantID, id, s.now())
	if errors.Is(err, models.ErrNotFound) {
		return errcode.New(errcode.NotFound, "no runbook with id %q", id)
	}
	if err != nil {
		return errcode.Down("the database", err)
	}
	return nil
}

// List returns the incident's remediations with step-level progress.
func (s *Service) List(ctx context.Context, p auth.Principal, incidentID string) ([]Remediation, error) {
	if _, err := s.incident(ctx, p.TenantID, incidentID); err != nil {
		return nil, err
	}
	rems, err := s.store.Remediations(ctx, p.TenantID, incidentID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return rems, nil
}

// Get returns one remediation with its steps; another tenant's is not found.
func (s *Service) Get(ctx context.Context, p auth.Principal, id string) (*Remediation, error) {
	return s.remediation(ctx, p.TenantID, id)
}

// ApproveInput is the optional body of approve: the plan hash the caller
// reviewed. Without it, the plan the service loads is the one approved.
type ApproveInput struct {
	PlanHash string `json:"planHash"`
}

// Approve approves a remediation awaiting approval, bound to its plan hash.
func (s *Service) Approve(ctx context.Context, p auth.Principal, id string, in ApproveInput) error {
	rem, err := s.remediation(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	hash := rem.PlanHash
	if in.PlanHash != "" {
		hash = in.PlanHash
	}
	return s.update(ctx, rem, UpdateApprove, AwaitingApproval,
		ApproveRequest{Actor: p.Email, PlanHash: hash})
}

// RejectInput is the body of reject.
type RejectInput struct {
	Reason string `json:"reason"`
}

// Reject rejects a remediation awaiting approval.
func (s *Service) Reject(ctx context.Context, p auth.Principal, id string, in RejectInput) error {
	reason := strings.TrimSpace(in.Reason)
	if utf8.RuneCountInString(reason) > MaxRejectReasonSize {
		return errcode.Invalid("reason must be at most %d characters", MaxRejectReasonSize)
	}
	rem, err := s.remediation(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	return s.update(ctx, rem, UpdateReject, AwaitingApproval,
		RejectRequest{Actor: p.Email, Reason: reason})
}

// Execute starts an approved remediation; the steps then run asynchronously.
func (s *Service) Execute(ctx context.Context, p auth.Principal, id string) error {
	rem, err := s.remediation(ctx, p.TenantID, id)
	if err != nil {
		return err
	}
	return s.update(ctx, rem, UpdateExecute, Approved, ExecuteRequest{Actor: p.Email})
}

// update sends one update to the remediation's workflow. Every request gets its
// own update ID, so of concurrent identical requests the validator admits one
// and refuses the rest (409). A remediation already past want is refused here
// without asking Temporal, which also covers workflows that have ended.
func (s *Service) update(ctx context.Context, rem *Remediation, name, want string, arg any) error {
	if rem.Status != want {
		return invalidStatus(rem, want)
	}
	wctx, cancel := temporalx.Call(ctx)
	defer cancel()
	err := s.send(wctx, rem, name, arg)
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case ErrTypePlanChanged:
			return errcode.New(errcode.PlanChanged, "the plan of remediation %s is not the one approved; reload it and review again", rem.ID)
		case ErrTypeInvalidStatus:
			return s.refused(ctx, rem, want)
		}
	}
	if again, gerr := s.store.GetRemediation(ctx, rem.TenantID, rem.ID); gerr == nil && again.Status != want {
		return invalidStatus(again, want)
	}
	return errcode.Down("the workflow service", err)
}

// send delivers one update to the remediation's workflow, starting the
// workflow first if the pass that proposed it has not yet (update-with-start):
// a proposal is recorded a moment before its workflow starts, and a person
// quick enough to approve in between is served at once instead of refused or
// kept waiting. The start is the one the pass and the reconciler make, under
// the same business-key ID; if the workflow exists the update goes to it.
func (s *Service) send(ctx context.Context, rem *Remediation, name string, arg any) error {
	start := s.temporal.NewWithStartWorkflowOperation(startOptions(rem, s.taskQueue), WorkflowName, inputOf(rem))
	handle, err := s.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			WorkflowID:   WorkflowID(rem.ID),
			UpdateID:     name + "-" + models.NewID("upd"),
			UpdateName:   name,
			Args:         []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return err
	}
	return handle.Get(ctx, nil)
}

// refused answers a validator's refusal with the status the database shows now.
func (s *Service) refused(ctx context.Context, rem *Remediation, want string) error {
	if again, err := s.store.GetRemediation(ctx, rem.TenantID, rem.ID); err == nil && again.Status != want {
		return invalidStatus(again, want)
	}
	return errcode.New(errcode.InvalidStatus, "remediation %s is no longer %s", rem.ID, want)
}

func invalidStatus(rem *Remediation, want string) error {
	return errcode.New(errcode.InvalidStatus, "remediation %s is %s; this needs it %s", rem.ID, rem.Status, want)
}

func (s *Service) remediation(ctx context.Context, tenantID, id string) (*Remediation, error) {
	rem, err := s.store.GetRemediation(ctx, tenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.RemediationNotFound, "no remediation with id %q", id)
	}
	if err != nil {
		return nil, errcode.Down("the database", fmt.Errorf("remediation %s: %w", id, err))
	}
	return rem, nil
}

func (s *Service) incident(ctx context.Context, tenantID, id string) (*models.Incident, error) {
	inc, err := s.kernel.GetIncident(ctx, tenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.IncidentNotFound, "no incident with id %q", id)
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return inc, nil
}
