package models

import (
	"context"
	"time"
)

// IncidentStats are a tenant's incident figures over one period.
type IncidentStats struct {
	Total    int64
	Resolved int64
	// MTTRSeconds is the mean time from creation to resolution over Resolved.
	MTTRSeconds float64
	Critical    int64
	High        int64
	Medium      int64
	Low         int64
}

// IncidentStatsSince aggregates the tenant's incidents created at or after since,
// in one query that PostgreSQL answers from the covering index
// idx_incidents_tenant_analytics (tenant, created, severity, resolved) alone:
// nothing is loaded row by row. Resolved counts the incidents of that cohort that are resolved (their
// resolution necessarily falls in the period too), so the resolution rate is a
// true fraction. Epoch arithmetic is dialect-specific.
func (s *Store) IncidentStatsSince(ctx context.Context, tenantID string, since time.Time) (IncidentStats, error) {
	dur := "EXTRACT(EPOCH FROM (resolved_at - created_at))"
	if s.dialect == "sqlite" {
		// Times are stored as RFC 3339 text with nanoseconds, which julianday()
		// refuses; whole seconds are all mttr reports.
		dur = "(julianday(substr(resolved_at, 1, 19)) - julianday(substr(created_at, 1, 19))) * 86400.0"
	}
	var out IncidentStats
	err := s.db.WithContext(ctx).Raw(`SELECT
	COUNT(*) AS total,
	COUNT(resolved_at) AS resolved,
	COALESCE(AVG(CASE WHEN resolved_at IS NOT NULL THEN `+dur+` END), 0) AS mttr_seconds,
	COUNT(CASE WHEN severity = 'critical' THEN 1 END) AS critical,
	COUNT(CASE WHEN severity = 'high' THEN 1 END) AS high,
	COUNT(CASE WHEN severity = 'medium' THEN 1 END) AS medium,
	COUNT(CASE WHEN severity = 'low' THEN 1 END) AS low
FROM incidents WHERE tenant_id = ? AND created_at >= ?`, tenantID, since.UTC()).Scan(&out).Error
	return out, err
}
