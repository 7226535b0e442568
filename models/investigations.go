package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/causeway/causeway/analyzer"
)

// Investigation statuses: running until the pass records its answer or its failure.
const (
	InvestigationRunning   = "running"
	InvestigationCompleted = "completed"
	InvestigationFailed    = "failed"
)

// Agent coverage statuses: what became of each dispatched agent.
const (
	CoverageCompleted = "completed"
	CoverageFailed    = "failed"
	CoverageTimedOut  = "timed_out"
)

// EventInvestigationCompleted is the outbound event kind emitted when a pass finishes.
const EventInvestigationCompleted = "investigation.completed"

// Evidence is what one agent read in one place; Content quotes or points at the
// input it rests on, and Source says where that was (the alert, pasted
// context, a data source query, a recorded change).
type Evidence struct {
	AgentRole string           `json:"agentRole"`
	Content   string           `json:"content"`
	Source    *analyzer.Source `json:"source,omitempty"`
}

// Hypothesis is one category the synthesis considered, kept so users see what was
// ruled out.
type Hypothesis struct {
	Category string  `json:"category"`
	Summary  string  `json:"summary"`
	Score    float64 `json:"score"`
	RuledOut bool    `json:"ruledOut"`
}

// Coverage says whether an agent's report made it into the result, and why not.
type Coverage struct {
	AgentRole string `json:"agentRole"`
	Status    string `json:"status"`
	Reason    string `json:"reason"`
	// Budget is the agent's tool use when an LLM called tools: absent for
	// the offline analyzer and for agents offered no tools.
	Budget *Budget `json:"budget,omitempty"`
}

// Budget is an LLM agent's tool-use budget in a pass (docs/security.md): what
// it was allowed, what it used, and whether reaching a limit made it answer.
type Budget struct {
	Allowed BudgetAmounts `json:"allowed"`
	Used    BudgetAmounts `json:"used"`
	// Stopped is true when a limit ended the agent's tool use; StoppedBy
	// names it ("toolCalls", "bytes" or "tokens").
	Stopped   bool   `json:"stopped"`
	StoppedBy string `json:"stoppedBy,omitempty"`
}

// BudgetAmounts are the three measures of a tool-use budget: tool calls made
// (refused ones included), bytes of answers read and LLM tokens spent.
type BudgetAmounts struct {
	ToolCalls int `json:"toolCalls"`
	Bytes     int `json:"bytes"`
	Tokens    int `json:"tokens"`
}

// Investigation is one pass over an incident. Its ID is derived from the incident
// and the pass number, and (incident_id, pass) is unique, so a retried start can
// never record a second row for the same pass.
type Investigation struct {
	ID                 string               `gorm:"primaryKey;size:80"`
	TenantID           string               `gorm:"size:40;not null;index"`
	IncidentID         string               `gorm:"size:40;not null;uniqueIndex:idx_investigations_pass,priority:1"`
	Pass               int                  `gorm:"not null;uniqueIndex:idx_investigations_pass,priority:2"`
	Status             string               `gorm:"size:16;not null"`
	Agents             []string             `gorm:"type:text;serializer:json"`
	Context            []string             `gorm:"type:text;serializer:json"` // every context entry the pass used
	Category           string               `gorm:"size:40;not null;default:''"`
	Confidence         float64              `gorm:"not null;default:0"`
	RootCause          string               `gorm:"type:text;not null;default:''"`
	Culprit            *analyzer.Culprit    `gorm:"type:text;serializer:json"`
	Mechanism          string               `gorm:"size:40;not null;default:''"`
	Candidates         []analyzer.Candidate `gorm:"type:text;serializer:json"`
	Evidence           []Evidence           `gorm:"type:text;serializer:json"`
	Hypotheses         []Hypothesis         `gorm:"type:text;serializer:json"`
	Coverage           []Coverage           `gorm:"type:text;serializer:json"`
	RecommendedActions []string             `gorm:"type:text;serializer:json"`
	Model              string               `gorm:"size:100;not null;default:''"`
	PromptTokens       int                  `gorm:"not null;default:0"`
	CompletionTokens   int                  `gorm:"not null;default:0"`
	FailureReason      string               `gorm:"type:text;not null;default:''"`
	StartedAt          time.Time            `gorm:"not null"`
	CompletedAt        *time.Time
}

