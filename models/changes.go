package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Change kinds (API values, docs/changes.md).
const (
	ChangeDeployment     = "deployment"
	ChangeConfig         = "config"
	ChangeFeatureFlag    = "feature_flag"
	ChangeInfrastructure = "infrastructure"
	ChangeMigration      = "migration"
	ChangeRollback       = "rollback"
)

// ChangeKinds lists every kind in the order the API documents them.
var ChangeKinds = []string{ChangeDeployment, ChangeConfig, ChangeFeatureFlag, ChangeInfrastructure, ChangeMigration, ChangeRollback}

// ValidChangeKind reports whether k is one of ChangeKinds.
func ValidChangeKind(k string) bool {
	for _, c := range ChangeKinds {
		if c == k {
			return true
		}
	}
	return false
}

// Change is one recorded change to a tenant's systems: a release, a config
// push, a flag flip. The deployments agent weighs each one recorded shortly
// before an incident's onset as its possible trigger. (TenantID,
// SourceChangeID) is unique when the sender names its change, so a retried
// delivery finds the row it already wrote instead of adding a second.
type Change struct {
	ID             string    `gorm:"primaryKey;size:40;index:idx_changes_tenant_page,priority:2"`
	TenantID       string    `gorm:"size:40;not null;index:idx_changes_tenant_page,priority:1;index:idx_changes_tenant_started,priority:1;uniqueIndex:idx_changes_dedup,priority:1,where:source_change_id <> ''"`
	Service        string    `gorm:"size:200;not null"`
	Environment    string    `gorm:"size:100;not null;default:''"`
	Kind           string    `gorm:"size:20;not null"`
	Version        string    `gorm:"size:200;not null;default:''"`
	Description    string    `gorm:"type:text;not null"`
	StartedAt      time.Time `gorm:"not null;index:idx_changes_tenant_started,priority:2"`
	FinishedAt     *time.Time
	Author         string    `gorm:"size:200;not null;default:''"`
	URL            string    `gorm:"size:2000;not null;default:''"`
	RevertOf       string    `gorm:"size:200;not null;default:''"`
	Source         string    `gorm:"size:20;not null"`
	SourceChangeID string    `gorm:"size:300;not null;default:'';uniqueIndex:idx_changes_dedup,priority:2,where:source_change_id <> ''"`
	CreatedAt      time.Time `gorm:"not null"`
}

// RecordChange stores c unless the tenant already has a change with the same
// SourceChangeID, in which case it returns that one and created is false. The
// unique index decides between concurrent identical deliveries, so exactly one
// row is written whatever the interleaving.
func (s *Store) RecordChange(ctx context.Context, c *Change) (stored *Change, created bool, err error) {
	if c.ID == "" {
		c.ID = NewID("chg")
	}
	err = s.db.WithContext(ctx).Create(c).Error
	if err == nil {
		return c, true, nil
	}
	if c.SourceChangeID == "" || !IsUniqueViolation(err) {
		return nil, false, err
	}
	prev, err := s.ChangeBySource(ctx, c.TenantID, c.SourceChangeID)
	if err != nil {
		return nil, false, err
	}
	return prev, false, nil
}

// ChangeBySource finds the tenant's change by the sender's own id.
func (s *Store) ChangeBySource(ctx context.Context, tenantID, sourceChangeID string) (*Change, error) {
	if sourceChangeID == "" {
		return nil, ErrNotFound
	}
	// The redundant predicate lets PostgreSQL use the partial dedup index (see
	// IncidentBySourceAlert).
	return FirstRow[Change](s.db.WithContext(ctx).
		Where("tenant_id = ? AND source_change_id = ? AND source_change_id <> ''", tenantID, sourceChangeID))
}

// FinishChange sets FinishedAt of the tenant's change when it is not set yet:
// a deploy system reports the end of a change it reported starting.
func (s *Store) FinishChange(ctx context.Context, tenantID, id string, at time.Time) error {
	return s.db.WithContext(ctx).Model(&Change{}).
		Where("tenant_id = ? AND id = ? AND finished_at IS NULL", tenantID, id).
		Update("finished_at", at).Error
}

// ChangeFilter narrows a listing; zero fields match everything.
type ChangeFilter struct {
	Service string
	// Since keeps changes that started at or after it.
	Since time.Time
	// Until keeps changes that started at or before it.
	Until time.Time
}

func (f ChangeFilter) apply(q *gorm.DB) *gorm.DB {
	if f.Service != "" {
		q = q.Where("service = ?", f.Service)
	}
	if !f.Since.IsZero() {
		q = q.Where("started_at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("started_at <= ?", f.Until.UTC())
	}
	return q
}

// ListChanges returns up to limit of the tenant's changes, most recently
// recorded first, strictly after the keyset position afterID (empty for the
// first page), and how many match the filter across all pages.
func (s *Store) ListChanges(ctx context.Context, tenantID string, f ChangeFilter, afterID string, limit int) ([]Change, int64, error) {
	base := func() *gorm.DB {
		return f.apply(s.db.WithContext(ctx).Model(&Change{}).Where("tenant_id = ?", tenantID))
	}
	var total int64
	if err := base().Count(&total).Error; err != nil {
		return nil, 0, err
	}
	q := base()
	if afterID != "" {
		q = q.Where("id < ?", afterID)
	}
	var items []Change
	err := q.Order("id DESC").Limit(limit).Find(&items).Error
	return items, total, err
}

// ChangesInWindow returns up to limit of the tenant's changes that started in
// [from, to], latest start first: what an investigation weighs as triggers.
func (s *Store) ChangesInWindow(ctx context.Context, tenantID string, from, to time.Time, limit int) ([]Change, error) {
	if !to.After(from) {
		return nil, errors.New("changes window is empty")
	}
	var out []Change
	err := ChangeFilter{Since: from, Until: to}.apply(s.db.WithContext(ctx).Where("tenant_id = ?", tenantID)).
		Order("started_at DESC, id DESC").Limit(limit).Find(&out).Error
	return out, err
}

// HasChanges reports whether the tenant ever recorded a change.
func (s *Store) HasChanges(ctx context.Context, tenantID string) (bool, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&Change{}).Where("tenant_id = ?", tenantID).Limit(1).Pluck("id", &ids).Error
	return len(ids) > 0, err
}
