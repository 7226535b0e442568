package investigation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/models"
)

// Store writes the pipeline's own rows (passes, agent runs, answers, context
// entries) in the shared database. Writes that also touch the kernel (the
// incident's status and timeline, the quota, the outbox) commit in the same
// transaction as the pass's rows; what other slices read stays in models.
type Store struct{ db *gorm.DB }

// NewStore is the investigation store over the shared database handle.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// BeginSpec is the start of one pass.
type BeginSpec struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Pass            int
	// NewContext is recorded as a context entry with the pass (empty: none).
	NewContext string
	Actor      string
	At         time.Time
	// ChooseAgents picks the agents when none were requested; it sees the
	// incident, every context entry and the previous pass (nil on the first).
	ChooseAgents func(inc *models.Incident, context []string, previous *models.Investigation) []string
	Agents       []string
	Entry        models.TimelineEntry
}

// BeginInvestigation starts a pass in one transaction: it spends one unit of the
// investigation quota, records the pass's new context entry, snapshots all context,
// inserts the running investigation and moves the incident to investigating with a
// timeline entry. It is idempotent: if the pass exists, it is returned unchanged
// and nothing is spent twice. A spent quota is ErrQuotaExceeded with nothing written.
func (s *Store) BeginInvestigation(ctx context.Context, b BeginSpec) (*models.Investigation, error) {
	var out *models.Investigation
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if inv, err := models.FirstRow[models.Investigation](tx.Where("id = ?", b.InvestigationID)); err == nil {
			out = inv
			return nil
		} else if !errors.Is(err, models.ErrNotFound) {
			return err
		}
		inc, err := models.FirstRow[models.Incident](tx.Where("tenant_id = ? AND id = ?", b.TenantID, b.IncidentID))
		if err != nil {
			return err
		}
		t, err := models.FirstRow[models.Tenant](tx.Where("id = ?", b.TenantID))
		if err != nil {
			return err
		}
		if err := models.SpendQuota(tx, t, models.QuotaInvestigations, b.At); err != nil {
			return err
		}
		if b.NewContext != "" {
			c := models.InvestigationContext{TenantID: b.TenantID, IncidentID: b.IncidentID, Content: b.NewContext,
				Actor: b.Actor, CreatedAt: b.At, DedupKey: b.InvestigationID + "/context"}
			if err := models.InsertContext(tx, &c); err != nil {
				return err
			}
		}
		entries, err := models.ContextEntries(tx, b.TenantID, b.IncidentID)
		if err != nil {
			return err
		}
		agents := b.Agents
		if len(agents) == 0 {
			prev, err := models.LatestInvestigationIn(tx, b.TenantID, b.IncidentID)
			if err != nil && !errors.Is(err, models.ErrNotFound) {
				return err
			}
			agents = b.ChooseAgents(inc, entries, prev)
		}
		inv := &models.Investigation{
			ID: b.InvestigationID, TenantID: b.TenantID, IncidentID: b.IncidentID, Pass: b.Pass,
			Status: models.InvestigationRunning, Agents: agents, Context: entries, StartedAt: b.At,
		}
		if err := tx.Create(inv).Error; err != nil {
			return err
		}
		// The guard sits in the UPDATE, not in Go: a resolution committed after
		// this transaction read the row must not be overwritten.
		if err := tx.Model(&models.Incident{}).Where("id = ? AND status NOT IN ?", inc.ID, []string{models.StatusResolved, models.StatusInvestigating}).
			Updates(map[string]any{"status": models.StatusInvestigating, "updated_at": b.At}).Error; err != nil {
			return err
		}
		b.Entry.TenantID, b.Entry.IncidentID = b.TenantID, b.IncidentID
		if err := models.InsertTimeline(tx, &b.Entry); err != nil {
			return err
		}
		out = inv
		return nil
	})
	return out, err
}

