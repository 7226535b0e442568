package remediation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/causeway/causeway/models"
)

func init() {
	models.RegisterRows(&Runbook{}, &Remediation{}, &RemediationStep{})
}

// Store keeps runbooks, remediations and their steps in the shared database.
// Writes that also touch the kernel (an incident's status, its timeline, the
// outbox) commit in the same transaction as the remediation's own rows.
type Store struct{ db *gorm.DB }

// NewStore is the remediation store over the shared database handle.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// Remediation statuses, API values (docs/data-flow.md).
const (
	AwaitingApproval = "awaiting_approval"
	Approved         = "approved"
	Rejected         = "rejected"
	Executing        = "executing"
	Completed        = "completed"
	Failed           = "failed"
)

// Remediation step statuses, API values.
const (
	StepPending   = "pending"
	StepRunning   = "running"
	StepCompleted = "completed"
	StepFailed    = "failed"
)

// RunbookMatch says which investigations a runbook answers: the root-cause
// category must be listed, and when Services is not empty the incident's service
// must be listed too.
type RunbookMatch struct {
	Categories []string `json:"categories"`
	Services   []string `json:"services,omitempty"`
}

// RunbookStep is one step template: its params may hold text/template actions
// rendered with the incident's fields when a remediation is proposed.
type RunbookStep struct {
	Type        string         `json:"type"`
	Description string         `json:"description"`
	Params      map[string]any `json:"params"`
}

// Runbook is a tenant's vetted remediation recipe. Service are only ever
// built from runbooks, so nothing (LLM included) can propose a step type or a
// command that a person did not write down first. Deleting one hides it from
// new proposals but keeps the row for the remediations that cite it.
type Runbook struct {
	ID          string        `gorm:"primaryKey;size:40"`
	TenantID    string        `gorm:"size:40;not null;index"`
	Name        string        `gorm:"size:200;not null"`
	Description string        `gorm:"type:text;not null"`
	Match       RunbookMatch  `gorm:"type:text;serializer:json"`
	Steps       []RunbookStep `gorm:"type:text;serializer:json"`
	CreatedAt   time.Time     `gorm:"not null"`
	DeletedAt   *time.Time
}

// Matches reports whether the runbook answers an investigation of category on
// an incident of service.
func (r *Runbook) Matches(category, service string) bool {
	return contains(r.Match.Categories, category) && (len(r.Match.Services) == 0 || contains(r.Match.Services, service))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Remediation is one proposal of one runbook for one investigation pass, with
// its steps rendered. PlanHash is the digest of the rendered steps: an approval
// names it, so a person only ever approves the exact plan they were shown.
type Remediation struct {
	ID              string `gorm:"primaryKey;size:40"`
	TenantID        string `gorm:"size:40;not null;index"`
	IncidentID      string `gorm:"size:40;not null;index"`
	InvestigationID string `gorm:"size:80;not null"`
	RunbookID       string `gorm:"size:40;not null"`
	Description     string `gorm:"type:text;not null"`
	Status          string `gorm:"size:20;not null"`
	PlanHash        string `gorm:"size:64;not null"`
	ApprovedBy      string `gorm:"size:320;not null;default:''"`
	ApprovedAt      *time.Time
	RejectedBy      string `gorm:"size:320;not null;default:''"`
	RejectedAt      *time.Time
	RejectReason    string `gorm:"type:text;not null;default:''"`
	ExecutedBy      string `gorm:"size:320;not null;default:''"`
	ExecutedAt      *time.Time
	CompletedAt     *time.Time
	FailureReason   string    `gorm:"type:text;not null;default:''"`
	CreatedAt       time.Time `gorm:"not null"`
	// WorkflowStartedAt is set once the remediation's workflow is known to
	// exist; the reconciler starts the workflow of any proposal still without.
	WorkflowStartedAt *time.Time        `gorm:"index:idx_remediations_unstarted,where:workflow_started_at IS NULL"`
	Steps             []RemediationStep `gorm:"-"`
	// Verification is what the verification after the steps found, nil
	// until it ran (loaded by Remediations).
	Verification *models.RemediationVerification `gorm:"-"`
}

// RemediationStep is one rendered step and its progress. Attempts counts the
// executor runs, so retries after a crash are visible.
type RemediationStep struct {
	RemediationID string         `gorm:"primaryKey;size:40"`
	Index         int            `gorm:"primaryKey;column:step_index"`
	Type          string         `gorm:"size:40;not null"`
	Description   string         `gorm:"type:text;not null"`
	Params        map[string]any `gorm:"type:text;serializer:json"`
	Status        string         `gorm:"size:16;not null"`
	StartedAt     *time.Time
	CompletedAt   *time.Time
	Error         string `gorm:"type:text;not null;default:''"`
	Attempts      int    `gorm:"not null;default:0"`
	// DispatchedAt is set just before a step's request with side effects
	// leaves, and cleared when it provably did not arrive; an attempt that
	// finds it set cannot know whether the target applied the request.
	DispatchedAt *time.Time
}

// RemediationID is derived from the pass and the runbook, so a retried proposal
// finds the row it already wrote instead of proposing the runbook twice.
func RemediationID(investigationID, runbookID string) string {
	sum := sha256.Sum256([]byte(investigationID + "|" + runbookID))
	return "rem_" + hex.EncodeToString(sum[:12])
}

// PlanHash is the digest an approval binds to: every step's type, description
// and rendered params, in order.
func PlanHash(steps []RemediationStep) string {
	type planStep struct {
		Type        string         `json:"type"`
		Description string         `json:"description"`
		Params      map[string]any `json:"params"`
	}
	plan := make([]planStep, len(steps))
	for i, s := range steps {
		plan[i] = planStep{s.Type, s.Description, s.Params}
	}
	b, _ := json.Marshal(plan) // maps marshal with sorted keys, so the digest is stable
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CreateRunbook stores a validated runbook.
func (s *Store) CreateRunbook(ctx context.Context, r *Runbook) error {
	return s.db.WithContext(ctx).Create(r).Error
}

// Runbooks lists the tenant's live runbooks, oldest first, which is also the
// order proposals are made in.
func (s *Store) Runbooks(ctx context.Context, tenantID string) ([]Runbook, error) {
	var out []Runbook
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND deleted_at IS NULL", tenantID).Order("created_at, id").Find(&out).Error
	return out, err
}

// DeleteRunbook retires a runbook; another tenant's or an already deleted one is
// models.ErrNotFound.
func (s *Store) DeleteRunbook(ctx context.Context, tenantID, id string, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&Runbook{}).Where("tenant_id = ? AND id = ? AND deleted_at IS NULL", tenantID, id).
		Update("deleted_at", at.UTC())
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return models.ErrNotFound
	}
	return nil
}

