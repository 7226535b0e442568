// Package auth holds Causeway's credentials logic: access tokens, passwords,
// refresh tokens, signed opaque tokens (cursors, OAuth state), API keys and the
// encryption of secrets at rest. It has no HTTP or database code.
package auth

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrUnauthorized is returned for every token problem; callers answer 401 without
// saying which check failed.
var ErrUnauthorized = errors.New("unauthorized")

// Principal is who a verified access token speaks for. The tenant comes only from here.
type Principal struct {
	UserID   string
	Email    string
	TenantID string
	Roles    []string
	// SessionID is the sign-in (refresh chain) the access token was issued
	// in, so ending the session can stop its access tokens too.
	SessionID string
}

// HasAnyRole reports whether the principal holds one of roles.
func (p Principal) HasAnyRole(roles ...string) bool {
	for _, r := range p.Roles {
		if slices.Contains(roles, r) {
			return true
		}
	}
	return false
}

// claims is the access token body: sub, email, tenant_id, roles, iss, aud and
// exp, plus iat and sid (the session).
type claims struct {
	Email     string   `json:"email"`
	TenantID  string   `json:"tenant_id"`
	Roles     []string `json:"roles"`
	SessionID string   `json:"sid"`
	jwt.RegisteredClaims
}

// Tokens issues and verifies HS256 access tokens.
type Tokens struct {
	key      []byte
	issuer   string
	audience string
	ttl      time.Duration
	now      func() time.Time
	validRol func(string) bool
	parser   *jwt.Parser
}

// NewTokens builds the issuer/verifier. validRole guards the roles claim so a token
// minted with an unknown role is refused like any other bad token.
func NewTokens(secret, issuer, audience string, ttl time.Duration, validRole func(string) bool) *Tokens {
	t := &Tokens{key: []byte(secret), issuer: issuer, audience: audience, ttl: ttl, now: time.Now, validRol: validRole}
	// Built once: every authenticated request verifies a token.
	t.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithAudience(audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(30*time.Second),
		jwt.WithTimeFunc(func() time.Time { return t.now() }),
	)
	return t
}

// TTL is the access token lifetime (the expiresIn of token responses).
func (t *Tokens) TTL() time.Duration { return t.ttl }

// Issue mints an access token for p.
func (t *Tokens) Issue(p Principal) (string, error) {
	now := t.now()
	c := claims{
		Email:     p.Email,
		TenantID:  p.TenantID,
		Roles:     p.Roles,
		SessionID: p.SessionID,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   p.UserID,
			Issuer:    t.issuer,
			Audience:  jwt.ClaimStrings{t.audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(t.ttl)),
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.key)
	if err != nil {
		return "", fmt.Errorf("sign access token: %w", err)
	}
	return s, nil
}

// Verify checks the signature with the algorithm pinned to HS256 (so alg=none and
// algorithm-confusion tokens fail), the issuer, the audience, the expiry, and that
// every claim of the token body is present.
func (t *Tokens) Verify(raw string) (Principal, error) {
	var c claims
	_, err := t.parser.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return t.key, nil })
	if err != nil {
		return Principal{}, ErrUnauthorized
	}
	if c.Subject == "" || c.Email == "" || c.TenantID == "" || c.IssuedAt == nil || len(c.Roles) == 0 || c.SessionID == "" {
		return Principal{}, ErrUnauthorized
	}
	for _, r := range c.Roles {
		if !t.validRol(r) {
			return Principal{}, ErrUnauthorized
		}
	}
	return Principal{UserID: c.Subject, Email: c.Email, TenantID: c.TenantID, Roles: c.Roles, SessionID: c.SessionID}, nil
}
