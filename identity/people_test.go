package identity

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// clock is a settable time shared by the Accounts of one test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// people is one database seen by two API processes (each its own Accounts
// and session cache) on one clock, with a tenant whose owner, admin and
// operator have signed in.
type people struct {
	a, other         *Accounts
	clock            *clock
	tenant           string
	owner, admin, op TokenPair
	ownerP, adminP   auth.Principal
	adminID, opID    string
	adminPW, operPW  string
	opEml            string
}

const ownerPW = "correct horse battery"

func newPeople(t *testing.T, cfg AccountsConfig) *people {
	t.Helper()
	store := testdb.Open(t)
	tokens := auth.NewTokens("identity-test-secret-at-least-32-bytes!", "causeway", "causeway-api", 15*time.Minute, models.ValidRole)
	cfg.SignupEnabled, cfg.QuotaEvents, cfg.QuotaInvestigations = true, 100, 10
	if cfg.RefreshTTL == 0 {
		cfg.RefreshTTL = time.Hour
	}
	c := &clock{t: time.Now()}
	a, other := NewAccounts(store, tokens, cfg), NewAccounts(store, tokens, cfg)
	a.now, other.now = c.now, c.now
	ctx := context.Background()
	p := &people{a: a, other: other, clock: c, adminPW: "admins long password", operPW: "operators long password"}
	res, err := a.Signup(ctx, SignupInput{TenantName: "Acme", Email: models.NewID("owner") + "@example.com", Password: ownerPW, Name: "Olive"})
	if err != nil {
		t.Fatal(err)
	}
	p.tenant, p.owner = res.TenantID, res.TokenPair
	p.ownerP = p.principal(t, p.owner)
	adminEmail := models.NewID("admin") + "@example.com"
	p.opEml = models.NewID("op") + "@example.com"
	for _, u := range []struct{ email, pw, role string }{{adminEmail, p.adminPW, models.RoleAdmin}, {p.opEml, p.operPW, models.RoleOperator}} {
		if _, err := a.CreateUser(ctx, p.ownerP, CreateUserInput{Email: u.email, Password: u.pw, Name: u.role, Role: u.role}); err != nil {
			t.Fatal(err)
		}
	}
	if p.admin, err = a.Login(ctx, LoginInput{Email: adminEmail, Password: p.adminPW}); err != nil {
		t.Fatal(err)
	}
	if p.op, err = a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW}); err != nil {
		t.Fatal(err)
	}
	p.adminP = p.principal(t, p.admin)
	p.adminID, p.opID = p.adminP.UserID, p.principal(t, p.op).UserID
	return p
}

// principal is who a pair's access token speaks for, as a request sees it.
func (p *people) principal(t *testing.T, pair TokenPair) auth.Principal {
	t.Helper()
	who, err := p.a.Authenticate(context.Background(), pair.AccessToken)
	if err != nil {
		t.Fatalf("a fresh access token is refused: %v", err)
	}
	return who
}

func code(err error) string {
	if e, ok := errcode.As(err); ok {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// cutOff asserts that a pair's session has ended: its refresh is refused at
// once, its access token is refused at once on the process that made the
// change and, on another process that had just checked it, no later than
// SessionRecheck afterwards.
func (p *people) cutOff(t *testing.T, what string, pair TokenPair) {
	t.Helper()
	ctx := context.Background()
	if _, err := p.a.Refresh(ctx, pair.RefreshToken); code(err) != errcode.Unauthorized {
		t.Errorf("%s: refresh = %v, want unauthorized", what, err)
	}
	if _, err := p.a.Authenticate(ctx, pair.AccessToken); code(err) != errcode.Unauthorized {
		t.Errorf("%s: access token on the same process = %v, want unauthorized", what, err)
	}
	p.clock.add(SessionRecheck)
	if _, err := p.other.Authenticate(ctx, pair.AccessToken); code(err) != errcode.Unauthorized {
		t.Errorf("%s: access token on another process %s later = %v, want unauthorized", what, SessionRecheck, err)
	}
}

// warm makes the other process check, and remember, that pair's session is
// live, as a process does when the person made a request just before.
func (p *people) warm(t *testing.T, pair TokenPair) {
	t.Helper()
	if _, err := p.other.Authenticate(context.Background(), pair.AccessToken); err != nil {
		t.Fatalf("before the change the session is refused: %v", err)
	}
}

// TestSessionRecheckIsWithinTheContract: the contract gives access tokens
// 60 s to stop (DESIGN §4).
func TestSessionRecheckIsWithinTheContract(t *testing.T) {
	if SessionRecheck <= 0 || SessionRecheck > 60*time.Second {
		t.Fatalf("SessionRecheck = %s, want (0, 60s]", SessionRecheck)
	}
}

// TestRemovedUserIsCutOff: removal ends the person's sessions everywhere
// and their password no longer signs in; the others keep theirs.
func TestRemovedUserIsCutOff(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	p.warm(t, p.op)
	if err := p.a.RemoveUser(ctx, p.adminP, p.opID); err != nil {
		t.Fatalf("admin removes the operator: %v", err)
	}
	p.cutOff(t, "removed", p.op)
	if _, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW}); code(err) != errcode.InvalidCredentials {
		t.Errorf("a removed user signs in: %v", err)
	}
	if _, err := p.other.Authenticate(ctx, p.admin.AccessToken); err != nil {
		t.Errorf("removing one user ended another's session: %v", err)
	}
	if err := p.a.RemoveUser(ctx, p.adminP, p.opID); code(err) != errcode.NotFound {
		t.Errorf("removing again: %v, want not_found", err)
	}
	users, _ := p.a.ListUsers(ctx, p.ownerP)
	if len(users) != 2 {
		t.Errorf("%d users left, want 2", len(users))
	}
}

