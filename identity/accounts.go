package identity

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Accounts serves sign-up, login, token refresh and user management.
type Accounts struct {
	store      *models.Store
	own        *Store
	tokens     *auth.Tokens
	refreshTTL time.Duration
	sessionMax time.Duration
	sessions   *sessionCache
	signup     bool
	quotas     models.Tenant // template for new tenants: the free plan
	plans      map[string]config.PlanQuota
	now        func() time.Time
}

// AccountsConfig carries the settings Accounts needs from config.
type AccountsConfig struct {
	RefreshTTL time.Duration
	// SessionMax is the absolute lifetime of a sign-in's refresh chain
	// (CAUSEWAY_AUTH_SESSION_MAX); zero means RefreshTTL.
	SessionMax          time.Duration
	SignupEnabled       bool
	QuotaEvents         int
	QuotaInvestigations int
	// Plans is every plan's quotas, for an operator who opens a tenant on a
	// plan other than free; nil allows only free.
	Plans map[string]config.PlanQuota
}

// NewAccounts wires the accounts service.
func NewAccounts(store *models.Store, tokens *auth.Tokens, c AccountsConfig) *Accounts {
	if c.SessionMax <= 0 {
		c.SessionMax = c.RefreshTTL
	}
	return &Accounts{
		store: store, own: NewStore(store.DB()), tokens: tokens, refreshTTL: c.RefreshTTL, sessionMax: c.SessionMax,
		sessions: newSessionCache(), signup: c.SignupEnabled,
		quotas: models.Tenant{Plan: models.PlanFree, QuotaEvents: c.QuotaEvents, QuotaInvestigations: c.QuotaInvestigations},
		plans:  c.Plans,
		now:    time.Now,
	}
}

// TokenPair is what every successful sign-in returns.
type TokenPair struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	TokenType    string `json:"tokenType"`
	ExpiresIn    int    `json:"expiresIn"`
}

// SignupInput is the body of POST /auth/signup.
type SignupInput struct {
	TenantName string `json:"tenantName"`
	Email      string `json:"email"`
	Password   string `json:"password"`
	Name       string `json:"name"`
}

// SignupResult is the 201 body of POST /auth/signup.
type SignupResult struct {
	TenantID string `json:"tenantId"`
	UserID   string `json:"userId"`
	TokenPair
}

// Signup creates a tenant with its owner and signs the owner in.
func (a *Accounts) Signup(ctx context.Context, in SignupInput) (SignupResult, error) {
	if !a.signup {
		return SignupResult{}, errcode.New(errcode.SignupDisabled, "self-service sign-up is disabled on this server")
	}
	in.TenantName = strings.TrimSpace(in.TenantName)
	if in.TenantName == "" || utf8.RuneCountInString(in.TenantName) > 200 {
		return SignupResult{}, errcode.Invalid("tenantName is required (at most 200 characters)")
	}
	user, err := a.newUser(in.Email, in.Password, in.Name, models.RoleOwner)
	if err != nil {
		return SignupResult{}, err
	}
	t := a.quotas
	t.ID, t.Name, t.CreatedAt = models.NewID("ten"), in.TenantName, a.now().UTC()
	if err := a.store.CreateTenantWithOwner(ctx, &t, user); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return SignupResult{}, errcode.New(errcode.EmailTaken, "an account with this e-mail already exists")
		}
		return SignupResult{}, errcode.Down("the database", err)
	}
	pair, err := a.issue(ctx, user, models.SignInPassword)
	if err != nil {
		return SignupResult{}, err
	}
	return SignupResult{TenantID: t.ID, UserID: user.ID, TokenPair: pair}, nil
}

// CreateTenantInput is what an operator gives `causeway tenant create`.
type CreateTenantInput struct {
	Name       string
	OwnerEmail string
	OwnerName  string
	// Plan is the tenant's plan; empty is free.
	Plan string
}

// CreatedTenant is the new tenant and the owner's one-time reset token, which
// exists in plain text only here.
type CreatedTenant struct {
	TenantID   string
	UserID     string
	OwnerEmail string
	ResetToken string
	ExpiresAt  time.Time
}