// InvestigationContext is one entry of supplemental context (logs, stack traces,
// change notes) pasted for an incident. Every pass reads all entries so far.
type InvestigationContext struct {
	ID         uint64    `gorm:"primaryKey;autoIncrement"`
	TenantID   string    `gorm:"size:40;not null"`
	IncidentID string    `gorm:"size:40;not null;index:idx_context_incident,priority:1"`
	Content    string    `gorm:"type:text;not null"`
	Actor      string    `gorm:"size:320;not null"`
	CreatedAt  time.Time `gorm:"not null;index:idx_context_incident,priority:2"`
	DedupKey   string    `gorm:"size:300;not null;uniqueIndex"`
}

// AgentRun is one specialist agent's work in one pass. The full report lives here,
// not in workflow history, which only carries a short summary.
type AgentRun struct {
	ID               string    `gorm:"primaryKey;size:120"` // investigation id + "/" + role
	TenantID         string    `gorm:"size:40;not null"`
	InvestigationID  string    `gorm:"size:80;not null;index"`
	AgentRole        string    `gorm:"size:40;not null"`
	Status           string    `gorm:"size:16;not null"`
	Report           string    `gorm:"type:text;not null;default:''"` // JSON of the agent's report
	Reason           string    `gorm:"type:text;not null;default:''"`
	Model            string    `gorm:"size:100;not null;default:''"`
	PromptTokens     int       `gorm:"not null;default:0"`
	CompletionTokens int       `gorm:"not null;default:0"`
	UpdatedAt        time.Time `gorm:"not null"`
}

// OutboxEvent is an outbound event recorded in the same transaction as the state
// change it announces, so an event is never lost nor sent for a change that did
// not happen. A delivery process sends it later and sets DeliveredAt.
type OutboxEvent struct {
	ID          string    `gorm:"primaryKey;size:60"`
	TenantID    string    `gorm:"size:40;not null;index"`
	Type        string    `gorm:"size:60;not null"`
	Payload     string    `gorm:"type:text;not null"`
	CreatedAt   time.Time `gorm:"not null;index:idx_outbox_pending,where:delivered_at IS NULL"`
	DeliveredAt *time.Time
}