// TestRoleChangeEndsSessions: the old role's tokens stop, and the next
// sign-in carries the new role.
func TestRoleChangeEndsSessions(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	p.warm(t, p.op)
	u, err := p.a.SetRole(ctx, p.adminP, p.opID, SetRoleInput{Role: models.RoleViewer})
	if err != nil || u.Role != models.RoleViewer {
		t.Fatalf("set role: %+v %v", u, err)
	}
	p.cutOff(t, "role changed", p.op)
	again, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW})
	if err != nil {
		t.Fatal(err)
	}
	if who := p.principal(t, again); !who.HasAnyRole(models.RoleViewer) || who.HasAnyRole(models.RoleOperator) {
		t.Errorf("after the change the token says %v", who.Roles)
	}
	// The same role again changes nothing and ends nothing.
	if _, err := p.a.SetRole(ctx, p.adminP, p.opID, SetRoleInput{Role: models.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.a.Refresh(ctx, again.RefreshToken); err != nil {
		t.Errorf("an unchanged role ended the session: %v", err)
	}
}

// TestOwnersAreGuarded: an admin can neither touch an owner nor make one,
// the last owner can be neither removed nor demoted, and another tenant's
// user is not found.
func TestOwnersAreGuarded(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	ownerID := p.ownerP.UserID
	for what, err := range map[string]error{
		"admin removes the owner":  p.a.RemoveUser(ctx, p.adminP, ownerID),
		"admin demotes the owner":  second(p.a.SetRole(ctx, p.adminP, ownerID, SetRoleInput{Role: models.RoleViewer})),
		"admin makes an owner":     second(p.a.SetRole(ctx, p.adminP, p.opID, SetRoleInput{Role: models.RoleOwner})),
		"admin resets the owner":   second(p.a.ForcePasswordReset(ctx, p.adminP, ownerID)),
		"owner removes last owner": p.a.RemoveUser(ctx, p.ownerP, ownerID),
		"owner demotes last owner": second(p.a.SetRole(ctx, p.ownerP, ownerID, SetRoleInput{Role: models.RoleAdmin})),
		"another tenant's user":    p.a.RemoveUser(ctx, auth.Principal{UserID: "usr_x", TenantID: "ten_other", Roles: []string{models.RoleOwner}}, p.opID),
		"an unknown role":          second(p.a.SetRole(ctx, p.ownerP, p.opID, SetRoleInput{Role: "root"})),
	} {
		want := map[string]string{
			"admin removes the owner": errcode.Forbidden, "admin demotes the owner": errcode.Forbidden,
			"admin makes an owner": errcode.Forbidden, "admin resets the owner": errcode.Forbidden,
			"owner removes last owner": errcode.LastOwner, "owner demotes last owner": errcode.LastOwner,
			"another tenant's user": errcode.NotFound, "an unknown role": errcode.Validation,
		}[what]
		if code(err) != want {
			t.Errorf("%s: %v, want %s", what, err, want)
		}
	}
	if _, err := p.a.Refresh(ctx, p.owner.RefreshToken); err != nil {
		t.Errorf("a refused change ended the owner's session: %v", err)
	}
	// With a second owner, either may go, but not both.
	if _, err := p.a.SetRole(ctx, p.ownerP, p.adminID, SetRoleInput{Role: models.RoleOwner}); err != nil {
		t.Fatalf("owner makes the admin an owner: %v", err)
	}
	second := auth.Principal{UserID: p.adminID, TenantID: p.tenant, Roles: []string{models.RoleOwner}}
	errs := make(chan error, 2)
	go func() { errs <- p.a.RemoveUser(ctx, p.ownerP, p.adminID) }()
	go func() { errs <- p.a.RemoveUser(ctx, second, ownerID) }()
	got := []string{code(<-errs), code(<-errs)}
	removed := 0
	for _, c := range got {
		if c == "" {
			removed++
		}
	}
	if removed != 1 {
		t.Errorf("two owners removing each other at once: %q, want exactly one removal", got)
	}
}

func second[T any](_ T, err error) error { return err }

// TestPasswordChangeEndsEverySession: the person's other sessions end, the
// old password stops, and the change signs them in afresh.
func TestPasswordChangeEndsEverySession(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	other, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW})
	if err != nil {
		t.Fatal(err)
	}
	me := p.principal(t, p.op)
	if _, err := p.a.ChangePassword(ctx, me, ChangePasswordInput{CurrentPassword: "not the password", NewPassword: "a brand new password"}); code(err) != errcode.Validation {
		t.Fatalf("wrong current password: %v, want validation_error", err)
	}
	p.warm(t, other)
	fresh, err := p.a.ChangePassword(ctx, me, ChangePasswordInput{CurrentPassword: p.operPW, NewPassword: "a brand new password"})
	if err != nil {
		t.Fatalf("change password: %v", err)
	}
	p.cutOff(t, "the session that changed it", p.op)
	p.cutOff(t, "another session", other)
	if _, err := p.a.Refresh(ctx, fresh.RefreshToken); err != nil {
		t.Errorf("the new session: %v", err)
	}
	if _, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW}); code(err) != errcode.InvalidCredentials {
		t.Errorf("the old password still signs in: %v", err)
	}
}