// ResetTokenTTL is how long an owner has to use the token of a new tenant.
const ResetTokenTTL = 72 * time.Hour

// ResetTokenPrefix starts every reset token, so a leaked one is recognisable.
const ResetTokenPrefix = "crt_"

// CreateTenant is the operator's way to open a tenant when self-service sign-up
// is off: the tenant and its owner, who has no password until they exchange
// the returned one-time token for one (ResetPassword). Nothing secret is ever
// chosen or seen by the operator beyond that token.
func (a *Accounts) CreateTenant(ctx context.Context, in CreateTenantInput) (CreatedTenant, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > 200 {
		return CreatedTenant{}, errcode.Invalid("name is required (at most 200 characters)")
	}
	email, err := validEmail(in.OwnerEmail)
	if err != nil {
		return CreatedTenant{}, err
	}
	name := strings.TrimSpace(in.OwnerName)
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	if utf8.RuneCountInString(name) > 200 {
		return CreatedTenant{}, errcode.Invalid("owner name must be at most 200 characters")
	}
	now := a.now().UTC()
	t := a.quotas
	if in.Plan != "" && in.Plan != models.PlanFree {
		q, err := planQuota(a.plans, in.Plan)
		if err != nil {
			return CreatedTenant{}, err
		}
		t = models.Tenant{Plan: in.Plan, QuotaEvents: q.EventsPerMonth, QuotaInvestigations: q.InvestigationsPerMonth}
	}
	t.ID, t.Name, t.CreatedAt = models.NewID("ten"), in.Name, now
	u := &models.User{ID: models.NewID("usr"), Email: email, Name: name, Role: models.RoleOwner, CreatedAt: now}
	token := ResetTokenPrefix + auth.RandomToken(32)
	r := &models.PasswordResetToken{ID: models.NewID("prt"), TokenHash: auth.SHA256Hex(token), ExpiresAt: now.Add(ResetTokenTTL), CreatedAt: now}
	if err := a.store.CreateTenantWithResetToken(ctx, &t, u, r); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return CreatedTenant{}, errcode.New(errcode.EmailTaken, "an account with this e-mail already exists")
		}
		return CreatedTenant{}, errcode.Down("the database", err)
	}
	return CreatedTenant{TenantID: t.ID, UserID: u.ID, OwnerEmail: email, ResetToken: token, ExpiresAt: r.ExpiresAt}, nil
}

// ResetPasswordInput is the body of POST /auth/reset-password.
type ResetPasswordInput struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// ResetPassword spends a one-time token, sets the password and signs the user
// in. An unknown, expired or used token gets one answer.
func (a *Accounts) ResetPassword(ctx context.Context, in ResetPasswordInput) (TokenPair, error) {
	if in.Token == "" {
		return TokenPair{}, errcode.Invalid("token is required")
	}
	if err := validPassword(in.Password); err != nil {
		return TokenPair{}, err
	}
	hash, err := auth.HashPassword(in.Password)
	if err != nil {
		return TokenPair{}, err
	}
	u, err := a.store.UseResetToken(ctx, auth.SHA256Hex(in.Token), hash, a.now().UTC())
	switch {
	case errors.Is(err, models.ErrNotFound):
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the token is invalid, expired or already used")
	case err != nil:
		return TokenPair{}, errcode.Down("the database", err)
	}
	return a.issueOutsideSSO(ctx, u, models.SignInPassword)
}

// issueOutsideSSO signs in a user who proved who they are by password (or
// GitHub/Google), unless their tenant enforces single sign-on: then only the
// owner who configured it may, so the tenant is never locked out by its own
// identity provider. Enforcement holds while the tenant is on enterprise.
// It is checked after the credentials, so it reveals nothing to a guesser.
func (a *Accounts) issueOutsideSSO(ctx context.Context, u *models.User, method string) (TokenPair, error) {
	if err := a.outsideSSOAllowed(ctx, u); err != nil {
		return TokenPair{}, err
	}
	return a.issue(ctx, u, method)
}

