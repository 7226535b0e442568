package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// CreateTenantWithOwner creates a tenant and its first user in one transaction, so
// a failed sign-up leaves neither behind. ErrConflict means the e-mail is taken.
func (s *Store) CreateTenantWithOwner(ctx context.Context, t *Tenant, u *User) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		u.TenantID = t.ID
		return tx.Create(u).Error
	})
	if IsUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// UserByEmail finds a user for login; e-mails compare case-insensitively because
// they are stored lower-cased.
func (s *Store) UserByEmail(ctx context.Context, email string) (*User, error) {
	return FirstRow[User](s.db.WithContext(ctx).Where("email = ?", strings.ToLower(email)))
}

// UserByID finds a user by id.
func (s *Store) UserByID(ctx context.Context, id string) (*User, error) {
	return FirstRow[User](s.db.WithContext(ctx).Where("id = ?", id))
}

// UserByOAuth finds the user linked to an identity provider's subject.
func (s *Store) UserByOAuth(ctx context.Context, provider, subject string) (*User, error) {
	return FirstRow[User](s.db.WithContext(ctx).Where("oauth_provider = ? AND oauth_subject = ?", provider, subject))
}

// LinkOAuth records that an existing user signs in with an identity provider.
// A user holds one identity: when the user is already linked (or gone) no row
// changes and the link is refused with ErrConflict, as it is when another user
// holds the identity. verifiedAt, when not nil, records that the provider
// vouched for the user's e-mail address.
func (s *Store) LinkOAuth(ctx context.Context, userID, provider, subject string, verifiedAt *time.Time) error {
	upd := map[string]any{"oauth_provider": provider, "oauth_subject": subject}
	if verifiedAt != nil {
		upd["email_verified_at"] = verifiedAt.UTC()
	}
	res := s.db.WithContext(ctx).Model(&User{}).Where("id = ? AND oauth_provider = ''", userID).Updates(upd)
	if IsUniqueViolation(res.Error) {
		return ErrConflict
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return ErrConflict
	}
	return nil
}

// CreateTenantWithResetToken creates a tenant, its owner (who has no password
// yet) and the owner's one-time reset token in one transaction. ErrConflict
// means the e-mail is taken.
func (s *Store) CreateTenantWithResetToken(ctx context.Context, t *Tenant, u *User, r *PasswordResetToken) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		u.TenantID, r.TenantID, r.UserID = t.ID, t.ID, u.ID
		if err := tx.Create(u).Error; err != nil {
			return err
		}
		return tx.Create(r).Error
	})
	if IsUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// UseResetToken spends the reset token with the given hash and sets its
// user's password hash, atomically, returning the user. An unknown, expired or
// already used token is ErrNotFound; of two concurrent uses exactly one wins.
func (s *Store) UseResetToken(ctx context.Context, hash, passwordHash string, now time.Time) (*User, error) {
	var user *User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := FirstRow[PasswordResetToken](tx.Where("token_hash = ? AND used_at IS NULL AND expires_at > ?", hash, now))
		if err != nil {
			return err
		}
		res := tx.Model(&PasswordResetToken{}).Where("id = ? AND used_at IS NULL", r.ID).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		if err := tx.Model(&User{}).Where("id = ?", r.UserID).Update("password_hash", passwordHash).Error; err != nil {
			return err
		}
		// A new password ends the sessions the old one opened.
		if err := revokeUserSessions(tx, r.UserID, now); err != nil {
			return err
		}
		user, err = FirstRow[User](tx.Where("id = ?", r.UserID))
		return err
	})
	return user, err
}

// ListUsers returns a tenant's users, oldest first.
func (s *Store) ListUsers(ctx context.Context, tenantID string) ([]User, error) {
	var users []User
	err := s.db.WithContext(ctx).Where("tenant_id = ?", tenantID).Order("created_at, id").Find(&users).Error
	return users, err
}

// TenantByID finds a tenant.
func (s *Store) TenantByID(ctx context.Context, id string) (*Tenant, error) {
	return FirstRow[Tenant](s.db.WithContext(ctx).Where("id = ?", id))
}

// SaveRefreshToken stores the first link of a new rotation chain, and drops the
// user's expired links: rotated links are kept for reuse detection only while
// they could still be presented, so the table stays bounded.
func (s *Store) SaveRefreshToken(ctx context.Context, t *RefreshToken) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := pruneRefreshTokens(tx, t.UserID, t.CreatedAt); err != nil {
			return err
		}
		return tx.Create(t).Error
	})
}

func pruneRefreshTokens(tx *gorm.DB, userID string, now time.Time) error {
	return tx.Where("user_id = ? AND expires_at < ?", userID, now).Delete(&RefreshToken{}).Error
}

// ErrRefreshReused reports that a rotated or revoked refresh token was presented
// again; the store has already revoked its family.
var ErrRefreshReused = errors.New("refresh token reused")

// RotateRefreshToken consumes the token with the given hash and stores next in the
// same family, atomically, returning the token's user read in the same
// transaction (so a failure after the rotation cannot strand the client with a
// consumed token). A token that was already rotated is a sign of theft: the
// whole family is revoked and ErrRefreshReused returned. Unknown or expired
// tokens, and tokens of a deleted user, give ErrNotFound.
func (s *Store) RotateRefreshToken(ctx context.Context, hash string, now time.Time, next func(old *RefreshToken) *RefreshToken) (*User, error) {
	var user *User
	reused := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old, err := FirstRow[RefreshToken](tx.Where("token_hash = ?", hash))
		if err != nil {
			return err
		}
		if old.RotatedAt != nil || old.RevokedAt != nil {
			reused = true
			return tx.Model(&RefreshToken{}).Where("family_id = ? AND revoked_at IS NULL", old.FamilyID).
				Update("revoked_at", now).Error
		}
		if !now.Before(old.ExpiresAt) {
			return ErrNotFound
		}
		// The conditional update makes two concurrent refreshes with the same token
		// race safely: exactly one of them sees a row change.
		res := tx.Model(&RefreshToken{}).Where("id = ? AND rotated_at IS NULL", old.ID).Update("rotated_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			reused = true
			return tx.Model(&RefreshToken{}).Where("family_id = ? AND revoked_at IS NULL", old.FamilyID).
				Update("revoked_at", now).Error
		}
		if user, err = FirstRow[User](tx.Where("id = ?", old.UserID)); err != nil {
			return err
		}
		if err := pruneRefreshTokens(tx, old.UserID, now); err != nil {
			return err
		}
		return tx.Create(next(old)).Error
	})
	if err != nil {
		return nil, err
	}
	if reused {
		return nil, ErrRefreshReused
	}
	return user, nil
}

// FirstRow runs q and returns the single row, or ErrNotFound; every domain's
// store reads single rows through it so a missing row means one thing.
func FirstRow[T any](q *gorm.DB) (*T, error) {
	var v T
	err := q.Limit(1).Take(&v).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}