// EventID is deterministic in the subject and the event type, so a retried write
// of the same event is recognised as the same row.
func EventID(subject, eventType string) string {
	sum := sha256.Sum256([]byte(subject + "|" + eventType))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// InvestigationResult is the public shape of an investigation. The API answers with it and investigation.completed carries it,
// so the two can never disagree.
type InvestigationResult struct {
	IncidentID      string  `json:"incidentId"`
	InvestigationID string  `json:"investigationId"`
	Pass            int     `json:"pass"`
	Status          string  `json:"status"`
	RootCause       *string `json:"rootCause"`
	Confidence      float64 `json:"confidence"`
	Category        *string `json:"category"`
	// Culprit is the object whose fault started the chain (null while the
	// pass runs, and with category unknown); Mechanism how its fault came
	// about; Candidates the ranked answers, the first the answer itself.
	Culprit            *analyzer.Culprit    `json:"culprit"`
	Mechanism          *string              `json:"mechanism"`
	Candidates         []analyzer.Candidate `json:"candidates"`
	Evidence           []Evidence           `json:"evidence"`
	Hypotheses         []Hypothesis         `json:"hypotheses"`
	Coverage           []Coverage           `json:"coverage"`
	RecommendedActions []string             `json:"recommendedActions"`
	Agents             []string             `json:"agents"`
	Model              string               `json:"model"`
	FailureReason      string               `json:"failureReason,omitempty"`
	StartedAt          time.Time            `json:"startedAt"`
	CompletedAt        *time.Time           `json:"completedAt"`
}

// Result renders the row for clients. While the pass runs, the answer fields are
// withheld (rootCause and category null: a client must never read an unfinished
// answer as the result) even
// if synthesis already wrote them, so a client never mistakes a draft for the
// answer. A pass that failed before synthesis names the category unknown.
func (inv *Investigation) Result() InvestigationResult {
	r := InvestigationResult{
		IncidentID: inv.IncidentID, InvestigationID: inv.ID, Pass: inv.Pass, Status: inv.Status,
		Evidence: []Evidence{}, Hypotheses: []Hypothesis{}, Coverage: []Coverage{}, RecommendedActions: []string{}, Candidates: []analyzer.Candidate{},
		Agents: nonNil(inv.Agents), Model: inv.Model, FailureReason: inv.FailureReason,
		StartedAt: inv.StartedAt.UTC(), CompletedAt: UTCPtr(inv.CompletedAt),
	}
	if inv.Status == InvestigationRunning {
		return r
	}
	if inv.Status == InvestigationCompleted {
		rc, mech := inv.RootCause, inv.Mechanism
		r.RootCause = &rc
		r.Culprit = inv.Culprit
		if mech != "" {
			r.Mechanism = &mech
		}
		r.Candidates = append(r.Candidates, inv.Candidates...)
	}
	category := inv.Category
	if category == "" {
		category = analyzer.CategoryUnknown
	}
	r.Confidence, r.Category = inv.Confidence, &category
	r.Evidence = append(r.Evidence, inv.Evidence...)
	r.Hypotheses = append(r.Hypotheses, inv.Hypotheses...)
	r.Coverage = append(r.Coverage, inv.Coverage...)
	r.RecommendedActions = append(r.RecommendedActions, inv.RecommendedActions...)
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// UTCPtr is t in UTC, or nil: API views show every time in UTC.
func UTCPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

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
	ChooseAgents func(inc *Incident, context []string, previous *Investigation) []string
	Agents       []string
	Entry        TimelineEntry
}

// BeginInvestigation starts a pass in one transaction: it spends one unit of the
// investigation quota, records the pass's new context entry, snapshots all context,
// inserts the running investigation and moves the incident to investigating with a
// timeline entry. It is idempotent: if the pass exists, it is returned unchanged
// and nothing is spent twice. A spent quota is ErrQuotaExceeded with nothing written.
func (s *Store) BeginInvestigation(ctx context.Context, b BeginSpec) (*Investigation, error) {
	var out *Investigation
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if inv, err := FirstRow[Investigation](tx.Where("id = ?", b.InvestigationID)); err == nil {
			out = inv
			return nil
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		inc, err := FirstRow[Incident](tx.Where("tenant_id = ? AND id = ?", b.TenantID, b.IncidentID))
		if err != nil {
			return err
		}
		t, err := FirstRow[Tenant](tx.Where("id = ?", b.TenantID))
		if err != nil {
			return err
		}
		if err := consume(tx, t, QuotaInvestigations, b.At); err != nil {
			return err
		}
		if b.NewContext != "" {
			c := InvestigationContext{TenantID: b.TenantID, IncidentID: b.IncidentID, Content: b.NewContext,
				Actor: b.Actor, CreatedAt: b.At, DedupKey: b.InvestigationID + "/context"}
			if err := insertContext(tx, &c); err != nil {
				return err
			}
		}
		entries, err := contextEntries(tx, b.TenantID, b.IncidentID)
		if err != nil {
			return err
		}
		agents := b.Agents
		if len(agents) == 0 {
			prev, err := latestInvestigation(tx, b.TenantID, b.IncidentID)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			agents = b.ChooseAgents(inc, entries, prev)
		}
		inv := &Investigation{
			ID: b.InvestigationID, TenantID: b.TenantID, IncidentID: b.IncidentID, Pass: b.Pass,
			Status: InvestigationRunning, Agents: agents, Context: entries, StartedAt: b.At,
		}
		if err := tx.Create(inv).Error; err != nil {
			return err
		}
		// The guard sits in the UPDATE, not in Go: a resolution committed after
		// this transaction read the row must not be overwritten.
		if err := tx.Model(&Incident{}).Where("id = ? AND status NOT IN ?", inc.ID, []string{StatusResolved, StatusInvestigating}).
			Updates(map[string]any{"status": StatusInvestigating, "updated_at": b.At}).Error; err != nil {
			return err
		}
		b.Entry.TenantID, b.Entry.IncidentID = b.TenantID, b.IncidentID
		if err := InsertTimeline(tx, &b.Entry); err != nil {
			return err
		}
		out = inv
		return nil
	})
	return out, err
}

// AddInvestigationContext stores one supplemental context entry; a retried write
// with the same DedupKey is a no-op.
func (s *Store) AddInvestigationContext(ctx context.Context, c *InvestigationContext) error {
	return insertContext(s.db.WithContext(ctx), c)
}

// ContextLimits bound the supplemental context of one incident.
type ContextLimits struct {
	Entries int
	Bytes   int
}

