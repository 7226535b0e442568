package identity

import (
	"context"
	"errors"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// mayManage refuses an admin's change to an owner: only an owner changes or
// removes another owner (DESIGN §4).
func mayManage(p auth.Principal) func(*models.User) error {
	return func(u *models.User) error {
		if u.Role == models.RoleOwner && !p.HasAnyRole(models.RoleOwner) {
			return errcode.New(errcode.Forbidden, "only an owner may change or remove an owner")
		}
		return nil
	}
}

// peopleErr maps the store's answers about a user to the client's.
func peopleErr(err error) error {
	var e *errcode.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, models.ErrNotFound):
		return errcode.New(errcode.NotFound, "user not found")
	case errors.Is(err, models.ErrLastOwner):
		return errcode.New(errcode.LastOwner, "the tenant's last owner cannot be removed or demoted; make another owner first")
	default:
		return errcode.Down("the database", err)
	}
}

// RemoveUser deletes a user of the caller's tenant and ends all of their
// sessions at once: refresh is refused from now on and their access tokens
// stop within SessionRecheck. An admin may not remove an owner, and nobody
// the last owner.
func (a *Accounts) RemoveUser(ctx context.Context, p auth.Principal, userID string) error {
	err := a.store.RemoveUser(ctx, p.TenantID, userID, mayManage(p))
	if err == nil {
		a.sessions.forgetUser(userID)
	}
	return peopleErr(err)
}

// SetRoleInput is the body of PATCH /v1/users/{userId}.
type SetRoleInput struct {
	Role string `json:"role"`
}

// SetRole changes the role of a user of the caller's tenant and ends their
// sessions, so tokens carrying the old role stop. Only an owner grants,
// changes or takes away the owner role; the last owner keeps it.
func (a *Accounts) SetRole(ctx context.Context, p auth.Principal, userID string, in SetRoleInput) (*models.User, error) {
	if !models.ValidRole(in.Role) {
		return nil, errcode.Invalid("role must be one of owner, admin, operator, viewer")
	}
	if in.Role == models.RoleOwner && !p.HasAnyRole(models.RoleOwner) {
		return nil, errcode.New(errcode.Forbidden, "only an owner may make another owner")
	}
	u, err := a.store.SetUserRole(ctx, p.TenantID, userID, in.Role, a.now(), mayManage(p))
	if err == nil {
		a.sessions.forgetUser(userID)
	}
	return u, peopleErr(err)
}

// ChangePasswordInput is the body of POST /v1/users/me/password.
type ChangePasswordInput struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// ChangePassword sets the caller's own password after checking the current
// one, ends every session of theirs, and signs them in afresh here.
func (a *Accounts) ChangePassword(ctx context.Context, p auth.Principal, in ChangePasswordInput) (TokenPair, error) {
	if err := validPassword(in.NewPassword); err != nil {
		return TokenPair{}, err
	}
	u, err := a.store.UserByID(ctx, p.UserID)
	if err == nil && u.TenantID != p.TenantID {
		err = models.ErrNotFound
	}
	if err != nil {
		return TokenPair{}, peopleErr(err)
	}
	if !auth.CheckPassword(u.PasswordHash, in.CurrentPassword) {
		return TokenPair{}, errcode.Invalid("currentPassword is not your current password")
	}
	hash, err := auth.HashPassword(in.NewPassword)
	if err != nil {
		return TokenPair{}, err
	}
	if err := a.store.SetPassword(ctx, p.TenantID, p.UserID, hash, a.now()); err != nil {
		return TokenPair{}, peopleErr(err)
	}
	a.sessions.forgetUser(p.UserID)
	return a.issue(ctx, u, models.SignInPassword)
}

// PasswordReset is the one-time token an admin hands to a user whose
// password was reset; it exists in plain text only here.
type PasswordReset struct {
	UserID     string    `json:"userId"`
	ResetToken string    `json:"resetToken"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// ForcePasswordReset clears the password of a user of the caller's tenant,
// ends all of their sessions, and returns a one-time token with which they
// choose a new one (POST /auth/reset-password). An admin may not reset an
// owner.
func (a *Accounts) ForcePasswordReset(ctx context.Context, p auth.Principal, userID string) (PasswordReset, error) {
	now := a.now().UTC()
	token := ResetTokenPrefix + auth.RandomToken(32)
	r := &models.PasswordResetToken{ID: models.NewID("prt"), TokenHash: auth.SHA256Hex(token), ExpiresAt: now.Add(ResetTokenTTL), CreatedAt: now}
	if err := a.store.ForcePasswordReset(ctx, p.TenantID, userID, r, mayManage(p)); err != nil {
		return PasswordReset{}, peopleErr(err)
	}
	a.sessions.forgetUser(userID)
	return PasswordReset{UserID: userID, ResetToken: token, ExpiresAt: r.ExpiresAt}, nil
}