// ProposeRemediations records proposals with their steps and a timeline entry
// each, in one transaction. Rows that already exist (a retried proposal) are
// kept as they are.
func (s *Store) ProposeRemediations(ctx context.Context, rems []Remediation, entries []models.TimelineEntry) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i := range rems {
			r := rems[i]
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				continue
			}
			if len(r.Steps) > 0 {
				if err := tx.Create(&r.Steps).Error; err != nil {
					return err
				}
			}
			if err := models.InsertTimeline(tx, &entries[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetRemediation returns the tenant's remediation with its steps and its
// verification; another tenant's is models.ErrNotFound, exactly like a
// missing one.
func (s *Store) GetRemediation(ctx context.Context, tenantID, id string) (*Remediation, error) {
	db := s.db.WithContext(ctx)
	r, err := models.FirstRow[Remediation](db.Where("tenant_id = ? AND id = ?", tenantID, id))
	if err != nil {
		return nil, err
	}
	if err := db.Where("remediation_id = ?", id).Order("step_index").Find(&r.Steps).Error; err != nil {
		return nil, err
	}
	rems := []Remediation{*r}
	if err := attachVerifications(db, rems); err != nil {
		return nil, err
	}
	return &rems[0], nil
}

// Remediations lists an incident's remediations with their steps, oldest first.
func (s *Store) Remediations(ctx context.Context, tenantID, incidentID string) ([]Remediation, error) {
	db := s.db.WithContext(ctx)
	var rems []Remediation
	if err := db.Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).Order("created_at, id").Find(&rems).Error; err != nil {
		return nil, err
	}
	if err := attachSteps(db, rems); err != nil {
		return nil, err
	}
	return rems, attachVerifications(db, rems)
}

// attachVerifications loads the verifications of rems in one query.
func attachVerifications(db *gorm.DB, rems []Remediation) error {
	if len(rems) == 0 {
		return nil
	}
	ids := make([]string, len(rems))
	for i, r := range rems {
		ids[i] = r.ID
	}
	var vs []models.RemediationVerification
	if err := db.Where("remediation_id IN ?", ids).Find(&vs).Error; err != nil {
		return err
	}
	for i := range vs {
		for j := range rems {
			if rems[j].ID == vs[i].RemediationID {
				rems[j].Verification = &vs[i]
			}
		}
	}
	return nil
}

// attachSteps loads the steps of rems in one query, only the given columns when
// any are named, and appends each to its remediation in step order.
func attachSteps(db *gorm.DB, rems []Remediation, columns ...string) error {
	if len(rems) == 0 {
		return nil
	}
	ids := make([]string, len(rems))
	byID := map[string]int{}
	for i, r := range rems {
		ids[i], byID[r.ID] = r.ID, i
	}
	q := db.Where("remediation_id IN ?", ids).Order("remediation_id, step_index")
	if len(columns) > 0 {
		q = q.Select(columns)
	}
	var steps []RemediationStep
	if err := q.Find(&steps).Error; err != nil {
		return err
	}
	for _, st := range steps {
		i := byID[st.RemediationID]
		rems[i].Steps = append(rems[i].Steps, st)
	}
	return nil
}

// PassRemediations lists the remediations one investigation pass of the incident proposed,
// oldest first, with only what a proposal answer needs: each one's id, plan
// hash and its steps' index and type. An incident investigated many times
// collects many remediations; the proposal must not read them all, nor any
// step params.
func (s *Store) PassRemediations(ctx context.Context, tenantID, incidentID, investigationID string) ([]Remediation, error) {
	db := s.db.WithContext(ctx)
	var rems []Remediation
	// incident_id is indexed; investigation_id narrows within the incident.
	if err := db.Select("id", "plan_hash", "created_at").
		Where("tenant_id = ? AND incident_id = ? AND investigation_id = ?", tenantID, incidentID, investigationID).
		Order("created_at, id").Find(&rems).Error; err != nil {
		return nil, err
	}
	return rems, attachSteps(db, rems, "remediation_id", "step_index", "type")
}

// RemediationsWithoutWorkflow lists proposals awaiting approval, created before
// olderThan, whose workflow is not known to exist, oldest first: the
// reconciler's work queue. A proposal's workflow is started by the pass that
// proposed it; one that ended first leaves its proposals here.
func (s *Store) RemediationsWithoutWorkflow(ctx context.Context, olderThan time.Time, limit int) ([]Remediation, error) {
	var rems []Remediation
	err := s.db.WithContext(ctx).Where("workflow_started_at IS NULL AND status = ? AND created_at < ?", AwaitingApproval, olderThan).
		Order("created_at, id").Limit(limit).Find(&rems).Error
	if err != nil {
		return nil, err
	}
	return rems, attachSteps(s.db.WithContext(ctx), rems, "remediation_id", "step_index", "type")
}

// MarkRemediationWorkflowStarted records that the remediation's workflow exists.
func (s *Store) MarkRemediationWorkflowStarted(ctx context.Context, id string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&Remediation{}).Where("id = ? AND workflow_started_at IS NULL", id).
		Update("workflow_started_at", at.UTC()).Error
}

