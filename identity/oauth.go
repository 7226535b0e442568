package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// OAuth signs users in with GitHub or Google (authorization-code flow). The state
// parameter is a signed token naming the provider and a nonce; the nonce is also
// set in a cookie, so a callback only completes in the browser that started it.
type OAuth struct {
	accounts    *Accounts
	providers   map[string]config.OAuthProvider
	state       *auth.Signer
	http        *http.Client
	callbackURL func(provider string) string
}

// NewOAuth wires the OAuth service. publicURL is where browsers reach the API.
func NewOAuth(accounts *Accounts, c config.OAuthConfig, stateSigner *auth.Signer, publicURL string) *OAuth {
	base := strings.TrimRight(publicURL, "/")
	return &OAuth{
		accounts:    accounts,
		providers:   map[string]config.OAuthProvider{"github": c.GitHub, "google": c.Google},
		state:       stateSigner,
		http:        &http.Client{Timeout: 15 * time.Second},
		callbackURL: func(p string) string { return base + "/auth/" + p + "/callback" },
	}
}

type oauthState struct {
	Provider string `json:"p"`
	Nonce    string `json:"n"`
	// User is set when a signed-in user started the flow to link the
	// identity to their own account.
	User string `json:"u,omitempty"`
}

func (o *OAuth) provider(name string) (config.OAuthProvider, error) {
	p, ok := o.providers[name]
	if !ok {
		return p, errcode.New(errcode.NotFound, "unknown identity provider %q (github, google)", name)
	}
	if !p.Enabled() {
		return p, errcode.New(errcode.OAuthProviderDisabled, "sign-in with %s is not configured on this server", name)
	}
	return p, nil
}

// LoginURL returns where to send the browser, and the nonce to keep in its cookie.
func (o *OAuth) LoginURL(name string) (redirect, nonce string, err error) {
	return o.authorizationURL(name, "")
}

// LinkURL starts linking an identity of the named provider to the caller's own
// account: the same flow as sign-in, with the caller's user id sealed in the
// state, so the callback links that identity to this account and no other.
func (o *OAuth) LinkURL(name string, p auth.Principal) (redirect, nonce string, err error) {
	return o.authorizationURL(name, p.UserID)
}

func (o *OAuth) authorizationURL(name, userID string) (redirect, nonce string, err error) {
	p, err := o.provider(name)
	if err != nil {
		return "", "", err
	}
	nonce = auth.RandomToken(16)
	state, err := o.state.Seal(oauthState{Provider: name, Nonce: nonce, User: userID}, 10*time.Minute)
	if err != nil {
		return "", "", err
	}
	scope := "read:user user:email"
	if name == "google" {
		scope = "openid email profile"
	}
	q := url.Values{
		"client_id": {p.ClientID}, "redirect_uri": {o.callbackURL(name)}, "state": {state},
		"scope": {scope}, "response_type": {"code"},
	}
	sep := "?"
	if strings.Contains(p.AuthURL, "?") {
		sep = "&"
	}
	return p.AuthURL + sep + q.Encode(), nonce, nil
}

// identity is what a provider tells us about the person.
type identity struct {
	Subject string
	Email   string
	Name    string
}

// Callback completes the flow: checks state against the cookie nonce, exchanges the
// code and reads the verified e-mail. A link flow links the identity to the
// account that started it and signs that account in. A sign-in finds the
// account linked to the identity, else links an account with that e-mail only
// when its address was verified, else creates a tenant when sign-up is open.
func (o *OAuth) Callback(ctx context.Context, name, code, state, cookieNonce string) (TokenPair, error) {
	p, err := o.provider(name)
	if err != nil {
		return TokenPair{}, err
	}
	var st oauthState
	if err := o.state.Open(state, &st); err != nil || st.Provider != name || cookieNonce == "" || st.Nonce != cookieNonce {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "sign-in state is invalid or expired; start again")
	}
	if code == "" {
		return TokenPair{}, errcode.Invalid("code is required")
	}
	token, err := o.exchange(ctx, p, name, code)
	if err != nil {
		return TokenPair{}, err
	}
	id, err := o.identify(ctx, p, name, token)
	if err != nil {
		return TokenPair{}, err
	}
	if st.User != "" {
		return o.link(ctx, name, st.User, id)
	}
	return o.signIn(ctx, name, id)
}

func (o *OAuth) exchange(ctx context.Context, p config.OAuthProvider, name, code string) (string, error) {
	form := url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {o.callbackURL(name)},
		"client_id": {p.ClientID}, "client_secret": {p.ClientSecret},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := o.do(req, &out); err != nil {
		return "", err
	}
	if out.AccessToken == "" {
		return "", errcode.New(errcode.Unauthorized, "the identity provider refused the sign-in (%s)", out.Error)
	}
	return out.AccessToken, nil
}