// ContextLimitError is a context entry refused because the incident's context
// would exceed a limit; Entries and Bytes are what the incident holds before
// the entry, Adding the size of the entry.
type ContextLimitError struct {
	Limits  ContextLimits
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

// ContextUsage reports how many context entries, and how many bytes of them,
// an incident holds.
func (s *Store) ContextUsage(ctx context.Context, tenantID, incidentID string) (entries, bytes int, err error) {
	return contextUsage(s.db.WithContext(ctx), tenantID, incidentID)
}

func contextUsage(tx *gorm.DB, tenantID, incidentID string) (entries, bytes int, err error) {
	var rows []InvestigationContext
	if err := tx.Select("content").Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).Find(&rows).Error; err != nil {
		return 0, 0, err
	}
	for _, r := range rows {
		bytes += len(r.Content)
	}
	return len(rows), bytes, nil
}

// AddInvestigationContextWithin stores one context entry unless the incident's
// context would exceed lim (a *ContextLimitError). A no-op update of the
// incident's row serialises concurrent additions to one incident, so two of
// them cannot both pass the check.
func (s *Store) AddInvestigationContextWithin(ctx context.Context, c *InvestigationContext, lim ContextLimits) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE incidents SET updated_at = updated_at WHERE tenant_id = ? AND id = ?", c.TenantID, c.IncidentID).Error; err != nil {
			return err
		}
		n, b, err := contextUsage(tx, c.TenantID, c.IncidentID)
		if err != nil {
			return err
		}
		if n >= lim.Entries || b+len(c.Content) > lim.Bytes {
			return &ContextLimitError{Limits: lim, Entries: n, Bytes: b, Adding: len(c.Content)}
		}
		return insertContext(tx, c)
	})
}

func insertContext(tx *gorm.DB, c *InvestigationContext) error {
	return tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedup_key"}}, DoNothing: true}).Create(c).Error
}

func contextEntries(tx *gorm.DB, tenantID, incidentID string) ([]string, error) {
	var rows []InvestigationContext
	if err := tx.Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Content
	}
	return out, nil
}

// LatestInvestigation returns the incident's most recent pass; ErrNotFound before
// the first one starts (and for another tenant's incident).
func (s *Store) LatestInvestigation(ctx context.Context, tenantID, incidentID string) (*Investigation, error) {
	return latestInvestigation(s.db.WithContext(ctx), tenantID, incidentID)
}

func latestInvestigation(tx *gorm.DB, tenantID, incidentID string) (*Investigation, error) {
	return FirstRow[Investigation](tx.Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).Order("pass DESC"))
}

// GetInvestigation returns one pass by its id.
func (s *Store) GetInvestigation(ctx context.Context, tenantID, id string) (*Investigation, error) {
	return FirstRow[Investigation](s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id))
}

// SaveAgentRun records an agent's outcome, replacing an earlier attempt's row.
func (s *Store) SaveAgentRun(ctx context.Context, r *AgentRun) error {
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(r).Error
}

// AgentRun returns one agent's run by its id, or ErrNotFound before it ran.
func (s *Store) AgentRun(ctx context.Context, id string) (*AgentRun, error) {
	return FirstRow[AgentRun](s.db.WithContext(ctx).Where("id = ?", id))
}

// AgentRuns returns the agent rows of a pass.
func (s *Store) AgentRuns(ctx context.Context, investigationID string) ([]AgentRun, error) {
	var runs []AgentRun
	err := s.db.WithContext(ctx).Where("investigation_id = ?", investigationID).Order("agent_role").Find(&runs).Error
	return runs, err
}

// Synthesis is the answer part of an investigation.
type Synthesis struct {
	Category           string
	Confidence         float64
	RootCause          string
	Culprit            *analyzer.Culprit
	Mechanism          string
	Candidates         []analyzer.Candidate
	Evidence           []Evidence
	Hypotheses         []Hypothesis
	RecommendedActions []string
	Model              string
}

