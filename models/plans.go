package models

import (
	"context"
	"time"
)

// Plans a tenant can be on (docs/architecture.md, "Plans and single sign-on").
const (
	PlanFree       = "free"
	PlanTeam       = "team"
	PlanEnterprise = "enterprise"
)

// ValidPlan reports whether p is one of the three plans.
func ValidPlan(p string) bool {
	switch p {
	case PlanFree, PlanTeam, PlanEnterprise:
		return true
	}
	return false
}

// PeriodBounds is the quota period (calendar month, UTC) that t falls in:
// its first instant and the first instant of the next one.
func PeriodBounds(t time.Time) (start, end time.Time) {
	t = t.UTC()
	start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

// SetPlan moves a tenant to plan with its quotas, in one statement: the
// month's counters are untouched, so what was used stays used, and the next
// quota check reads the new limits. ErrNotFound means no such tenant.
func (s *Store) SetPlan(ctx context.Context, tenantID, plan string, events, investigations int) error {
	res := s.db.WithContext(ctx).Model(&Tenant{}).Where("id = ?", tenantID).
		Updates(map[string]any{"plan": plan, "quota_events": events, "quota_investigations": investigations})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// ApplyPlanQuotas sets the quotas of every tenant on plan to the given ones,
// so a changed plan setting reaches the tenants already on it. It returns how
// many tenants changed.
func (s *Store) ApplyPlanQuotas(ctx context.Context, plan string, events, investigations int) (int64, error) {
	res := s.db.WithContext(ctx).Model(&Tenant{}).
		Where("plan = ? AND (quota_events <> ? OR quota_investigations <> ?)", plan, events, investigations).
		Updates(map[string]any{"quota_events": events, "quota_investigations": investigations})
	return res.RowsAffected, res.Error
}

// TenantUsage reads a tenant and its counters for the period now falls in
// (zero counters when nothing was spent yet).
func (s *Store) TenantUsage(ctx context.Context, tenantID string, now time.Time) (*Tenant, UsageCounter, error) {
	t, err := s.TenantByID(ctx, tenantID)
	if err != nil {
		return nil, UsageCounter{}, err
	}
	var u UsageCounter
	err = s.db.WithContext(ctx).Where("tenant_id = ? AND period = ?", tenantID, Period(now)).Limit(1).Find(&u).Error
	return t, u, err
}