// outsideSSOAllowed refuses a sign-in that did not come through the tenant's
// identity provider while the tenant enforces single sign-on.
func (a *Accounts) outsideSSOAllowed(ctx context.Context, u *models.User) error {
	c, err := a.own.SSOConnection(ctx, u.TenantID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil
	case err != nil:
		return errcode.Down("the database", err)
	}
	if c.Enforce && u.ID != c.ConfiguredBy {
		t, err := a.store.TenantByID(ctx, u.TenantID)
		if err != nil {
			return errcode.Down("the database", err)
		}
		if t.Plan == models.PlanEnterprise {
			return errcode.New(errcode.Unauthorized, "this tenant signs in through single sign-on (SSO) only: GET /auth/sso/%s/login", u.TenantID)
		}
	}
	return nil
}

func validEmail(email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 320 {
		return "", errcode.Invalid("email must be a valid e-mail address")
	}
	return email, nil
}

func validPassword(password string) error {
	if utf8.RuneCountInString(password) < auth.MinPasswordLength || len(password) > 72 {
		return errcode.Invalid("password must be %d to 72 characters", auth.MinPasswordLength)
	}
	return nil
}

// newUser validates and builds a password user.
func (a *Accounts) newUser(email, password, name, role string) (*models.User, error) {
	email, err := validEmail(email)
	if err != nil {
		return nil, err
	}
	if err := validPassword(password); err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return nil, errcode.Invalid("name is required (at most 200 characters)")
	}
	if !models.ValidRole(role) {
		return nil, errcode.Invalid("role must be one of owner, admin, operator, viewer")
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return nil, err
	}
	return &models.User{
		ID: models.NewID("usr"), Email: email, Name: name, Role: role, PasswordHash: hash, CreatedAt: a.now().UTC(),
	}, nil
}

// LoginInput is the body of POST /auth/login.
type LoginInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// Login checks a password. Unknown e-mail and wrong password get the same answer
// in the same time.
func (a *Accounts) Login(ctx context.Context, in LoginInput) (TokenPair, error) {
	u, err := a.store.UserByEmail(ctx, strings.TrimSpace(in.Email))
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return TokenPair{}, errcode.Down("the database", err)
	}
	hash := ""
	if u != nil {
		hash = u.PasswordHash
	}
	if !auth.CheckPassword(hash, in.Password) {
		return TokenPair{}, errcode.New(errcode.InvalidCredentials, "e-mail or password is incorrect")
	}
	return a.issueOutsideSSO(ctx, u, models.SignInPassword)
}

// Refresh rotates a refresh token. Presenting an already-rotated token revokes the
// whole chain it belongs to: whoever holds a copy is locked out with the thief.
// A chain that did not begin at the tenant's identity provider ends when the
// tenant enforces single sign-on, and no chain outlives its absolute lifetime.
func (a *Accounts) Refresh(ctx context.Context, token string) (TokenPair, error) {
	if token == "" {
		return TokenPair{}, errcode.Invalid("refreshToken is required")
	}
	now := a.now().UTC()
	plain := auth.RandomToken(32)
	var chain *models.RefreshToken
	u, err := a.store.RotateRefreshToken(ctx, auth.SHA256Hex(token), now, func(old *models.RefreshToken) *models.RefreshToken {
		chain = old
		return a.refreshRow(old.TenantID, old.UserID, old.FamilyID, old.Method, startOf(old), plain, now)
	})
	switch {
	case errors.Is(err, models.ErrNotFound), errors.Is(err, models.ErrRefreshReused):
		return TokenPair{}, errcode.New(errcode.Unauthorized, "refresh token is invalid, expired or already used")
	case err != nil:
		return TokenPair{}, errcode.Down("the database", err)
	}
	if chain.Method != models.SignInSSO {
		if err := a.outsideSSOAllowed(ctx, u); err != nil {
			if e, ok := errcode.As(err); ok && e.Code == errcode.Unauthorized {
				// The chain ends here rather than at every later refresh; if
				// this fails, the next refresh is refused the same way.
				_ = a.SignOut(ctx, plain)
			}
			return TokenPair{}, err
		}
	}
	access, err := a.tokens.Issue(principalOf(u, chain.FamilyID))
	if err != nil {
		return TokenPair{}, err
	}
	return a.pair(access, plain), nil
}

