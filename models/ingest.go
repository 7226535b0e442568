package models

import "context"

// IncidentBySourceAlert finds the incident an alert created, by the dedup key
// (tenant, source, source alert id). It is how a duplicate learns the original's
// id and how a provider's "resolved" notification finds what to resolve.
func (s *Store) IncidentBySourceAlert(ctx context.Context, tenantID, source, sourceAlertID string) (*Incident, error) {
	if sourceAlertID == "" {
		return nil, ErrNotFound
	}
	// The redundant source_alert_id <> '' repeats the dedup index's predicate: a
	// prepared statement's generic plan cannot prove it from the parameter, and
	// without it PostgreSQL cannot use that partial index and scans the table.
	return FirstRow[Incident](s.db.WithContext(ctx).
		Where("tenant_id = ? AND source = ? AND source_alert_id = ? AND source_alert_id <> ''", tenantID, source, sourceAlertID))
}