// ContextLimitError is a context entry refused because the incident's context
// would exceed a limit; Entries and Bytes are what the incident holds before
// the entry, Adding the size of the entry.
type ContextLimitError struct {
	Limits  models.ContextLimits
	Entries int
	Bytes   int
	Adding  int
}

// Error names the limit the entry would cross.
func (e *ContextLimitError) Error() string {
	if e.Entries >= e.Limits.Entries {
		return fmt.Sprintf("the incident already holds %d context entries, the limit", e.Entries)
	}
	return fmt.Sprintf("the incident's context would grow to %d bytes, over the limit of %d", e.Bytes+e.Adding, e.Limits.Bytes)
}

// AddInvestigationContextWithin stores one context entry unless the incident's
// context would exceed lim (a *ContextLimitError). A no-op update of the
// incident's row serialises concurrent additions to one incident, so two of
// them cannot both pass the check.
func (s *Store) AddInvestigationContextWithin(ctx context.Context, c *models.InvestigationContext, lim models.ContextLimits) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE incidents SET updated_at = updated_at WHERE tenant_id = ? AND id = ?", c.TenantID, c.IncidentID).Error; err != nil {
			return err
		}
		n, b, err := models.ContextUsageIn(tx, c.TenantID, c.IncidentID)
		if err != nil {
			return err
		}
		if !lim.Admit(n, b, len(c.Content)) {
			return &ContextLimitError{Limits: lim, Entries: n, Bytes: b, Adding: len(c.Content)}
		}
		return models.InsertContext(tx, c)
	})
}

// SaveAgentRun records an agent's outcome, replacing an earlier attempt's row.
func (s *Store) SaveAgentRun(ctx context.Context, r *models.AgentRun) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(r).Error
}

// Synthesis is the answer part of an investigation.
type Synthesis struct {
	Category           string
	Confidence         float64
	RootCause          string
	Culprit            *analyzer.Culprit
	Mechanism          string
	Candidates         []analyzer.Candidate
	Evidence           []models.Evidence
	Hypotheses         []models.Hypothesis
	RecommendedActions []string
	Model              string
}

// SaveSynthesis stores the answer of a still-running pass. Synthesis is
// deterministic, so a retried write stores the same answer; clients see it only
// once FinishInvestigation marks the pass completed.
func (s *Store) SaveSynthesis(ctx context.Context, investigationID string, r Synthesis) error {
	return s.db.WithContext(ctx).Model(&models.Investigation{}).
		Where("id = ? AND status = ?", investigationID, models.InvestigationRunning).
		Select("category", "confidence", "root_cause", "culprit", "mechanism", "candidates", "evidence", "hypotheses", "recommended_actions", "model").
		Updates(&models.Investigation{
			Category: r.Category, Confidence: r.Confidence, RootCause: r.RootCause, Culprit: r.Culprit, Mechanism: r.Mechanism, Candidates: r.Candidates,
			Evidence: r.Evidence, Hypotheses: r.Hypotheses, RecommendedActions: r.RecommendedActions, Model: r.Model,
		}).Error
}

// FinishSpec ends a pass.
type FinishSpec struct {
	TenantID        string
	InvestigationID string
	Status          string // models.InvestigationCompleted or models.InvestigationFailed
	Coverage        []models.Coverage
	FailureReason   string
	At              time.Time
	Entry           models.TimelineEntry
}

