package service

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/models"
)

// Accounts serves sign-up, login, token refresh and user management.
type Accounts struct {
	store      *models.Store
	tokens     *auth.Tokens
	refreshTTL time.Duration
	signup     bool
	quotas     models.Tenant // quota template for new tenants
	now        func() time.Time
}

// AccountsConfig carries the settings Accounts needs from config.
type AccountsConfig struct {
	RefreshTTL          time.Duration
	SignupEnabled       bool
	QuotaEvents         int
	QuotaInvestigations int
}

// NewAccounts wires the accounts service.
func NewAccounts(store *models.Store, tokens *auth.Tokens, c AccountsConfig) *Accounts {
	return &Accounts{
		store: store, tokens: tokens, refreshTTL: c.RefreshTTL, signup: c.SignupEnabled,
		quotas: models.Tenant{QuotaEvents: c.QuotaEvents, QuotaInvestigations: c.QuotaInvestigations},
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
		return SignupResult{}, Errorf(CodeSignupDisabled, "self-service sign-up is disabled on this server")
	}
	in.TenantName = strings.TrimSpace(in.TenantName)
	if in.TenantName == "" || utf8.RuneCountInString(in.TenantName) > 200 {
		return SignupResult{}, validation("tenantName is required (at most 200 characters)")
	}
	user, err := a.newUser(in.Email, in.Password, in.Name, models.RoleOwner)
	if err != nil {
		return SignupResult{}, err
	}
	t := a.quotas
	t.ID, t.Name, t.CreatedAt = models.NewID("ten"), in.TenantName, a.now().UTC()
	if err := a.store.CreateTenantWithOwner(ctx, &t, user); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return SignupResult{}, Errorf(CodeEmailTaken, "an account with this e-mail already exists")
		}
		return SignupResult{}, unavailable("the database", err)
	}
	pair, err := a.issue(ctx, user)
	if err != nil {
		return SignupResult{}, err
	}
	return SignupResult{TenantID: t.ID, UserID: user.ID, TokenPair: pair}, nil
}

// newUser validates and builds a password user.
func (a *Accounts) newUser(email, password, name, role string) (*models.User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 320 {
		return nil, validation("email must be a valid e-mail address")
	}
	if utf8.RuneCountInString(password) < auth.MinPasswordLength || len(password) > 72 {
		return nil, validation("password must be %d to 72 characters", auth.MinPasswordLength)
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return nil, validation("name is required (at most 200 characters)")
	}
	if !models.ValidRole(role) {
		return nil, validation("role must be one of owner, admin, operator, viewer")
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
		return TokenPair{}, unavailable("the database", err)
	}
	hash := ""
	if u != nil {
		hash = u.PasswordHash
	}
	if !auth.CheckPassword(hash, in.Password) {
		return TokenPair{}, Errorf(CodeInvalidCredentials, "e-mail or password is incorrect")
	}
	return a.issue(ctx, u)
}

// Refresh rotates a refresh token. Presenting an already-rotated token revokes the
// whole chain it belongs to: whoever holds a copy is locked out with the thief.
func (a *Accounts) Refresh(ctx context.Context, token string) (TokenPair, error) {
	if token == "" {
		return TokenPair{}, validation("refreshToken is required")
	}
	now := a.now().UTC()
	plain := auth.RandomToken(32)
	u, err := a.store.RotateRefreshToken(ctx, auth.SHA256Hex(token), now, func(old *models.RefreshToken) *models.RefreshToken {
		return a.refreshRow(old.TenantID, old.UserID, old.FamilyID, plain, now)
	})
	switch {
	case errors.Is(err, models.ErrNotFound), errors.Is(err, models.ErrRefreshReused):
		return TokenPair{}, Errorf(CodeUnauthorized, "refresh token is invalid, expired or already used")
	case err != nil:
		return TokenPair{}, unavailable("the database", err)
	}
	access, err := a.tokens.Issue(principalOf(u))
	if err != nil {
		return TokenPair{}, err
	}
	return a.pair(access, plain), nil
}

// issue signs a user in: a new access token and the first link of a new refresh chain.
func (a *Accounts) issue(ctx context.Context, u *models.User) (TokenPair, error) {
	access, err := a.tokens.Issue(principalOf(u))
	if err != nil {
		return TokenPair{}, err
	}
	plain := auth.RandomToken(32)
	if err := a.store.SaveRefreshToken(ctx, a.refreshRow(u.TenantID, u.ID, models.NewID("rtf"), plain, a.now().UTC())); err != nil {
		return TokenPair{}, unavailable("the database", err)
	}
	return a.pair(access, plain), nil
}

func (a *Accounts) refreshRow(tenantID, userID, family, plain string, now time.Time) *models.RefreshToken {
	return &models.RefreshToken{
		ID: models.NewID("rt"), TenantID: tenantID, UserID: userID, FamilyID: family,
		TokenHash: auth.SHA256Hex(plain), ExpiresAt: now.Add(a.refreshTTL), CreatedAt: now,
	}
}

func (a *Accounts) pair(access, refresh string) TokenPair {
	return TokenPair{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer", ExpiresIn: int(a.tokens.TTL().Seconds())}
}

func principalOf(u *models.User) auth.Principal {
	return auth.Principal{UserID: u.ID, Email: u.Email, TenantID: u.TenantID, Roles: []string{u.Role}}
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
		return nil, Errorf(CodeForbidden, "only an owner may create another owner")
	}
	u, err := a.newUser(in.Email, in.Password, in.Name, in.Role)
	if err != nil {
		return nil, err
	}
	u.TenantID = p.TenantID
	if err := a.store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return nil, Errorf(CodeEmailTaken, "an account with this e-mail already exists")
		}
		return nil, unavailable("the database", err)
	}
	return u, nil
}

// ListUsers returns the caller's tenant's users.
func (a *Accounts) ListUsers(ctx context.Context, p auth.Principal) ([]models.User, error) {
	users, err := a.store.ListUsers(ctx, p.TenantID)
	if err != nil {
		return nil, unavailable("the database", err)
	}
	return users, nil
}
