package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	AgentRole string `json:"agentRole"`
	// AgentRoles names every agent that made one of its findings, when more
	// than one did (analyzer.Evidence).
	AgentRoles []string         `json:"agentRoles,omitempty"`
	Content    string           `json:"content"`
	Source     *analyzer.Source `json:"source,omitempty"`
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

// ContextLimits bound the supplemental context of one incident.
type ContextLimits struct {
	Entries int
	Bytes   int
}

// Admit reports whether an incident holding entries entries of bytes bytes
// may take one more of adding bytes.
func (l ContextLimits) Admit(entries, bytes, adding int) bool {
	return entries < l.Entries && bytes+adding <= l.Bytes
}

// IncidentContextLimits bound all supplemental context of one incident: every
// pass reads all of it, so without a bound one incident could make every later
// pass (and its prompts) arbitrarily large. The byte limit is what an agent
// reads (analyzer.MaxContextBytes).
var IncidentContextLimits = ContextLimits{Entries: 50, Bytes: analyzer.MaxContextBytes}

// ContextUsage reports how many context entries, and how many bytes of them,
// an incident holds.
func (s *Store) ContextUsage(ctx context.Context, tenantID, incidentID string) (entries, bytes int, err error) {
	return ContextUsageIn(s.db.WithContext(ctx), tenantID, incidentID)
}

// ContextUsageIn is ContextUsage inside tx, where the count must hold until the
// transaction commits.
func ContextUsageIn(tx *gorm.DB, tenantID, incidentID string) (entries, bytes int, err error) {
	var rows []InvestigationContext
	if err := tx.Select("content").Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).Find(&rows).Error; err != nil {
		return 0, 0, err
	}
	for _, r := range rows {
		bytes += len(r.Content)
	}
	return len(rows), bytes, nil
}

// InsertContext stores one context entry inside tx; an entry whose DedupKey
// exists already is left alone.
func InsertContext(tx *gorm.DB, c *InvestigationContext) error {
	return tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedup_key"}}, DoNothing: true}).Create(c).Error
}

// ContextEntries is every context entry of an incident inside tx, oldest first.
func ContextEntries(tx *gorm.DB, tenantID, incidentID string) ([]string, error) {
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
	return LatestInvestigationIn(s.db.WithContext(ctx), tenantID, incidentID)
}

// LatestInvestigationIn is LatestInvestigation inside tx.
func LatestInvestigationIn(tx *gorm.DB, tenantID, incidentID string) (*Investigation, error) {
	return FirstRow[Investigation](tx.Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).Order("pass DESC"))
}

// GetInvestigation returns one pass by its id.
func (s *Store) GetInvestigation(ctx context.Context, tenantID, id string) (*Investigation, error) {
	return FirstRow[Investigation](s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id))
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