// FinishInvestigation ends a pass in one transaction: the final status, coverage
// and token totals, the tenant's monthly token counter, the investigation.completed
// outbox event, and the incident's move out of investigating (to investigated, or
// back where an operator can retry: investigated if an earlier pass succeeded,
// else open) with its timeline entry. A resolved incident keeps its status. It is
// idempotent: a pass that is no longer running is left as it is. It returns the
// incident's status afterwards.
func (s *Store) FinishInvestigation(ctx context.Context, f FinishSpec) (string, error) {
	var status string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		inv, err := models.FirstRow[models.Investigation](tx.Where("tenant_id = ? AND id = ?", f.TenantID, f.InvestigationID))
		if err != nil {
			return err
		}
		inc, err := models.FirstRow[models.Incident](tx.Where("tenant_id = ? AND id = ?", inv.TenantID, inv.IncidentID))
		if err != nil {
			return err
		}
		status = inc.Status
		if inv.Status != models.InvestigationRunning {
			return nil
		}
		var tok struct{ P, C int }
		if err := tx.Model(&models.AgentRun{}).Select("COALESCE(SUM(prompt_tokens),0) AS p, COALESCE(SUM(completion_tokens),0) AS c").
			Where("investigation_id = ?", inv.ID).Scan(&tok).Error; err != nil {
			return err
		}
		at := f.At.UTC()
		inv.Status, inv.Coverage, inv.FailureReason, inv.CompletedAt = f.Status, f.Coverage, f.FailureReason, &at
		inv.PromptTokens, inv.CompletionTokens = tok.P, tok.C
		if err := tx.Model(&models.Investigation{}).Where("id = ?", inv.ID).
			Select("status", "coverage", "failure_reason", "completed_at", "prompt_tokens", "completion_tokens").
			Updates(inv).Error; err != nil {
			return err
		}
		if err := addTokens(tx, inv.TenantID, tok.P+tok.C, at); err != nil {
			return err
		}
		payload, err := json.Marshal(inv.Result())
		if err != nil {
			return err
		}
		evt := models.OutboxEvent{ID: models.EventID(inv.ID, models.EventInvestigationCompleted), TenantID: inv.TenantID,
			Type: models.EventInvestigationCompleted, Payload: string(payload), CreatedAt: at}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&evt).Error; err != nil {
			return err
		}
		if inc.Status == models.StatusInvestigating {
			next := models.StatusInvestigated
			if f.Status != models.InvestigationCompleted {
				next, err = statusAfterFailure(tx, inv)
				if err != nil {
					return err
				}
			}
			res := tx.Model(&models.Incident{}).Where("id = ? AND status = ?", inc.ID, models.StatusInvestigating).
				Updates(map[string]any{"status": next, "updated_at": at})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected > 0 {
				status = next
			}
		}
		f.Entry.TenantID, f.Entry.IncidentID = inv.TenantID, inv.IncidentID
		return models.InsertTimeline(tx, &f.Entry)
	})
	return status, err
}

// statusAfterFailure keeps an earlier pass's answer visible: investigated when any
// pass completed, else open so an operator can start again.
func statusAfterFailure(tx *gorm.DB, inv *models.Investigation) (string, error) {
	var n int64
	err := tx.Model(&models.Investigation{}).Where("incident_id = ? AND status = ? AND id <> ?", inv.IncidentID, models.InvestigationCompleted, inv.ID).Count(&n).Error
	if n > 0 {
		return models.StatusInvestigated, err
	}
	return models.StatusOpen, err
}

func addTokens(tx *gorm.DB, tenantID string, n int, at time.Time) error {
	if n == 0 {
		return nil
	}
	period := models.Period(at)
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.UsageCounter{TenantID: tenantID, Period: period}).Error; err != nil {
		return err
	}
	return tx.Model(&models.UsageCounter{}).Where("tenant_id = ? AND period = ?", tenantID, period).
		Update("llm_tokens", gorm.Expr("llm_tokens + ?", n)).Error
}

// SetIncidentSeverity records triage's normalized severity and its timeline entry
// together; rewriting the same severity is a no-op, so retries are safe.
func (s *Store) SetIncidentSeverity(ctx context.Context, tenantID, incidentID, severity string, e models.TimelineEntry) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&models.Incident{}).Where("tenant_id = ? AND id = ? AND severity <> ?", tenantID, incidentID, severity).
			Updates(map[string]any{"severity": severity, "updated_at": e.At}).Error; err != nil {
			return err
		}
		e.TenantID, e.IncidentID = tenantID, incidentID
		return models.InsertTimeline(tx, &e)
	})
}