// Decision is an approval, a rejection or an expiry of a proposal.
type Decision struct {
	TenantID      string
	RemediationID string
	Status        string // Approved or Rejected
	// From is the status the decision applies to: AwaitingApproval
	// when empty; Approved when an unexecuted approval expires.
	From   string
	Actor  string
	Reason string
	At     time.Time
	Entry  models.TimelineEntry
}

// ErrInvalidStatus is a state change asked of a remediation in the wrong state.
var ErrInvalidStatus = errors.New("invalid status")

// DecideRemediation records a decision on a proposal awaiting approval (or the
// expiry of an approval nobody executed, see Decision.From), with its timeline
// entry, in one transaction. Repeating the same decision is a no-op, so activity
// retries are safe; a different one is ErrInvalidStatus.
func (s *Store) DecideRemediation(ctx context.Context, d Decision) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := models.FirstRow[Remediation](tx.Where("tenant_id = ? AND id = ?", d.TenantID, d.RemediationID))
		if err != nil {
			return err
		}
		if r.Status == d.Status {
			return nil
		}
		from := d.From
		if from == "" {
			from = AwaitingApproval
		}
		if r.Status != from {
			return ErrInvalidStatus
		}
		at := d.At.UTC()
		upd := map[string]any{"status": d.Status}
		if d.Status == Approved {
			upd["approved_by"], upd["approved_at"] = d.Actor, at
		} else {
			upd["rejected_by"], upd["rejected_at"], upd["reject_reason"] = d.Actor, at, d.Reason
		}
		if err := tx.Model(&Remediation{}).Where("id = ?", r.ID).Updates(upd).Error; err != nil {
			return err
		}
		d.Entry.TenantID, d.Entry.IncidentID = r.TenantID, r.IncidentID
		return models.InsertTimeline(tx, &d.Entry)
	})
}

