package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Unlimited is what Remaining reports for a quota set to 0.
const Unlimited = -1

// Remaining is what a tenant has left of its monthly quotas.
type Remaining struct {
	Events         int
	Investigations int
}

// Period is the quota period (calendar month, UTC) that t falls in.
func Period(t time.Time) string { return t.UTC().Format("2006-01") }

// Quota kinds, the counter columns of UsageCounter.
const (
	QuotaEvents         = "events"
	QuotaInvestigations = "investigations"
)

// SpendQuota takes one unit of a monthly quota inside tx. The conditional UPDATE is
// the whole check: concurrent requests serialise on the counter row, so a quota is
// never over-spent. It returns ErrQuotaExceeded when nothing is left.
func SpendQuota(tx *gorm.DB, t *Tenant, kind string, now time.Time) error {
	_, err := consumeCounting(tx, t, kind, now)
	return err
}

// consumeCounting is SpendQuota in one statement (an upsert that creates the month's
// row or conditionally increments it) returning the counters after the increment.
// The counter row lock it takes is held until commit and every incident of the
// tenant needs it, so it costs one round trip instead of three.
func consumeCounting(tx *gorm.DB, t *Tenant, kind string, now time.Time) (UsageCounter, error) {
	limit, first := t.QuotaEvents, UsageCounter{TenantID: t.ID, Period: Period(now), Events: 1}
	if kind == QuotaInvestigations {
		limit, first = t.QuotaInvestigations, UsageCounter{TenantID: t.ID, Period: Period(now), Investigations: 1}
	}
	cond, args := "", []any{first.TenantID, first.Period, first.Events, first.Investigations}
	if limit > 0 {
		cond, args = " WHERE usage_counters."+kind+" < ?", append(args, limit)
	}
	var u UsageCounter
	res := tx.Raw("INSERT INTO usage_counters (tenant_id, period, events, investigations) VALUES (?, ?, ?, ?) "+
		"ON CONFLICT (tenant_id, period) DO UPDATE SET "+kind+" = usage_counters."+kind+" + 1"+cond+
		" RETURNING tenant_id, period, events, investigations", args...).Scan(&u)
	if res.Error != nil {
		return u, res.Error
	}
	if res.RowsAffected == 0 {
		return u, ErrQuotaExceeded
	}
	return u, nil
}

// left is what a tenant has of its quotas given its counters.
func left(t *Tenant, u UsageCounter) Remaining {
	f := func(limit, used int) int {
		if limit == 0 {
			return Unlimited
		}
		return max(limit-used, 0)
	}
	return Remaining{Events: f(t.QuotaEvents, u.Events), Investigations: f(t.QuotaInvestigations, u.Investigations)}
}

// remaining reads the counters for t's current period.
func remaining(tx *gorm.DB, t *Tenant, now time.Time) (Remaining, error) {
	var u UsageCounter
	err := tx.Where("tenant_id = ? AND period = ?", t.ID, Period(now)).Limit(1).Find(&u).Error
	return left(t, u), err
}

// Usage reports what the tenant has left this month.
func (s *Store) Usage(ctx context.Context, tenantID string, now time.Time) (Remaining, error) {
	t, err := s.TenantByID(ctx, tenantID)
	if err != nil {
		return Remaining{}, err
	}
	return remaining(s.db.WithContext(ctx), t, now)
}

// CreateIncident records a new incident, its first timeline entry and one unit of
// the event quota in a single transaction: either all of it is durable or none.
// The incident's WorkflowStartedAt is nil, which queues it for the dispatcher.
// ErrConflict means the dedup index (tenant, source, source alert id) already holds
// the alert; the transaction is rolled back, so the caller's connection is clean.
//
// The quota is consumed last: the counter row is the one lock every incident of a
// tenant shares, so taking it just before commit keeps concurrent ingestion from
// queueing behind each other's inserts, and a duplicate never touches it.
func (s *Store) CreateIncident(ctx context.Context, inc *Incident, first TimelineEntry) (Remaining, error) {
	var rem Remaining
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t, err := FirstRow[Tenant](tx.Where("id = ?", inc.TenantID))
		if err != nil {
			return err
		}
		if err := tx.Create(inc).Error; err != nil {
			return err
		}
		first.TenantID, first.IncidentID = inc.TenantID, inc.ID
		if err := InsertTimeline(tx, &first); err != nil {
			return err
		}
		u, err := consumeCounting(tx, t, QuotaEvents, inc.CreatedAt)
		rem = left(t, u)
		return err
	})
	if IsUniqueViolation(err) {
		return rem, ErrConflict
	}
	return rem, err
}

// IncidentFilter narrows a listing; empty fields match everything.
type IncidentFilter struct {
	Status   string
	Severity string
}

