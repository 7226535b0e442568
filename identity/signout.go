package identity

import (
	"context"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
)

// SignOut ends the session a refresh token belongs to: its whole rotation chain
// is revoked, so a copy of any of its tokens can no longer be refreshed, and
// the session's access tokens stop (Authenticate). An empty or unknown token
// has nothing to end.
func (a *Accounts) SignOut(ctx context.Context, refreshToken string) error {
	if refreshToken == "" {
		return nil
	}
	userID, err := a.store.RevokeRefreshFamily(ctx, auth.SHA256Hex(refreshToken), a.now())
	if err != nil {
		return errcode.Down("the database", err)
	}
	a.sessions.forgetUser(userID)
	return nil
}