// SaveSynthesis stores the answer of a still-running pass. Synthesis is
// deterministic, so a retried write stores the same answer; clients see it only
// once FinishInvestigation marks the pass completed.
func (s *Store) SaveSynthesis(ctx context.Context, investigationID string, r Synthesis) error {
	return s.db.WithContext(ctx).Model(&Investigation{}).
		Where("id = ? AND status = ?", investigationID, InvestigationRunning).
		Select("category", "confidence", "root_cause", "culprit", "mechanism", "candidates", "evidence", "hypotheses", "recommended_actions", "model").
		Updates(&Investigation{
			Category: r.Category, Confidence: r.Confidence, RootCause: r.RootCause, Culprit: r.Culprit, Mechanism: r.Mechanism, Candidates: r.Candidates,
			Evidence: r.Evidence, Hypotheses: r.Hypotheses, RecommendedActions: r.RecommendedActions, Model: r.Model,
		}).Error
}

// FinishSpec ends a pass.
type FinishSpec struct {
	TenantID        string
	InvestigationID string
	Status          string // InvestigationCompleted or InvestigationFailed
	Coverage        []Coverage
	FailureReason   string
	At              time.Time
	Entry           TimelineEntry
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
		inv, err := FirstRow[Investigation](tx.Where("tenant_id = ? AND id = ?", f.TenantID, f.InvestigationID))
		if err != nil {
			return err
		}
		inc, err := FirstRow[Incident](tx.Where("tenant_id = ? AND id = ?", inv.TenantID, inv.IncidentID))
		if err != nil {
			return err
		}
		status = inc.Status
		if inv.Status != InvestigationRunning {
			return nil
		}
		var tok struct{ P, C int }
		if err := tx.Model(&AgentRun{}).Select("COALESCE(SUM(prompt_tokens),0) AS p, COALESCE(SUM(completion_tokens),0) AS c").
			Where("investigation_id = ?", inv.ID).Scan(&tok).Error; err != nil {
			return err
		}
		at := f.At.UTC()
		inv.Status, inv.Coverage, inv.FailureReason, inv.CompletedAt = f.Status, f.Coverage, f.FailureReason, &at
		inv.PromptTokens, inv.CompletionTokens = tok.P, tok.C
		if err := tx.Model(&Investigation{}).Where("id = ?", inv.ID).
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
		evt := OutboxEvent{ID: EventID(inv.ID, EventInvestigationCompleted), TenantID: inv.TenantID,
			Type: EventInvestigationCompleted, Payload: string(payload), CreatedAt: at}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&evt).Error; err != nil {
			return err
		}
		if inc.Status == StatusInvestigating {
			next := StatusInvestigated
			if f.Status != InvestigationCompleted {
				next, err = statusAfterFailure(tx, inv)
				if err != nil {
					return err
				}
			}
			res := tx.Model(&Incident{}).Where("id = ? AND status = ?", inc.ID, StatusInvestigating).
				Updates(map[string]any{"status": next, "updated_at": at})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected > 0 {
				status = next
			}
		}
		f.Entry.TenantID, f.Entry.IncidentID = inv.TenantID, inv.IncidentID
		return InsertTimeline(tx, &f.Entry)
	})
	return status, err
}

// statusAfterFailure keeps an earlier pass's answer visible: investigated when any
// pass completed, else open so an operator can start again.
func statusAfterFailure(tx *gorm.DB, inv *Investigation) (string, error) {
	var n int64
	err := tx.Model(&Investigation{}).Where("incident_id = ? AND status = ? AND id <> ?", inv.IncidentID, InvestigationCompleted, inv.ID).Count(&n).Error
	if n > 0 {
		return StatusInvestigated, err
	}
	return StatusOpen, err
}

func addTokens(tx *gorm.DB, tenantID string, n int, at time.Time) error {
	if n == 0 {
		return nil
	}
	period := Period(at)
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&UsageCounter{TenantID: tenantID, Period: period}).Error; err != nil {
		return err
	}
	return tx.Model(&UsageCounter{}).Where("tenant_id = ? AND period = ?", tenantID, period).
		Update("llm_tokens", gorm.Expr("llm_tokens + ?", n)).Error
}

// SetIncidentSeverity records triage's normalized severity and its timeline entry
// together; rewriting the same severity is a no-op, so retries are safe.
func (s *Store) SetIncidentSeverity(ctx context.Context, tenantID, incidentID, severity string, e TimelineEntry) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&Incident{}).Where("tenant_id = ? AND id = ? AND severity <> ?", tenantID, incidentID, severity).
			Updates(map[string]any{"severity": severity, "updated_at": e.At}).Error; err != nil {
			return err
		}
		e.TenantID, e.IncidentID = tenantID, incidentID
		return InsertTimeline(tx, &e)
	})
}
