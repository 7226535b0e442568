package identity

import (
	"context"
	"errors"
	"time"

	"github.com/causeway/causeway/models"
	"gorm.io/gorm"
)

func init() {
	models.RegisterRows(&APIKey{}, &SSOConnection{}, &SSOIdentity{}, &SSOReplay{})
}

// Store keeps the identity slice's own rows in the shared database: API keys
// and the single sign-on connections, identities and spent artefacts. Users,
// tenants and their tokens are the kernel's.
type Store struct{ db *gorm.DB }

// NewStore is the identity store over the shared database handle.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// API key statuses.
const (
	APIKeyActive  = "active"
	APIKeyRevoked = "revoked"
)

// APIKey authenticates one monitoring tool's webhook deliveries to a tenant. The key
// itself is stored only as its SHA-256 (KeyHash) so a database copy cannot be
// replayed; the webhook secret must be usable for HMAC checks, so it is kept
// encrypted (SecretEnc, AES-GCM bound to the key ID) instead.
type APIKey struct {
	ID         string `gorm:"primaryKey;size:40"`
	TenantID   string `gorm:"size:40;not null;index"`
	Name       string `gorm:"size:200;not null"`
	Prefix     string `gorm:"size:20;not null"`
	KeyHash    string `gorm:"size:64;not null;uniqueIndex"`
	SecretEnc  string `gorm:"type:text;not null"`
	Status     string `gorm:"size:16;not null"`
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	// Routes are the webhook routes the key may post to (WebhookRoutes);
	// empty is every route, as for keys made before routes could be named.
	Routes []string `gorm:"type:text;serializer:json"`
}

// TableName keeps the table name readable in SQL consoles.
func (APIKey) TableName() string { return "api_keys" }

// CreateAPIKey stores a new key.
func (s *Store) CreateAPIKey(ctx context.Context, k *APIKey) error {
	err := s.db.WithContext(ctx).Create(k).Error
	if models.IsUniqueViolation(err) {
		return models.ErrConflict
	}
	return err
}

// ErrTooManyKeys is a key refused because its tenant holds the most active keys
// it may.
var ErrTooManyKeys = errors.New("too many active API keys")

// CreateAPIKeyWithin stores a key unless its tenant already holds max active
// keys (ErrTooManyKeys). A no-op update of the tenant's row serialises
// concurrent creations for one tenant, so they cannot both pass the count.
func (s *Store) CreateAPIKeyWithin(ctx context.Context, k *APIKey, max int) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE tenants SET name = name WHERE id = ?", k.TenantID).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&APIKey{}).Where("tenant_id = ? AND status = ?", k.TenantID, APIKeyActive).Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(max) {
			return ErrTooManyKeys
		}
		return tx.Create(k).Error
	})
	if models.IsUniqueViolation(err) {
		return models.ErrConflict
	}
	return err
}

// ListAPIKeys returns a tenant's keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, tenantID string) ([]APIKey, error) {
	var keys []APIKey
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("created_at, id").Find(&keys).Error
	return keys, err
}

// APIKeyByHash finds a key by the SHA-256 of its plaintext, whatever its status or
// tenant; the caller decides whether it may be used.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (*APIKey, error) {
	return models.FirstRow[APIKey](s.db.WithContext(ctx).Where("key_hash = ?", hash))
}

// RevokeAPIKey marks the tenant's key revoked (idempotently) and returns it. Another
// tenant's key is models.ErrNotFound, exactly like a missing one.
func (s *Store) RevokeAPIKey(ctx context.Context, tenantID, id string, now time.Time) (*APIKey, error) {
	q := s.db.WithContext(ctx)
	if err := q.Model(&APIKey{}).Where("tenant_id = ? AND id = ? AND status = ?", tenantID, id, APIKeyActive).
		Updates(map[string]any{"status": APIKeyRevoked, "revoked_at": now}).Error; err != nil {
		return nil, err
	}
	return models.FirstRow[APIKey](q.Where("tenant_id = ? AND id = ?", tenantID, id))
}

// TouchAPIKey records that a key was used. It writes only when the stored time is
// older than every, so a busy key costs one write per interval, not per delivery.
func (s *Store) TouchAPIKey(ctx context.Context, id string, now time.Time, every time.Duration) error {
	return s.db.WithContext(ctx).Model(&APIKey{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, now.Add(-every)).
		Update("last_used_at", now).Error
}
