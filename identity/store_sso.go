package identity

import (
	"context"
	"errors"
	"time"

	"github.com/causeway/causeway/models"
	"gorm.io/gorm"
)

// SSO connection types.
const (
	SSOTypeSAML = "saml"
	SSOTypeOIDC = "oidc"
)

// SSOConnection is a tenant's single sign-on through its own identity
// provider, SAML 2.0 or OpenID Connect; a tenant has at most one. Secrets (the
// OIDC client secret, the SAML service provider's private key) are sealed
// with SECRETS_KEY and bound to the tenant, as every credential at rest is
// (docs/security.md).
type SSOConnection struct {
	TenantID string `gorm:"primaryKey;size:40"`
	Type     string `gorm:"size:8;not null"`

	// OIDC: the issuer (discovered), and the client registered there.
	Issuer          string `gorm:"size:500;not null;default:''"`
	ClientID        string `gorm:"size:300;not null;default:''"`
	ClientSecretEnc string `gorm:"type:text;not null;default:''"`

	// SAML: the identity provider's metadata (as fetched or as given) and
	// the service provider's own signing key (sealed) and certificate.
	IDPMetadataURL string `gorm:"size:1000;not null;default:''"`
	IDPMetadataXML string `gorm:"type:text;not null;default:''"`
	SPKeyEnc       string `gorm:"type:text;not null;default:''"`
	SPCertPEM      string `gorm:"type:text;not null;default:''"`

	// RoleAttribute is the SAML attribute or OIDC claim whose value picks
	// the role through RoleMapping; DefaultRole applies when nothing maps.
	RoleAttribute string            `gorm:"size:200;not null;default:''"`
	RoleMapping   map[string]string `gorm:"type:text;serializer:json"`
	DefaultRole   string            `gorm:"size:16;not null"`
	// Enforce turns password (and GitHub/Google) sign-in off for the
	// tenant's users, except ConfiguredBy, the owner who set it up, so the
	// tenant is never locked out by its own identity provider.
	Enforce      bool   `gorm:"not null;default:false"`
	ConfiguredBy string `gorm:"size:40;not null"`
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// SSOIdentity links a person at a tenant's identity provider (its subject:
// the OIDC issuer and sub, or the SAML issuer and NameID) to the user they
// sign in as.
// The key starts with the tenant, so one tenant's provider can never name a
// user of another.
type SSOIdentity struct {
	TenantID  string `gorm:"primaryKey;size:40"`
	Subject   string `gorm:"primaryKey;size:600"`
	UserID    string `gorm:"size:40;not null;index"`
	CreatedAt time.Time
}

// SSOReplay records a single-use sign-in artefact (an OIDC flow's state, a
// SAML assertion's id) until it would have expired anyway, so presenting it twice
// fails.
type SSOReplay struct {
	Key       string    `gorm:"primaryKey;size:300"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

// SaveSSOConnection creates or replaces the tenant's connection.
func (s *Store) SaveSSOConnection(ctx context.Context, c *SSOConnection) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("tenant_id = ?", c.TenantID).Delete(&SSOConnection{}).Error; err != nil {
			return err
		}
		return tx.Create(c).Error
	})
}

// SSOConnection reads the tenant's connection; models.ErrNotFound when it has none.
func (s *Store) SSOConnection(ctx context.Context, tenantID string) (*SSOConnection, error) {
	return models.FirstRow[SSOConnection](s.db.WithContext(ctx).Where("tenant_id = ?", tenantID))
}

// DeleteSSOConnection removes the tenant's connection, and with it the
// enforcement; the users it created stay, signing in by password reset or by
// a connection configured again. models.ErrNotFound when it had none.
func (s *Store) DeleteSSOConnection(ctx context.Context, tenantID string) error {
	res := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Delete(&SSOConnection{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return models.ErrNotFound
	}
	return nil
}

// ConsumeSSOArtefact records key as used until expires. models.ErrConflict means it
// was used before: a replay. Expired records are dropped on the way.
func (s *Store) ConsumeSSOArtefact(ctx context.Context, key string, expires, now time.Time) error {
	db := s.db.WithContext(ctx)
	if err := db.Where("expires_at < ?", now).Delete(&SSOReplay{}).Error; err != nil {
		return err
	}
	err := db.Create(&SSOReplay{Key: key, ExpiresAt: expires}).Error
	if models.IsUniqueViolation(err) {
		return models.ErrConflict
	}
	return err
}

// SSOUser is who signs in through a tenant's identity provider.
type SSOUser struct {
	TenantID string
	Subject  string
	Email    string
	Name     string
	Role     string
	// EmailVerified is whether the provider asserted that the person
	// controls Email (OIDC's email_verified). Only then does a user created
	// here count as owning the address, which lets a GitHub or Google
	// identity with that address be linked to it automatically.
	EmailVerified bool
	// MaxUsers is the tenant's plan's cap on users (0: none): a person the
	// provider admits is not created past it.
	MaxUsers int
}

// ErrOwnerAccount refuses to hand an owner's account to an identity
// provider: the owner signs in with a password.
var ErrOwnerAccount = errors.New("the account is an owner")

// SignInSSOUser finds or creates, in one transaction, the user an identity
// provider's subject signs in as, and sets the role the provider's claims map
// to (the provider is the source of truth for it). A subject seen before is
// its linked user; else a user of the same tenant with that e-mail is linked,
// unless an owner (ErrOwnerAccount); else a user is created. An e-mail held
// by another tenant's user is models.ErrConflict and nothing is written.
func (s *Store) SignInSSOUser(ctx context.Context, in SSOUser, now time.Time, newID func() string) (*models.User, error) {
	var out *models.User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		id, err := models.FirstRow[SSOIdentity](tx.Where("tenant_id = ? AND subject = ?", in.TenantID, in.Subject))
		var u *models.User
		if err == nil {
			u, err = models.FirstRow[models.User](tx.Where("id = ? AND tenant_id = ?", id.UserID, in.TenantID))
			if errors.Is(err, models.ErrNotFound) {
				// The user was removed here while the provider still
				// admits the subject: it is provisioned anew, as any
				// first sign-in, because the provider decides who may
				// enter (docs/security.md).
				if err := tx.Delete(id).Error; err != nil {
					return err
				}
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, models.ErrNotFound):
			u, err = models.FirstRow[models.User](tx.Where("email = ?", in.Email))
			switch {
			case errors.Is(err, models.ErrNotFound):
				if err := models.LockTenant(tx, in.TenantID); err != nil {
					return err
				}
				if err := models.UnderUserCap(tx, in.TenantID, in.MaxUsers); err != nil {
					return err
				}
				u = &models.User{ID: newID(), TenantID: in.TenantID, Email: in.Email, Name: in.Name, Role: in.Role, CreatedAt: now}
				if in.EmailVerified {
					u.EmailVerifiedAt = &now
				}
				if err := tx.Create(u).Error; err != nil {
					return err
				}
			case err != nil:
				return err
			case u.TenantID != in.TenantID:
				return models.ErrConflict
			}
			if err := tx.Create(&SSOIdentity{TenantID: in.TenantID, Subject: in.Subject, UserID: u.ID, CreatedAt: now}).Error; err != nil {
				return err
			}
		default:
			return err
		}
		if u.Role == models.RoleOwner {
			return ErrOwnerAccount
		}
		if u.Role != in.Role {
			if err := tx.Model(&models.User{}).Where("id = ?", u.ID).Update("role", in.Role).Error; err != nil {
				return err
			}
			u.Role = in.Role
		}
		out = u
		return nil
	})
	if models.IsUniqueViolation(err) {
		return nil, models.ErrConflict
	}
	return out, err
}
