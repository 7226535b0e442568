package remediation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// DefaultVerifyAfter is how long after its steps a remediation is verified
// when no setting says otherwise: long enough for rates and gauges to move.
const DefaultVerifyAfter = 10 * time.Minute

// versionVerify marks the change that made a completed remediation verify
// its outcome. Histories from before it end after the steps.
const versionVerify = "verify-outcome"

// Registered names of the verification activities.
const (
	NamePlanVerification   = "PlanRemediationVerification"
	NameVerifyRemediation  = "VerifyRemediation"
	NameReinvestigateAfter = "ReinvestigateAfterRemediation"
)

// Recheck is what the data sources say now about a pass's answer.
type Recheck struct {
	// Asked counts the cited queries run again, Answered those that answered.
	Asked, Answered int
	// StillShows is true when the answers still lead an agent to the pass's
	// category.
	StillShows bool
	// Lines are the new readings, as their lines, bounded by the rechecker.
	Lines []string
	// AlertResolved is true when the monitoring tool has resolved the alert.
	AlertResolved bool
}

// Rechecker runs again the data-source queries that evidenced a pass's
// answer (investigation.Activities.Recheck).
type Rechecker interface {
	Recheck(ctx context.Context, tenantID, investigationID string, since time.Time) (Recheck, error)
}

// Reinvestigator starts a new investigation pass of an incident with the
// given context; key makes a retried start find the first one.
type Reinvestigator func(ctx context.Context, tenantID, incidentID, context, key string) error

// VerifyPlan is how long the workflow waits before it verifies.
type VerifyPlan struct {
	After time.Duration
}

// PlanInput names the remediation a verification is planned for.
type PlanInput struct {
	TenantID      string
	RemediationID string
}

// VerifyInput asks for a remediation's verification; Since is when its steps
// finished, the start of the window the queries read.
type VerifyInput struct {
	TenantID      string
	IncidentID    string
	RemediationID string
	Since         time.Time
	DedupKey      string
}

// VerifyOutput is the outcome kept in history; the readings stay in the
// database.
type VerifyOutput struct {
	Outcome string
	Summary string
}

// ReinvestigateInput asks for a new pass with the verification's outcome as
// its context.
type ReinvestigateInput struct {
	TenantID   string
	IncidentID string
	Context    string
	Key        string
}

// PlanRemediationVerification reads the configured wait (VerifyAfter, else
// DefaultVerifyAfter), so the setting reaches the workflow through history.
func (a *Activities) PlanRemediationVerification(_ context.Context, _ PlanInput) (VerifyPlan, error) {
	if a.VerifyAfter <= 0 {
		return VerifyPlan{After: DefaultVerifyAfter}, nil
	}
	return VerifyPlan{After: a.VerifyAfter}, nil
}

// VerifyRemediation re-runs the queries that evidenced the cause and reads
// the alert's state, then records the outcome with its readings, a timeline
// entry and the remediation.verified event in one transaction. A retry finds
// the recorded outcome and returns it unchanged.
func (a *Activities) VerifyRemediation(ctx context.Context, in VerifyInput) (VerifyOutput, error) {
	if v, err := a.Kernel.Verification(ctx, in.TenantID, in.RemediationID); err == nil {
		return VerifyOutput{Outcome: v.Outcome, Summary: summarize(v.Outcome, len(v.Readings))}, nil
	} else if !errors.Is(err, models.ErrNotFound) {
		return VerifyOutput{}, err
	}
	r, err := a.Store.GetRemediation(ctx, in.TenantID, in.RemediationID)
	if err != nil {
		return VerifyOutput{}, temporalx.Classify(err)
	}
	var rc Recheck
	if a.Rechecker != nil {
		if rc, err = a.Rechecker.Recheck(ctx, in.TenantID, r.InvestigationID, in.Since); err != nil {
			return VerifyOutput{}, err
		}
	}
	outcome := judge(rc)
	now := time.Now().UTC()
	v := &models.RemediationVerification{RemediationID: r.ID, TenantID: r.TenantID, IncidentID: r.IncidentID,
		InvestigationID: r.InvestigationID, Outcome: outcome, Readings: rc.Lines, VerifiedAt: now}
	summary := summarize(outcome, len(rc.Lines))
	entry := models.TimelineEntry{At: now, Kind: "remediation_verified", Actor: "causeway", DedupKey: in.DedupKey,
		Message: fmt.Sprintf("Remediation %s verified: %s (%d of %d queries answered, alert %s)", r.ID, summary, rc.Answered, rc.Asked, alertState(rc))}
	if err := a.Store.RecordVerification(ctx, r, v, entry); err != nil {
		return VerifyOutput{}, err
	}
	return VerifyOutput{Outcome: outcome, Summary: summary}, nil
}