// ListIncidents returns up to limit incidents of the tenant, newest first, strictly
// after the keyset position afterID (empty for the first page), and the number of
// incidents matching the filter across all pages.
func (s *Store) ListIncidents(ctx context.Context, tenantID string, f IncidentFilter, afterID string, limit int) ([]Incident, int64, error) {
	base := func() *gorm.DB {
		q := s.db.WithContext(ctx).Model(&Incident{}).Where("tenant_id = ?", tenantID)
		if f.Status != "" {
			q = q.Where("status = ?", f.Status)
		}
		if f.Severity != "" {
			q = q.Where("severity = ?", f.Severity)
		}
		return q
	}
	var total int64
	if err := base().Count(&total).Error; err != nil {
		return nil, 0, err
	}
	q := base()
	if afterID != "" {
		q = q.Where("id < ?", afterID)
	}
	var items []Incident
	err := q.Order("id DESC").Limit(limit).Find(&items).Error
	return items, total, err
}

// GetIncident returns the tenant's incident; another tenant's id is ErrNotFound,
// exactly like a missing one.
func (s *Store) GetIncident(ctx context.Context, tenantID, id string) (*Incident, error) {
	return FirstRow[Incident](s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenantID, id))
}

// Timeline returns an incident's entries in the order they happened.
func (s *Store) Timeline(ctx context.Context, tenantID, incidentID string) ([]TimelineEntry, error) {
	var entries []TimelineEntry
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).
		Order("at, id").Find(&entries).Error
	return entries, err
}

// AddTimeline appends an entry once: a retried write with the same DedupKey is a no-op.
func (s *Store) AddTimeline(ctx context.Context, e *TimelineEntry) error {
	return InsertTimeline(s.db.WithContext(ctx), e)
}

// InsertTimeline writes a timeline entry inside tx, once per DedupKey, so a
// domain's state change and the entry explaining it commit together and a
// retried write adds nothing.
func InsertTimeline(tx *gorm.DB, e *TimelineEntry) error {
	return tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedup_key"}}, DoNothing: true}).Create(e).Error
}

// StatusChange is one move of an incident's status with the timeline entry that
// explains it.
type StatusChange struct {
	TenantID   string
	IncidentID string
	Status     string
	At         time.Time
	Entry      TimelineEntry
}

// SetIncidentStatus applies a status change and its timeline entry together. It is
// idempotent (activities retry): the entry is keyed by DedupKey, and the status and
// resolution time are written only if they differ.
func (s *Store) SetIncidentStatus(ctx context.Context, c StatusChange) (*Incident, error) {
	var out *Incident
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		inc, err := FirstRow[Incident](tx.Where("tenant_id = ? AND id = ?", c.TenantID, c.IncidentID))
		if err != nil {
			return err
		}
		if inc.Status != c.Status {
			updates := map[string]any{"status": c.Status, "updated_at": c.At}
			q := tx.Model(&Incident{}).Where("id = ?", inc.ID)
			if c.Status == StatusResolved {
				updates["resolved_at"] = c.At
			} else {
				// Resolved is final; the condition is re-checked under the row lock,
				// so a concurrent resolution is never overwritten.
				q = q.Where("status <> ?", StatusResolved)
			}
			if err := q.Updates(updates).Error; err != nil {
				return err
			}
		}
		c.Entry.TenantID, c.Entry.IncidentID = c.TenantID, c.IncidentID
		if err := InsertTimeline(tx, &c.Entry); err != nil {
			return err
		}
		out = inc
		return nil
	})
	return out, err
}

// IncidentsWithoutWorkflow lists incidents created before olderThan whose workflow
// is not known to exist yet and that may start now, oldest first: the
// dispatcher's work queue. An alert's incident (triaging) may start once it is
// admitted; until then it waits in the dispatcher's admission order instead.
func (s *Store) IncidentsWithoutWorkflow(ctx context.Context, olderThan time.Time, limit int) ([]Incident, error) {
	var items []Incident
	err := s.db.WithContext(ctx).
		Where("workflow_started_at IS NULL AND created_at < ? AND (admitted_at IS NOT NULL OR status <> ?)", olderThan, StatusTriaging).
		Order("created_at").Limit(limit).Find(&items).Error
	return items, err
}

// MarkWorkflowStarted records that the incident's workflow exists. A workflow
// started outside admission (a person asking for a pass on an alert still
// waiting) counts as admitted from then on, so the bound sees it.
func (s *Store) MarkWorkflowStarted(ctx context.Context, incidentID string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&Incident{}).
		Where("id = ? AND workflow_started_at IS NULL", incidentID).
		Updates(map[string]any{"workflow_started_at": at, "admitted_at": gorm.Expr("COALESCE(admitted_at, ?)", at)}).Error
}
