package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// accounts is the accounts service over the test database, with sign-up on
// and the free plan's quotas.
func accounts(t *testing.T) (*identity.Accounts, *auth.Tokens) {
	t.Helper()
	tokens := auth.NewTokens("identity-test-secret-at-least-32-bytes!", "causeway", "causeway-api", 15*time.Minute, models.ValidRole)
	return identity.NewAccounts(testdb.Open(t), tokens, identity.AccountsConfig{
		RefreshTTL: time.Hour, SignupEnabled: true, QuotaEvents: 100, QuotaInvestigations: 10,
	}), tokens
}

func codeOf(t *testing.T, err error) string {
	t.Helper()
	e, ok := errcode.As(err)
	if !ok {
		t.Fatalf("error %v carries no client code", err)
	}
	return e.Code
}

func signup(t *testing.T, a *identity.Accounts) (identity.SignupResult, string) {
	t.Helper()
	email := models.NewID("owner") + "@example.com"
	res, err := a.Signup(context.Background(), identity.SignupInput{TenantName: "Acme", Email: email, Password: "correct horse battery", Name: "Olive"})
	if err != nil {
		t.Fatalf("signup: %v", err)
	}
	return res, email
}

// TestSignupSignsTheOwnerIn: the access token names the new tenant and its
// owner, and the password signs in again.
func TestSignupSignsTheOwnerIn(t *testing.T) {
	a, tokens := accounts(t)
	res, email := signup(t, a)
	p, err := tokens.Verify(res.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if p.TenantID != res.TenantID || p.UserID != res.UserID || !p.HasAnyRole(models.RoleOwner) {
		t.Errorf("principal %+v, want owner %s of %s", p, res.UserID, res.TenantID)
	}
	if _, err := a.Login(context.Background(), identity.LoginInput{Email: email, Password: "correct horse battery"}); err != nil {
		t.Errorf("login with the sign-up password: %v", err)
	}
}

// TestLoginGivesOneAnswerToGuessers: an unknown address and a wrong
// password are the same invalid_credentials, so answers reveal no account.
func TestLoginGivesOneAnswerToGuessers(t *testing.T) {
	a, _ := accounts(t)
	_, email := signup(t, a)
	ctx := context.Background()
	_, wrong := a.Login(ctx, identity.LoginInput{Email: email, Password: "not the password"})
	_, unknown := a.Login(ctx, identity.LoginInput{Email: "nobody-" + email, Password: "correct horse battery"})
	for name, err := range map[string]error{"wrong password": wrong, "unknown address": unknown} {
		if err == nil || codeOf(t, err) != errcode.InvalidCredentials {
			t.Errorf("%s: %v, want invalid_credentials", name, err)
		}
	}
	if wrong.Error() != unknown.Error() {
		t.Errorf("the two refusals differ: %q and %q", wrong, unknown)
	}
}

// TestRefreshReuseEndsTheChain: a refresh token works once; presenting the
// rotated one again revokes the chain, so the token it was exchanged for
// stops working too.
func TestRefreshReuseEndsTheChain(t *testing.T) {
	a, _ := accounts(t)
	res, _ := signup(t, a)
	ctx := context.Background()
	next, err := a.Refresh(ctx, res.RefreshToken)
	if err != nil {
		t.Fatalf("first refresh: %v", err)
	}
	if next.RefreshToken == res.RefreshToken {
		t.Fatal("the refresh token was not rotated")
	}
	if _, err := a.Refresh(ctx, res.RefreshToken); err == nil || codeOf(t, err) != errcode.Unauthorized {
		t.Fatalf("reused token: %v, want unauthorized", err)
	}
	if _, err := a.Refresh(ctx, next.RefreshToken); err == nil || codeOf(t, err) != errcode.Unauthorized {
		t.Errorf("the chain outlived the reuse of its first link: %v", err)
	}
}

// TestSignOutEndsTheSession: after sign-out no token of the chain refreshes,
// while another session of the same person keeps working.
func TestSignOutEndsTheSession(t *testing.T) {
	a, _ := accounts(t)
	res, email := signup(t, a)
	ctx := context.Background()
	other, err := a.Login(ctx, identity.LoginInput{Email: email, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	next, err := a.Refresh(ctx, res.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SignOut(ctx, next.RefreshToken); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	// The current link first: presenting the rotated one would end the
	// chain by reuse detection whether or not sign-out did.
	if _, err := a.Refresh(ctx, next.RefreshToken); err == nil {
		t.Error("the signed-out session still refreshes")
	}
	if _, err := a.Refresh(ctx, other.RefreshToken); err != nil {
		t.Errorf("signing out one session ended another: %v", err)
	}
}

// TestOnlyAnOwnerMakesAnOwner: an admin adds users but not owners, and an
// address already taken is email_taken.
func TestOnlyAnOwnerMakesAnOwner(t *testing.T) {
	a, _ := accounts(t)
	res, email := signup(t, a)
	ctx := context.Background()
	admin := auth.Principal{UserID: "usr_admin", TenantID: res.TenantID, Roles: []string{models.RoleAdmin}}
	owner := auth.Principal{UserID: res.UserID, TenantID: res.TenantID, Roles: []string{models.RoleOwner}}
	in := identity.CreateUserInput{Email: models.NewID("new") + "@example.com", Password: "another good password", Name: "Nia", Role: models.RoleOwner}
	if _, err := a.CreateUser(ctx, admin, in); err == nil || codeOf(t, err) != errcode.Forbidden {
		t.Errorf("an admin created an owner: %v", err)
	}
	u, err := a.CreateUser(ctx, owner, in)
	if err != nil || u.TenantID != res.TenantID || u.Role != models.RoleOwner {
		t.Fatalf("owner creating an owner: %+v, %v", u, err)
	}
	in.Email, in.Role = email, models.RoleViewer
	if _, err := a.CreateUser(ctx, admin, in); err == nil || codeOf(t, err) != errcode.EmailTaken {
		t.Errorf("a taken address: %v, want email_taken", err)
	}
}

// TestRequireRole is the one role check: a viewer is refused what needs an
// admin, with the roles it needs named.
func TestRequireRole(t *testing.T) {
	viewer := auth.Principal{Roles: []string{models.RoleViewer}}
	if err := identity.RequireRole(viewer, models.RoleOwner, models.RoleAdmin); err == nil || codeOf(t, err) != errcode.Forbidden {
		t.Errorf("viewer passed an admin check: %v", err)
	}
	if err := identity.RequireRole(viewer, models.RoleViewer); err != nil {
		t.Errorf("viewer refused a viewer check: %v", err)
	}
}