func (o *OAuth) identify(ctx context.Context, p config.OAuthProvider, name, token string) (identity, error) {
	get := func(u string, out any) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return o.do(req, out)
	}
	if name == "google" {
		var u struct {
			Sub           string `json:"sub"`
			Email         string `json:"email"`
			EmailVerified bool   `json:"email_verified"`
			Name          string `json:"name"`
		}
		if err := get(p.UserInfoURL, &u); err != nil {
			return identity{}, err
		}
		if u.Sub == "" || u.Email == "" || !u.EmailVerified {
			return identity{}, errcode.New(errcode.Unauthorized, "the Google account has no verified e-mail")
		}
		return identity{Subject: u.Sub, Email: u.Email, Name: u.Name}, nil
	}
	var u struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
		Name  string `json:"name"`
	}
	if err := get(p.UserInfoURL, &u); err != nil {
		return identity{}, err
	}
	// GitHub's profile e-mail is optional and unverified; the emails list says
	// which address is primary and verified.
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if err := get(p.EmailsURL, &emails); err != nil {
		return identity{}, err
	}
	id := identity{Subject: strconv.FormatInt(u.ID, 10), Name: u.Name}
	if id.Name == "" {
		id.Name = u.Login
	}
	for _, e := range emails {
		if e.Primary && e.Verified {
			id.Email = e.Email
		}
	}
	if u.ID == 0 || id.Email == "" {
		return identity{}, errcode.New(errcode.Unauthorized, "the GitHub account has no verified primary e-mail")
	}
	return id, nil
}

func (o *OAuth) do(req *http.Request, out any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := o.http.Do(req)
	if err != nil {
		return errcode.Down("the identity provider", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return errcode.Down("the identity provider", err)
	}
	if resp.StatusCode >= 500 {
		return errcode.Down("the identity provider", fmt.Errorf("status %d", resp.StatusCode))
	}
	if resp.StatusCode >= 400 {
		return errcode.New(errcode.Unauthorized, "the identity provider refused the sign-in (status %d)", resp.StatusCode)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return errcode.Down("the identity provider", fmt.Errorf("decode response: %w", err))
	}
	return nil
}

// signIn signs in the account linked to the identity. An account that only
// shares the e-mail is linked automatically only when its address was
// verified: a password sign-up proves nothing about the address, and linking it
// would hand the account to whoever registered that address at the provider.
func (o *OAuth) signIn(ctx context.Context, provider string, id identity) (TokenPair, error) {
	a := o.accounts
	u, err := a.store.UserByOAuth(ctx, provider, id.Subject)
	if errors.Is(err, models.ErrNotFound) {
		u, err = a.store.UserByEmail(ctx, id.Email)
		switch {
		case err == nil && u.EmailVerifiedAt == nil:
			return TokenPair{}, errcode.New(errcode.EmailTaken, "an account with this e-mail already exists; sign in to it and link %s from there (POST /v1/oauth/%s/link)", provider, provider)
		case err == nil:
			err = a.store.LinkOAuth(ctx, u.ID, provider, id.Subject, nil)
			if errors.Is(err, models.ErrConflict) {
				return TokenPair{}, errcode.New(errcode.IdentityLinked, "the account with this e-mail signs in with another identity")
			}
		}
	}
	if errors.Is(err, models.ErrNotFound) {
		u, err = o.createOAuthUser(ctx, provider, id)
	}
	if err != nil {
		if _, ok := errcode.As(err); ok {
			return TokenPair{}, err
		}
		return TokenPair{}, errcode.Down("the database", err)
	}
	return a.issueOutsideSSO(ctx, u, models.SignInOAuth)
}

// link links the identity to the signed-in account that started the flow, and
// signs that account in. The provider's verified address, when it is the
// account's, marks the account's e-mail verified. A link that changes no row
// (the account already has an identity) or takes an identity another account
// holds is refused.
func (o *OAuth) link(ctx context.Context, provider, userID string, id identity) (TokenPair, error) {
	a := o.accounts
	u, err := a.store.UserByID(ctx, userID)
	if errors.Is(err, models.ErrNotFound) {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the account that started this link no longer exists")
	}
	if err != nil {
		return TokenPair{}, errcode.Down("the database", err)
	}
	if holder, err := a.store.UserByOAuth(ctx, provider, id.Subject); err == nil && holder.ID == u.ID {
		return a.issueOutsideSSO(ctx, u, models.SignInOAuth)
	}
	var verified *time.Time
	if strings.EqualFold(id.Email, u.Email) {
		now := a.now().UTC()
		verified = &now
	}
	switch err := a.store.LinkOAuth(ctx, u.ID, provider, id.Subject, verified); {
	case errors.Is(err, models.ErrConflict):
		return TokenPair{}, errcode.New(errcode.IdentityLinked, "this account already has a linked identity, or this %s identity belongs to another account", provider)
	case err != nil:
		return TokenPair{}, errcode.Down("the database", err)
	}
	return a.issueOutsideSSO(ctx, u, models.SignInOAuth)
}

func (o *OAuth) createOAuthUser(ctx context.Context, provider string, id identity) (*models.User, error) {
	a := o.accounts
	if !a.signup {
		return nil, errcode.New(errcode.SignupDisabled, "no account uses this e-mail and self-service sign-up is disabled")
	}
	name := id.Name
	if name == "" {
		name = strings.Split(id.Email, "@")[0]
	}
	now := a.now().UTC()
	t := a.quotas
	t.ID, t.Name, t.CreatedAt = models.NewID("ten"), name+"'s workspace", now
	u := &models.User{
		ID: models.NewID("usr"), Email: strings.ToLower(id.Email), Name: name, Role: models.RoleOwner,
		OAuthProvider: provider, OAuthSubject: id.Subject, EmailVerifiedAt: &now, CreatedAt: now,
	}
	if err := a.store.CreateTenantWithOwner(ctx, &t, u); err != nil {
		return nil, err
	}
	return u, nil
}