// startOf is when a chain began; links written before that was recorded
// count from their own creation.
func startOf(t *models.RefreshToken) time.Time {
	if t.StartedAt.IsZero() {
		return t.CreatedAt
	}
	return t.StartedAt
}

// issue signs a user in: a new access token and the first link of a new
// refresh chain, which records how the sign-in was made (method).
func (a *Accounts) issue(ctx context.Context, u *models.User, method string) (TokenPair, error) {
	now := a.now().UTC()
	family := models.NewID("rtf")
	access, err := a.tokens.Issue(principalOf(u, family))
	if err != nil {
		return TokenPair{}, err
	}
	plain := auth.RandomToken(32)
	if err := a.store.SaveRefreshToken(ctx, a.refreshRow(u.TenantID, u.ID, family, method, now, plain, now)); err != nil {
		return TokenPair{}, errcode.Down("the database", err)
	}
	return a.pair(access, plain), nil
}

// refreshRow is the next link of a chain begun at started: it expires after
// the refresh lifetime, or when the session's absolute lifetime ends if
// that is sooner.
func (a *Accounts) refreshRow(tenantID, userID, family, method string, started time.Time, plain string, now time.Time) *models.RefreshToken {
	expires := now.Add(a.refreshTTL)
	if end := started.Add(a.sessionMax); end.Before(expires) {
		expires = end
	}
	return &models.RefreshToken{
		ID: models.NewID("rt"), TenantID: tenantID, UserID: userID, FamilyID: family, Method: method, StartedAt: started,
		TokenHash: auth.SHA256Hex(plain), ExpiresAt: expires, CreatedAt: now,
	}
}

func (a *Accounts) pair(access, refresh string) TokenPair {
	return TokenPair{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer", ExpiresIn: int(a.tokens.TTL().Seconds())}
}

func principalOf(u *models.User, session string) auth.Principal {
	return auth.Principal{UserID: u.ID, Email: u.Email, TenantID: u.TenantID, Roles: []string{u.Role}, SessionID: session}
}

// CreateUserInput is the body of POST /v1/users.
type CreateUserInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
	Role     string `json:"role"`
}

// CreateUser adds a user to the caller's tenant. Only an owner may create an owner.
func (a *Accounts) CreateUser(ctx context.Context, p auth.Principal, in CreateUserInput) (*models.User, error) {
	if in.Role == models.RoleOwner && !p.HasAnyRole(models.RoleOwner) {
		return nil, errcode.New(errcode.Forbidden, "only an owner may create another owner")
	}
	u, err := a.newUser(in.Email, in.Password, in.Name, in.Role)
	if err != nil {
		return nil, err
	}
	u.TenantID = p.TenantID
	limit, plan, err := a.userCap(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	if err := a.store.CreateUser(ctx, u, limit); err != nil {
		switch {
		case errors.Is(err, models.ErrConflict):
			return nil, errcode.New(errcode.EmailTaken, "an account with this e-mail already exists")
		case errors.Is(err, models.ErrUserCap):
			return nil, userCapErr(plan, limit)
		}
		return nil, errcode.Down("the database", err)
	}
	return u, nil
}

// userCap is how many users the tenant's plan allows (0: no cap), and the
// plan's name.
func (a *Accounts) userCap(ctx context.Context, tenantID string) (int, string, error) {
	t, err := a.store.TenantByID(ctx, tenantID)
	if err != nil {
		return 0, "", errcode.Down("the database", err)
	}
	return a.plans[t.Plan].Users, t.Plan, nil
}

func userCapErr(plan string, limit int) error {
	return errcode.New(errcode.PlanRequired, "the %s plan allows %d users; remove one, or ask the operator for a larger plan", plan, limit)
}

// ListUsers returns the caller's tenant's users.
func (a *Accounts) ListUsers(ctx context.Context, p auth.Principal) ([]models.User, error) {
	users, err := a.store.ListUsers(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return users, nil
}
