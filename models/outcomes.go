package models

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Feedback verdicts: how a person grades an investigation's answer.
const (
	VerdictCorrect = "correct"
	VerdictPartly  = "partly"
	VerdictWrong   = "wrong"
)

// Verification outcomes of a remediation: whether the signals that evidenced
// the cause recovered once its steps ran.
const (
	OutcomeRecovered    = "recovered"
	OutcomeNotRecovered = "not_recovered"
	OutcomeUnknown      = "unknown"
)

// Feedback is one person's grade of one investigation pass. A person grading
// the same pass again replaces their grade (one row per pass and user), so
// only each person's latest opinion counts.
type Feedback struct {
	InvestigationID string    `gorm:"primaryKey;size:80"`
	UserID          string    `gorm:"primaryKey;size:40"`
	TenantID        string    `gorm:"size:40;not null;index"`
	IncidentID      string    `gorm:"size:40;not null;index"`
	Verdict         string    `gorm:"size:16;not null"`
	ActualCategory  string    `gorm:"size:40;not null;default:''"`
	ActualCulprit   string    `gorm:"size:200;not null;default:''"`
	Note            string    `gorm:"type:text;not null;default:''"`
	Actor           string    `gorm:"size:320;not null"`
	CreatedAt       time.Time `gorm:"not null"`
}

// RemediationVerification is what a remediation's verification found: the
// outcome, and the readings it was judged on. One row per remediation.
type RemediationVerification struct {
	RemediationID   string    `gorm:"primaryKey;size:40"`
	TenantID        string    `gorm:"size:40;not null;index"`
	IncidentID      string    `gorm:"size:40;not null"`
	InvestigationID string    `gorm:"size:80;not null;index"`
	Outcome         string    `gorm:"size:16;not null"`
	Readings        []string  `gorm:"type:text;serializer:json"`
	VerifiedAt      time.Time `gorm:"not null"`
}

// SaveFeedback records f as its author's grade of the pass, replacing any
// earlier grade of theirs.
func (s *Store) SaveFeedback(ctx context.Context, f *Feedback) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "investigation_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"verdict", "actual_category", "actual_culprit", "note", "actor", "created_at"}),
	}).Create(f).Error
}

// IncidentFeedback lists the grades of the incident's passes, newest first.
func (s *Store) IncidentFeedback(ctx context.Context, tenantID, incidentID string) ([]Feedback, error) {
	var out []Feedback
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).
		Order("created_at DESC").Order("user_id").Find(&out).Error
	return out, err
}

// SaveVerification records a remediation's verification once; a retry keeps
// the first row, so the outcome a person saw never changes under them.
func (s *Store) SaveVerification(ctx context.Context, v *RemediationVerification) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(v).Error
}

// Verification is the remediation's verification, or ErrNotFound.
func (s *Store) Verification(ctx context.Context, tenantID, remediationID string) (*RemediationVerification, error) {
	return FirstRow[RemediationVerification](s.db.WithContext(ctx).Where("tenant_id = ? AND remediation_id = ?", tenantID, remediationID))
}

// AnswerRecord is one completed pass as accuracy analytics counts it, with
// every grade it received and whether a remediation of it recovered.
type AnswerRecord struct {
	InvestigationID string
	Category        string
	Agents          []string
	Model           string
	StartedAt       time.Time
	CompletedAt     time.Time
	Verdicts        []string
	Recovered       bool
}

// AnswersSince loads the tenant's passes completed with an answer since
// since, each with its grades and remediation outcome. The figures are
// reduced in Go: medians are not portable SQL between the two databases.
func (s *Store) AnswersSince(ctx context.Context, tenantID string, since time.Time) ([]AnswerRecord, error) {
	var invs []Investigation
	db := s.db.WithContext(ctx)
	if err := db.Select("id", "category", "agents", "model", "started_at", "completed_at").
		Where("tenant_id = ? AND status = ? AND completed_at >= ?", tenantID, InvestigationCompleted, since.UTC()).
		Order("completed_at").Order("id").Find(&invs).Error; err != nil {
		return nil, err
	}
	var fbs []Feedback
	if err := db.Select("investigation_id", "verdict").Where("tenant_id = ? AND investigation_id IN (?)", tenantID,
		db.Model(&Investigation{}).Select("id").Where("tenant_id = ? AND status = ? AND completed_at >= ?", tenantID, InvestigationCompleted, since.UTC())).
		Order("user_id").Find(&fbs).Error; err != nil {
		return nil, err
	}
	var recovered []string
	if err := db.Model(&RemediationVerification{}).Where("tenant_id = ? AND outcome = ?", tenantID, OutcomeRecovered).
		Distinct().Pluck("investigation_id", &recovered).Error; err != nil {
		return nil, err
	}
	verdicts := map[string][]string{}
	for _, f := range fbs {
		verdicts[f.InvestigationID] = append(verdicts[f.InvestigationID], f.Verdict)
	}
	rec := map[string]bool{}
	for _, id := range recovered {
		rec[id] = true
	}
	out := make([]AnswerRecord, 0, len(invs))
	for _, inv := range invs {
		r := AnswerRecord{InvestigationID: inv.ID, Category: inv.Category, Agents: inv.Agents, Model: inv.Model,
			StartedAt: inv.StartedAt, Verdicts: verdicts[inv.ID], Recovered: rec[inv.ID]}
		if inv.CompletedAt != nil {
			r.CompletedAt = *inv.CompletedAt
		}
		out = append(out, r)
	}
	return out, nil
}

// LatestCompletedInvestigation is the incident's latest pass that gave an
// answer, or ErrNotFound: the pass a grade is about.
func (s *Store) LatestCompletedInvestigation(ctx context.Context, tenantID, incidentID string) (*Investigation, error) {
	return FirstRow[Investigation](s.db.WithContext(ctx).Where("tenant_id = ? AND incident_id = ? AND status = ?", tenantID, incidentID, InvestigationCompleted).Order("pass DESC"))
}
