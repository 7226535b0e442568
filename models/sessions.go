package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// ErrLastOwner refuses a change that would leave a tenant without an owner:
// nobody could then manage its users, plan or sign-in.
var ErrLastOwner = errors.New("the tenant's last owner")

// SessionLive reports whether the session (refresh chain) an access token was
// issued in still belongs to the user and has not been ended. Removal, a role
// or password change, SSO enforcement and sign-out all revoke the chain, so
// this one question covers them all.
func (s *Store) SessionLive(ctx context.Context, userID, familyID string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&RefreshToken{}).
		Where("family_id = ? AND user_id = ? AND revoked_at IS NULL", familyID, userID).Count(&n).Error
	return n > 0, err
}

// revokeUserSessions ends every refresh chain of a user.
func revokeUserSessions(tx *gorm.DB, userID string, now time.Time) error {
	return tx.Model(&RefreshToken{}).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", now.UTC()).Error
}

// RevokeSessionsNotBy ends the refresh chains of a tenant's users that did not
// begin with method, except those of the user keep: turning on SSO
// enforcement ends password and OAuth sign-ins at once, but not the sign-ins
// through the tenant's identity provider nor the configuring owner's own.
func (s *Store) RevokeSessionsNotBy(ctx context.Context, tenantID, method, keep string, now time.Time) error {
	return s.db.WithContext(ctx).Model(&RefreshToken{}).
		Where("tenant_id = ? AND method <> ? AND user_id <> ? AND revoked_at IS NULL", tenantID, method, keep).
		Update("revoked_at", now.UTC()).Error
}

// LockTenant serialises, inside tx, the changes to one tenant's people: two
// owners removing each other at once cannot both succeed, and concurrent
// sign-ups of users cannot pass the plan's cap together. SQLite runs one
// writer at a time and needs no lock.
func LockTenant(tx *gorm.DB, tenantID string) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	return tx.Exec("SELECT id FROM tenants WHERE id = ? FOR UPDATE", tenantID).Error
}

// ErrUserCap refuses a user past the tenant's plan's cap.
var ErrUserCap = errors.New("the tenant has as many users as its plan allows")

// CountUsers is how many users a tenant has.
func (s *Store) CountUsers(ctx context.Context, tenantID string) (int, error) {
	n, err := countUsers(s.db.WithContext(ctx), tenantID)
	return int(n), err
}

func countUsers(tx *gorm.DB, tenantID string) (int64, error) {
	var n int64
	err := tx.Model(&User{}).Where("tenant_id = ?", tenantID).Count(&n).Error
	return n, err
}

// UnderUserCap reports, inside tx and under LockTenant, ErrUserCap when the
// tenant already has max users; max 0 is unlimited.
func UnderUserCap(tx *gorm.DB, tenantID string, max int) error {
	if max <= 0 {
		return nil
	}
	n, err := countUsers(tx, tenantID)
	if err != nil {
		return err
	}
	if n >= int64(max) {
		return ErrUserCap
	}
	return nil
}

// CreateUser adds a user to a tenant that has fewer than max users (0: no
// cap). ErrConflict means the e-mail (or OAuth identity) is taken,
// ErrUserCap the cap reached.
func (s *Store) CreateUser(ctx context.Context, u *User, max int) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := LockTenant(tx, u.TenantID); err != nil {
			return err
		}
		if err := UnderUserCap(tx, u.TenantID, max); err != nil {
			return err
		}
		return tx.Create(u).Error
	})
	if IsUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// ownerChange loads the tenant's user under the tenant's lock and refuses,
// with ErrLastOwner, a change that takes away the last owner. allowed sees
// the user before anything is written and may veto the change.
func (s *Store) ownerChange(tx *gorm.DB, tenantID, userID string, losesOwner func(*User) bool, allowed func(*User) error) (*User, error) {
	if err := LockTenant(tx, tenantID); err != nil {
		return nil, err
	}
	u, err := FirstRow[User](tx.Where("id = ? AND tenant_id = ?", userID, tenantID))
	if err != nil {
		return nil, err
	}
	if err := allowed(u); err != nil {
		return nil, err
	}
	if u.Role == RoleOwner && losesOwner(u) {
		var owners int64
		if err := tx.Model(&User{}).Where("tenant_id = ? AND role = ?", tenantID, RoleOwner).Count(&owners).Error; err != nil {
			return nil, err
		}
		if owners <= 1 {
			return nil, ErrLastOwner
		}
	}
	return u, nil
}

// RemoveUser deletes a tenant's user and ends all of their sessions in one
// transaction, never the last owner. allowed vetoes the removal once the user
// is read (an admin may not remove an owner). ErrNotFound for a user of
// another tenant, as for a missing one.
func (s *Store) RemoveUser(ctx context.Context, tenantID, userID string, allowed func(*User) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.ownerChange(tx, tenantID, userID, func(*User) bool { return true }, allowed); err != nil {
			return err
		}
		// The chains go with the user: nothing is left to present, so there
		// is no reuse to detect.
		if err := tx.Where("user_id = ?", userID).Delete(&RefreshToken{}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", userID).Delete(&PasswordResetToken{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ? AND tenant_id = ?", userID, tenantID).Delete(&User{}).Error
	})
}

// SetUserRole changes a tenant's user's role and ends their sessions, so the
// old role's tokens stop; never demotes the last owner. allowed vetoes the
// change once the user is read. An unchanged role changes nothing.
func (s *Store) SetUserRole(ctx context.Context, tenantID, userID, role string, now time.Time, allowed func(*User) error) (*User, error) {
	var out *User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := s.ownerChange(tx, tenantID, userID, func(*User) bool { return role != RoleOwner }, allowed)
		if err != nil {
			return err
		}
		out = u
		if u.Role == role {
			return nil
		}
		if err := tx.Model(&User{}).Where("id = ?", userID).Update("role", role).Error; err != nil {
			return err
		}
		out.Role = role
		return revokeUserSessions(tx, userID, now)
	})
	return out, err
}

// SetPassword replaces a user's password hash and ends all of their sessions
// in one transaction: whoever knew the old password is signed out everywhere.
func (s *Store) SetPassword(ctx context.Context, tenantID, userID, hash string, now time.Time) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("id = ? AND tenant_id = ?", userID, tenantID).Update("password_hash", hash)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return revokeUserSessions(tx, userID, now)
	})
}

// ForcePasswordReset clears a tenant's user's password, ends their sessions,
// spends any reset token they still hold and stores r as the only one, in one
// transaction. allowed vetoes it once the user is read.
func (s *Store) ForcePasswordReset(ctx context.Context, tenantID, userID string, r *PasswordResetToken, allowed func(*User) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := FirstRow[User](tx.Where("id = ? AND tenant_id = ?", userID, tenantID))
		if err != nil {
			return err
		}
		if err := allowed(u); err != nil {
			return err
		}
		if err := tx.Model(&User{}).Where("id = ?", userID).Update("password_hash", "").Error; err != nil {
			return err
		}
		if err := revokeUserSessions(tx, userID, r.CreatedAt); err != nil {
			return err
		}
		if err := tx.Model(&PasswordResetToken{}).Where("user_id = ? AND used_at IS NULL", userID).Update("used_at", r.CreatedAt).Error; err != nil {
			return err
		}
		r.TenantID, r.UserID = tenantID, userID
		return tx.Create(r).Error
	})
}