// TestForcedResetHandsOverOnce: the person is signed out and has no
// password until they spend the token, which works once.
func TestForcedResetHandsOverOnce(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	p.warm(t, p.op)
	r, err := p.a.ForcePasswordReset(ctx, p.adminP, p.opID)
	if err != nil || r.ResetToken == "" {
		t.Fatalf("reset: %+v %v", r, err)
	}
	p.cutOff(t, "reset", p.op)
	if _, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW}); code(err) != errcode.InvalidCredentials {
		t.Errorf("the old password still signs in: %v", err)
	}
	if _, err := p.a.ResetPassword(ctx, ResetPasswordInput{Token: r.ResetToken, Password: "chosen after reset"}); err != nil {
		t.Fatalf("spend the token: %v", err)
	}
	if _, err := p.a.ResetPassword(ctx, ResetPasswordInput{Token: r.ResetToken, Password: "chosen again!!"}); code(err) != errcode.Unauthorized {
		t.Errorf("the token worked twice: %v", err)
	}
	if _, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: "chosen after reset"}); err != nil {
		t.Errorf("the new password: %v", err)
	}
}

// TestSignOutStopsTheAccessToken: sign-out ends that session's refresh and
// access tokens, and no other session.
func TestSignOutStopsTheAccessToken(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	other, err := p.a.Login(ctx, LoginInput{Email: p.opEml, Password: p.operPW})
	if err != nil {
		t.Fatal(err)
	}
	p.warm(t, p.op)
	if err := p.a.SignOut(ctx, p.op.RefreshToken); err != nil {
		t.Fatal(err)
	}
	p.cutOff(t, "signed out", p.op)
	if _, err := p.other.Authenticate(ctx, other.AccessToken); err != nil {
		t.Errorf("signing out one session ended another: %v", err)
	}
}

// TestSessionHasAnAbsoluteLifetime: refreshing often does not keep a
// sign-in alive past CAUSEWAY_AUTH_SESSION_MAX.
func TestSessionHasAnAbsoluteLifetime(t *testing.T) {
	p := newPeople(t, AccountsConfig{RefreshTTL: time.Hour, SessionMax: 2 * time.Hour})
	ctx := context.Background()
	pair := p.op
	for _, step := range []time.Duration{50 * time.Minute, 50 * time.Minute} {
		p.clock.add(step)
		next, err := p.a.Refresh(ctx, pair.RefreshToken)
		if err != nil {
			t.Fatalf("refresh within the lifetime: %v", err)
		}
		pair = next
	}
	p.clock.add(25 * time.Minute) // 2h05 after sign-in, 25 min after the last refresh
	if _, err := p.a.Refresh(ctx, pair.RefreshToken); code(err) != errcode.Unauthorized {
		t.Errorf("refresh past the session's lifetime: %v, want unauthorized", err)
	}
}

// TestRefreshRechecksSSOEnforcement: a password sign-in that survived the
// switch to enforced SSO (made in the moment between the switch and its
// revocations) cannot refresh, while a sign-in through the provider and the
// configuring owner's can.
func TestRefreshRechecksSSOEnforcement(t *testing.T) {
	p := newPeople(t, AccountsConfig{})
	ctx := context.Background()
	store := p.a.store
	if err := store.DB().Model(&models.Tenant{}).Where("id = ?", p.tenant).Update("plan", models.PlanEnterprise).Error; err != nil {
		t.Fatal(err)
	}
	opUser, err := store.UserByID(ctx, p.opID)
	if err != nil {
		t.Fatal(err)
	}
	viaSSO, err := p.a.issue(ctx, opUser, models.SignInSSO)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	c := &SSOConnection{TenantID: p.tenant, Type: SSOTypeOIDC, ConfiguredBy: p.ownerP.UserID, Enforce: true, DefaultRole: models.RoleViewer, CreatedAt: now, UpdatedAt: now}
	if err := p.a.own.SaveSSOConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := p.a.Refresh(ctx, p.admin.RefreshToken); code(err) != errcode.Unauthorized {
		t.Errorf("a password session refreshed under enforced SSO: %v", err)
	}
	if _, err := p.a.Refresh(ctx, viaSSO.RefreshToken); err != nil {
		t.Errorf("a session through the provider: %v", err)
	}
	if _, err := p.a.Refresh(ctx, p.owner.RefreshToken); err != nil {
		t.Errorf("the configuring owner's session: %v", err)
	}
}
