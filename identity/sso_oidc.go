package identity

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
)

// ssoFlowTTL bounds how long a started sign-in may take at the provider.
const ssoFlowTTL = 10 * time.Minute

// oidcState travels through the provider as the state parameter: which
// tenant's flow this is and its single-use id.
type oidcState struct {
	Tenant string `json:"t"`
	ID     string `json:"j"`
}

// oidcBrowser stays in the browser's cookie: the same id, the nonce the ID
// token must carry and the PKCE verifier, so a code and state intercepted on
// their way back are useless without the browser that started the flow.
type oidcBrowser struct {
	ID       string `json:"j"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

func (s *SSO) oidcContext(ctx context.Context) context.Context {
	ctx = oidc.ClientContext(ctx, s.http)
	return context.WithValue(ctx, oauth2.HTTPClient, s.http)
}

func (s *SSO) configureOIDC(ctx context.Context, c *SSOConnection, in SSOInput) error {
	if _, err := s.checkURL("issuer", in.Issuer); err != nil {
		return err
	}
	if in.ClientID == "" || utf8.RuneCountInString(in.ClientID) > 300 {
		return errcode.Invalid("clientId is required (at most 300 characters)")
	}
	if in.ClientSecret == "" || len(in.ClientSecret) > 2000 {
		return errcode.Invalid("clientSecret is required (at most 2000 bytes)")
	}
	if _, err := oidc.NewProvider(s.oidcContext(ctx), in.Issuer); err != nil {
		return errcode.Invalid("issuer: no usable OpenID Connect discovery document at %s/.well-known/openid-configuration (unreachable, or it names another issuer)", in.Issuer)
	}
	c.Issuer, c.ClientID = in.Issuer, in.ClientID
	c.ClientSecretEnc = s.sealer.Encrypt([]byte(in.ClientSecret), oidcSecretAAD(c.TenantID))
	return nil
}

func oidcSecretAAD(tenantID string) []byte { return []byte("sso-oidc-secret/" + tenantID) }

// oauthConfig discovers the provider and builds the client registration.
func (s *SSO) oauthConfig(ctx context.Context, c *SSOConnection) (*oidc.Provider, *oauth2.Config, error) {
	p, err := oidc.NewProvider(s.oidcContext(ctx), c.Issuer)
	if err != nil {
		return nil, nil, errcode.Down("the identity provider", err)
	}
	secret, err := s.sealer.Decrypt(c.ClientSecretEnc, oidcSecretAAD(c.TenantID))
	if err != nil {
		return nil, nil, err
	}
	return p, &oauth2.Config{
		ClientID: c.ClientID, ClientSecret: string(secret), Endpoint: p.Endpoint(),
		RedirectURL: s.url(c.TenantID, "callback"), Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
	}, nil
}

func (s *SSO) oidcLogin(ctx context.Context, c *SSOConnection) (LoginRedirect, error) {
	_, cfg, err := s.oauthConfig(ctx, c)
	if err != nil {
		return LoginRedirect{}, err
	}
	b := oidcBrowser{ID: auth.RandomToken(16), Nonce: auth.RandomToken(16), Verifier: oauth2.GenerateVerifier()}
	state, err := s.state.Seal(oidcState{Tenant: c.TenantID, ID: b.ID}, ssoFlowTTL)
	if err != nil {
		return LoginRedirect{}, err
	}
	cookie, err := s.browser.Seal(b, ssoFlowTTL)
	if err != nil {
		return LoginRedirect{}, err
	}
	return LoginRedirect{URL: cfg.AuthCodeURL(state, oidc.Nonce(b.Nonce), oauth2.S256ChallengeOption(b.Verifier)), Cookie: cookie}, nil
}

// OIDCCallback completes an OIDC sign-in: the state must be this tenant's and
// match the browser's cookie, and is spent (a replayed callback fails); the
// code is exchanged with the PKCE verifier; the ID token's signature (the
// issuer's JWKS), issuer, audience and expiry are checked by go-oidc, and its
// nonce against the cookie's.
func (s *SSO) OIDCCallback(ctx context.Context, tenantID, code, state, cookie string) (TokenPair, error) {
	var st oidcState
	var b oidcBrowser
	if s.state.Open(state, &st) != nil || st.Tenant != tenantID || s.browser.Open(cookie, &b) != nil || b.ID != st.ID {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "sign-in state is invalid or expired, or belongs to another browser; start again")
	}
	c, err := s.connection(ctx, tenantID)
	if err != nil {
		return TokenPair{}, err
	}
	if c.Type != SSOTypeOIDC {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "this tenant does not sign in with OpenID Connect")
	}
	if code == "" {
		return TokenPair{}, errcode.Invalid("code is required")
	}
	if err := s.consume(ctx, "oidc/"+tenantID+"/"+st.ID, s.now().Add(ssoFlowTTL)); err != nil {
		return TokenPair{}, err
	}
	p, cfg, err := s.oauthConfig(ctx, c)
	if err != nil {
		return TokenPair{}, err
	}
	octx := s.oidcContext(ctx)
	tok, err := cfg.Exchange(octx, code, oauth2.VerifierOption(b.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return TokenPair{}, errcode.New(errcode.Unauthorized, "the identity provider refused the code")
		}
		return TokenPair{}, errcode.Down("the identity provider", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the identity provider sent no ID token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: c.ClientID, SupportedSigningAlgs: []string{oidc.RS256, oidc.ES256, oidc.PS256}, Now: s.now}).Verify(octx, raw)
	if err != nil {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the ID token failed verification (signature, issuer, audience or expiry)")
	}
	if idt.Nonce == "" || idt.Nonce != b.Nonce {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the ID token answers another sign-in (nonce mismatch)")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the ID token's claims are malformed")
	}
	email, _ := claims["email"].(string)
	verified, asserted := claims["email_verified"].(bool)
	if asserted && !verified {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the identity provider has not verified this person's e-mail")
	}
	name, _ := claims["name"].(string)
	var roles []string
	if c.RoleAttribute != "" {
		roles = claimValues(claims[c.RoleAttribute])
	}
	return s.signIn(ctx, c, "oidc|"+idt.Issuer+"|"+idt.Subject, email, verified, name, roles)
}
