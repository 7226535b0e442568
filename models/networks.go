package models

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/causeway/causeway/config"
)

// TenantNetworks returns the private networks granted to a tenant's data
// sources, as stored by SetTenantNetworks. An unknown tenant has none.
func (s *Store) TenantNetworks(ctx context.Context, tenantID string) ([]netip.Prefix, error) {
	t, err := FirstRow[Tenant](s.db.WithContext(ctx).Select("id", "data_source_networks").Where("id = ?", tenantID))
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseGrant(t.DataSourceNetworks)
}

// SetTenantNetworks replaces a tenant's granted networks; none clears them.
// Whether they fit the operator's ceiling is the caller's rule: the ceiling
// is configuration, not data. An unknown tenant is ErrNotFound.
func (s *Store) SetTenantNetworks(ctx context.Context, tenantID string, networks []netip.Prefix) error {
	text := make([]string, len(networks))
	for i, n := range networks {
		text[i] = n.Masked().String()
	}
	res := s.db.WithContext(ctx).Model(&Tenant{}).Where("id = ?", tenantID).Update("data_source_networks", strings.Join(text, ","))
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// parseGrant reads a stored grant. Only SetTenantNetworks writes it, so an
// unreadable one is a damaged row, reported rather than read as "none".
func parseGrant(stored string) ([]netip.Prefix, error) {
	grant, err := config.ParseNetworks(stored)
	if err != nil {
		return nil, fmt.Errorf("tenant networks: stored grant unreadable: %w", err)
	}
	return grant, nil
}