// BeginRemediation moves an approved remediation to executing, records who
// executed it, and moves its incident to remediating (unless resolved), with a
// timeline entry, in one transaction. Repeating it is a no-op.
func (s *Store) BeginRemediation(ctx context.Context, tenantID, id, actor string, at time.Time, e models.TimelineEntry) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := models.FirstRow[Remediation](tx.Where("tenant_id = ? AND id = ?", tenantID, id))
		if err != nil {
			return err
		}
		if r.Status != Approved {
			if r.ExecutedAt != nil {
				return nil
			}
			return ErrInvalidStatus
		}
		at = at.UTC()
		if err := tx.Model(&Remediation{}).Where("id = ?", id).
			Updates(map[string]any{"status": Executing, "executed_by": actor, "executed_at": at}).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.Incident{}).Where("id = ? AND status <> ?", r.IncidentID, models.StatusResolved).
			Updates(map[string]any{"status": models.StatusRemediating, "updated_at": at}).Error; err != nil {
			return err
		}
		e.TenantID, e.IncidentID = r.TenantID, r.IncidentID
		return models.InsertTimeline(tx, &e)
	})
}

// StartStep marks a step running and counts the attempt. It returns the step as
// it was before, so an executor that already completed is not run again.
func (s *Store) StartStep(ctx context.Context, remediationID string, index int, at time.Time) (*RemediationStep, error) {
	var before *RemediationStep
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		st, err := models.FirstRow[RemediationStep](tx.Where("remediation_id = ? AND step_index = ?", remediationID, index))
		if err != nil {
			return err
		}
		before = st
		if st.Status == StepCompleted {
			return nil
		}
		upd := map[string]any{"status": StepRunning, "attempts": gorm.Expr("attempts + 1")}
		if st.StartedAt == nil {
			upd["started_at"] = at.UTC()
		}
		return tx.Model(&RemediationStep{}).Where("remediation_id = ? AND step_index = ?", remediationID, index).Updates(upd).Error
	})
	return before, err
}

// MarkStepDispatched records, durably and before the request leaves, that a
// step's request is being sent.
func (s *Store) MarkStepDispatched(ctx context.Context, remediationID string, index int, at time.Time) error {
	return s.db.WithContext(ctx).Model(&RemediationStep{}).Where("remediation_id = ? AND step_index = ?", remediationID, index).
		Update("dispatched_at", at.UTC()).Error
}

// ClearStepDispatched withdraws that record when the request provably never
// reached the target, or the target refused it unprocessed.
func (s *Store) ClearStepDispatched(ctx context.Context, remediationID string, index int) error {
	return s.db.WithContext(ctx).Model(&RemediationStep{}).Where("remediation_id = ? AND step_index = ?", remediationID, index).
		Update("dispatched_at", nil).Error
}

// CompleteStep marks a step completed.
func (s *Store) CompleteStep(ctx context.Context, remediationID string, index int, at time.Time) error {
	return s.db.WithContext(ctx).Model(&RemediationStep{}).
		Where("remediation_id = ? AND step_index = ? AND status <> ?", remediationID, index, StepCompleted).
		Updates(map[string]any{"status": StepCompleted, "completed_at": at.UTC(), "error": ""}).Error
}

// RemediationOutcome ends an execution. FailedStep is the index of the step that
// failed, or -1.
type RemediationOutcome struct {
	TenantID      string
	RemediationID string
	Status        string // Completed or Failed
	FailedStep    int
	Reason        string
	At            time.Time
	Entry         models.TimelineEntry
}

// FinishRemediation records the end of an execution in one transaction: the
// failed step, the remediation's final status, its remediation.completed or
// remediation.failed outbox event (deterministic id) and the timeline entry. A
// remediation no longer executing is left as it is.
func (s *Store) FinishRemediation(ctx context.Context, o RemediationOutcome) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := models.FirstRow[Remediation](tx.Where("tenant_id = ? AND id = ?", o.TenantID, o.RemediationID))
		if err != nil {
			return err
		}
		if r.Status != Executing {
			return nil
		}
		at := o.At.UTC()
		if o.FailedStep >= 0 {
			if err := tx.Model(&RemediationStep{}).Where("remediation_id = ? AND step_index = ?", r.ID, o.FailedStep).
				Updates(map[string]any{"status": StepFailed, "completed_at": at, "error": o.Reason}).Error; err != nil {
				return err
			}
		}
		if err := tx.Model(&Remediation{}).Where("id = ?", r.ID).
			Updates(map[string]any{"status": o.Status, "completed_at": at, "failure_reason": o.Reason}).Error; err != nil {
			return err
		}
		r.Status, r.CompletedAt, r.FailureReason = o.Status, &at, o.Reason
		if err := tx.Where("remediation_id = ?", r.ID).Order("step_index").Find(&r.Steps).Error; err != nil {
			return err
		}
		payload, err := json.Marshal(r.View())
		if err != nil {
			return err
		}
		kind := models.EventRemediationCompleted
		if o.Status != Completed {
			kind = models.EventRemediationFailed
		}
		evt := models.OutboxEvent{ID: models.EventID(r.ID, kind), TenantID: r.TenantID, Type: kind, Payload: string(payload), CreatedAt: at}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&evt).Error; err != nil {
			return err
		}
		o.Entry.TenantID, o.Entry.IncidentID = r.TenantID, r.IncidentID
		return models.InsertTimeline(tx, &o.Entry)
	})
}

