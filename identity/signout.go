package identity

import (
	"context"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
)

// SignOut ends the session a refresh token belongs to: its whole rotation chain
// is revoked, so a copy of any of its tokens can no longer be refreshed. An
// empty or unknown token has nothing to end.
func (a *Accounts) SignOut(ctx context.Context, refreshToken string) error {
	if refreshToken == "" {
		return nil
	}
	if err := a.store.RevokeRefreshFamily(ctx, auth.SHA256Hex(refreshToken), a.now()); err != nil {
		return errcode.Down("the database", err)
	}
	return nil
}
