package identity

import (
	"context"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// TestSSOUsersOwnTheirAddressOnlyWhenTheIdPSaysSo: a tenant's identity
// provider can create a user with any address. Unless the provider asserts
// it verified the address, that user does not own it, so a GitHub sign-in
// with the same address is not linked into the tenant's account (it would
// land the address's real owner in a tenant they never joined).
func TestSSOUsersOwnTheirAddressOnlyWhenTheIdPSaysSo(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	oauth := NewOAuth(p.a, config.OAuthConfig{}, auth.NewSigner("identity-test-secret-at-least-32-bytes!", "oauth-state"), "https://causeway.example")
	now := time.Now().UTC()
	for _, c := range []struct {
		email    string
		verified bool
	}{{"someone-else@gmail.example", false}, {"checked@corp.example", true}} {
		u, err := p.a.own.SignInSSOUser(ctx, SSOUser{TenantID: p.tenant, Subject: "oidc|idp|" + c.email, Email: c.email, Name: "N", Role: models.RoleViewer, EmailVerified: c.verified},
			now, func() string { return models.NewID("usr") })
		if err != nil {
			t.Fatal(err)
		}
		if (u.EmailVerifiedAt != nil) != c.verified {
			t.Errorf("%s: verified at %v, want verified = %v", c.email, u.EmailVerifiedAt, c.verified)
		}
		_, err = oauth.signIn(ctx, "github", identity{Subject: "gh-" + c.email, Email: c.email, Name: "N"})
		if c.verified && err != nil {
			t.Errorf("%s: a GitHub sign-in with the address the provider verified: %v", c.email, err)
		}
		if !c.verified && code(err) != errcode.EmailTaken {
			t.Errorf("%s: a GitHub sign-in with an address the provider never vouched for: %v, want email_taken", c.email, err)
		}
	}
}

// TestUsersAreCappedByPlan: a tenant has at most its plan's users, whether
// an admin adds them or its identity provider creates them at sign-in; two
// additions at once cannot pass the cap together; removing one makes room.
func TestUsersAreCappedByPlan(t *testing.T) {
	p := newPeople(t, AccountsConfig{Plans: map[string]config.PlanQuota{models.PlanFree: {Users: 5}}}) // owner, admin, operator
	ctx := context.Background()
	add := func(email string) error {
		_, err := p.a.CreateUser(ctx, p.ownerP, CreateUserInput{Email: email, Password: "a good long password", Name: "N", Role: models.RoleViewer})
		return err
	}
	if err := add("fourth@example.com"); err != nil {
		t.Fatalf("the fourth of five: %v", err)
	}
	errs := make(chan error, 2)
	go func() { errs <- add("fifth-a@example.com") }()
	go func() { errs <- add("fifth-b@example.com") }()
	got := []string{code(<-errs), code(<-errs)}
	if !(got[0] == "" && got[1] == errcode.PlanRequired) && !(got[1] == "" && got[0] == errcode.PlanRequired) {
		t.Fatalf("two additions for the last place: %q, want one added and one plan_required", got)
	}
	if err := add("sixth@example.com"); code(err) != errcode.PlanRequired {
		t.Errorf("past the cap: %v, want plan_required", err)
	}
	sso := &SSO{store: p.a.store, accounts: p.a, own: p.a.own, now: time.Now}
	c := &SSOConnection{TenantID: p.tenant, DefaultRole: models.RoleViewer}
	if _, err := sso.signIn(ctx, c, "oidc|idp|new", "new@corp.example", true, "New", nil); code(err) != errcode.PlanRequired {
		t.Errorf("a provider's new person past the cap: %v, want plan_required", err)
	}
	if err := p.a.RemoveUser(ctx, p.ownerP, p.opID); err != nil {
		t.Fatal(err)
	}
	if _, err := sso.signIn(ctx, c, "oidc|idp|new", "new@corp.example", true, "New", nil); err != nil {
		t.Errorf("after a removal the provider's new person: %v", err)
	}
}

// waitsForTenantLock asserts that do, run while another transaction holds
// the tenant's lock, waits for it to be released: the lock is what keeps two
// changes to a tenant's people from both passing a check made before either
// wrote. SQLite runs one writer at a time and has no such lock.
func waitsForTenantLock(t *testing.T, store *models.Store, tenantID string, do func() error) {
	t.Helper()
	if store.Dialect() != "postgres" {
		return
	}
	tx := store.DB().Begin()
	if err := models.LockTenant(tx, tenantID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- do() }()
	select {
	case err := <-done:
		tx.Rollback()
		t.Fatalf("finished (%v) while another transaction held the tenant's lock", err)
	case <-time.After(300 * time.Millisecond):
	}
	tx.Rollback()
	if err := <-done; err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}

// TestPeopleChangesTakeTheTenantLock: adding a user and removing one each
// wait for a transaction holding the tenant's lock.
func TestPeopleChangesTakeTheTenantLock(t *testing.T) {
	p := newPeople(t, AccountsConfig{Plans: map[string]config.PlanQuota{models.PlanFree: {Users: 10}}})
	ctx := context.Background()
	waitsForTenantLock(t, p.a.store, p.tenant, func() error {
		_, err := p.a.CreateUser(ctx, p.ownerP, CreateUserInput{Email: "locked@example.com", Password: "a good long password", Name: "N", Role: models.RoleViewer})
		return err
	})
	waitsForTenantLock(t, p.a.store, p.tenant, func() error { return p.a.RemoveUser(ctx, p.ownerP, p.opID) })
}