// RemediationView is the public shape of a remediation (plus who decided
// what and when). The API answers with it and remediation.* events carry it, so
// the two never disagree. Step params are shown through models.RedactParams: an
// approver must see what a step does but not the credentials it carries.
type RemediationView struct {
	RemediationID   string     `json:"remediationId"`
	IncidentID      string     `json:"incidentId"`
	InvestigationID string     `json:"investigationId"`
	RunbookID       string     `json:"runbookId"`
	Status          string     `json:"status"`
	Description     string     `json:"description"`
	PlanHash        string     `json:"planHash"`
	Steps           []StepView `json:"steps"`
	ApprovedBy      string     `json:"approvedBy"`
	ApprovedAt      *time.Time `json:"approvedAt"`
	ExecutedBy      string     `json:"executedBy"`
	ExecutedAt      *time.Time `json:"executedAt"`
	RejectedBy      string     `json:"rejectedBy"`
	RejectedAt      *time.Time `json:"rejectedAt"`
	RejectReason    string     `json:"rejectReason"`
	CompletedAt     *time.Time `json:"completedAt"`
	FailureReason   string     `json:"failureReason"`
	CreatedAt       time.Time  `json:"createdAt"`
	// Verification is present once the verification after the steps ran.
	Verification *VerificationView `json:"verification,omitempty"`
}

// VerificationView is what a remediation's verification found: the outcome
// (recovered, not_recovered, unknown) and the readings it was judged on.
type VerificationView struct {
	Outcome    string    `json:"outcome"`
	Readings   []string  `json:"readings"`
	VerifiedAt time.Time `json:"verifiedAt"`
}

// StepView is one step's progress as clients see it.
type StepView struct {
	Index       int            `json:"index"`
	Type        string         `json:"type"`
	Status      string         `json:"status"`
	Description string         `json:"description"`
	Params      map[string]any `json:"params"`
	Error       string         `json:"error"`
	Attempts    int            `json:"attempts"`
	StartedAt   *time.Time     `json:"startedAt"`
	CompletedAt *time.Time     `json:"completedAt"`
}

// View renders the remediation for clients and events.
func (r *Remediation) View() RemediationView {
	v := RemediationView{
		RemediationID: r.ID, IncidentID: r.IncidentID, InvestigationID: r.InvestigationID, RunbookID: r.RunbookID,
		Status: r.Status, Description: r.Description, PlanHash: r.PlanHash, Steps: make([]StepView, len(r.Steps)),
		ApprovedBy: r.ApprovedBy, ApprovedAt: models.UTCPtr(r.ApprovedAt), ExecutedBy: r.ExecutedBy, ExecutedAt: models.UTCPtr(r.ExecutedAt),
		RejectedBy: r.RejectedBy, RejectedAt: models.UTCPtr(r.RejectedAt), RejectReason: r.RejectReason,
		CompletedAt: models.UTCPtr(r.CompletedAt), FailureReason: models.RedactText(r.FailureReason), CreatedAt: r.CreatedAt.UTC(),
	}
	if vr := r.Verification; vr != nil {
		v.Verification = &VerificationView{Outcome: vr.Outcome, Readings: vr.Readings, VerifiedAt: vr.VerifiedAt.UTC()}
	}
	for i, s := range r.Steps {
		v.Steps[i] = StepView{Index: s.Index, Type: s.Type, Status: s.Status, Description: s.Description,
			Params: models.RedactParams(s.Params), Error: models.RedactText(s.Error), Attempts: s.Attempts, StartedAt: models.UTCPtr(s.StartedAt), CompletedAt: models.UTCPtr(s.CompletedAt)}
	}
	return v
}