// judge decides the outcome: the cause still in the readings is not
// recovered; readings without it, or a resolved alert when nothing answered,
// are recovered; nothing to go on is unknown.
func judge(rc Recheck) string {
	switch {
	case rc.Answered > 0 && rc.StillShows:
		return models.OutcomeNotRecovered
	case rc.Answered > 0 || rc.AlertResolved:
		return models.OutcomeRecovered
	}
	return models.OutcomeUnknown
}

func summarize(outcome string, readings int) string {
	return fmt.Sprintf("%s on %d readings", strings.ReplaceAll(outcome, "_", " "), readings)
}

func alertState(rc Recheck) string {
	if rc.AlertResolved {
		return "resolved"
	}
	return "firing"
}

// ReinvestigateAfterRemediation starts the incident's next pass with the
// verification's outcome as its context.
func (a *Activities) ReinvestigateAfterRemediation(ctx context.Context, in ReinvestigateInput) error {
	if a.Reinvestigate == nil {
		return nil
	}
	return a.Reinvestigate(ctx, in.TenantID, in.IncidentID, in.Context, in.Key)
}

// RecordVerification stores the outcome once, with its timeline entry and
// its remediation.verified event, whose data is the remediation with its
// verification.
func (s *Store) RecordVerification(ctx context.Context, r *Remediation, v *models.RemediationVerification, e models.TimelineEntry) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(v)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		if err := tx.Where("remediation_id = ?", r.ID).Order("step_index").Find(&r.Steps).Error; err != nil {
			return err
		}
		r.Verification = v
		payload, err := json.Marshal(r.View())
		if err != nil {
			return err
		}
		evt := models.OutboxEvent{ID: models.EventID(r.ID, models.EventRemediationVerified), TenantID: r.TenantID,
			Type: models.EventRemediationVerified, Payload: string(payload), CreatedAt: v.VerifiedAt}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&evt).Error; err != nil {
			return err
		}
		e.TenantID, e.IncidentID = r.TenantID, r.IncidentID
		return models.InsertTimeline(tx, &e)
	})
}

// verify waits VerifyAfter after completed steps, then checks the outcome;
// not recovered starts a new investigation pass that knows it. The wait is a
// timer in history, so a worker restart resumes it instead of losing it.
func (w *remediation) verify(ctx workflow.Context) error {
	if workflow.GetVersion(ctx, versionVerify, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	finished := workflow.Now(ctx)
	var plan VerifyPlan
	if err := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NamePlanVerification, PlanInput{
		TenantID: w.in.TenantID, RemediationID: w.in.RemediationID,
	}).Get(ctx, &plan); err != nil {
		return err
	}
	if err := workflow.Sleep(ctx, plan.After); err != nil {
		return err
	}
	var out VerifyOutput
	if err := workflow.ExecuteActivity(withVerifyOptions(ctx), NameVerifyRemediation, VerifyInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, RemediationID: w.in.RemediationID, Since: finished,
		DedupKey: temporalx.TimelineKey(w.id, "verified"),
	}).Get(ctx, &out); err != nil {
		return err
	}
	w.state.Outcome = out.Outcome
	if out.Outcome != models.OutcomeNotRecovered {
		return nil
	}
	// The fix did not hold: look again, knowing what was tried.
	return workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameReinvestigateAfter, ReinvestigateInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, Key: "verify-" + w.in.RemediationID,
		Context: fmt.Sprintf("Remediation %s completed, but its verification %s after the steps found the system not recovered: %s. The signals that evidenced the previous answer still show it.",
			w.in.RemediationID, plan.After, out.Summary),
	}).Get(ctx, nil)
}

// withVerifyOptions bounds one verification: its queries share the
// gathering budget (30 s by default), so a minute covers them and the write,
// and a worker lost mid-way is noticed within that minute and retried.
func withVerifyOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         temporalx.StoreRetryPolicy(),
	})
}
