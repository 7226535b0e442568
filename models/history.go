package models

import (
	"context"
	"errors"
	"time"
)

// MaxPassesListed bounds InvestigationPasses: an incident re-investigated more
// often than this shows its most recent passes.
const MaxPassesListed = 50

// InvestigationPasses returns the incident's passes, newest first, at most
// MaxPassesListed of them; none for another tenant's incident.
func (s *Store) InvestigationPasses(ctx context.Context, tenantID, incidentID string) ([]Investigation, error) {
	var out []Investigation
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND incident_id = ?", tenantID, incidentID).
		Order("pass DESC").Limit(MaxPassesListed).Find(&out).Error
	return out, err
}

// RevokeRefreshFamily revokes the chain the refresh token with the given hash
// belongs to, so signing out ends every copy of the session, not just the
// browser's cookie, and returns the chain's user. An unknown token is not an
// error: there is nothing to end.
func (s *Store) RevokeRefreshFamily(ctx context.Context, hash string, now time.Time) (string, error) {
	db := s.db.WithContext(ctx)
	t, err := FirstRow[RefreshToken](db.Where("token_hash = ?", hash))
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return t.UserID, db.Model(&RefreshToken{}).Where("family_id = ? AND revoked_at IS NULL", t.FamilyID).Update("revoked_at", now.UTC()).Error
}
