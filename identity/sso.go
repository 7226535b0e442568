package identity

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// SSO serves single sign-on through a tenant's own identity provider: the
// owner's configuration (PUT/GET/DELETE /v1/sso) and the public sign-in flows
// under /auth/sso/{tenantId}. It is an enterprise-plan feature. People who
// sign in are users of that tenant only, created on their first sign-in with
// the role the provider's claims map to, never owner.
type SSO struct {
	store    *models.Store
	own      *Store
	accounts *Accounts
	sealer   *auth.Sealer
	state    *auth.Signer
	browser  *auth.Signer
	relay    *auth.Signer
	http     *http.Client
	// allowHTTP accepts plain-http issuers and metadata URLs; only where
	// private egress is allowed too (make run, tests).
	allowHTTP bool
	base      string
	now       func() time.Time
}

// SSOOptions are what NewSSO needs besides the accounts service.
type SSOOptions struct {
	Sealer *auth.Sealer
	// Secret is the master secret the state and browser-binding keys are
	// derived from (AUTH_JWT_SECRET).
	Secret string
	// HTTP reaches the identity providers: the egress-guarded client, since
	// the addresses are the tenant's to choose.
	HTTP      *http.Client
	AllowHTTP bool
	// PublicURL is where browsers reach the API.
	PublicURL string
}

// NewSSO wires the single sign-on service.
func NewSSO(accounts *Accounts, o SSOOptions) *SSO {
	return &SSO{
		store: accounts.store, own: accounts.own, accounts: accounts, sealer: o.Sealer,
		state: auth.NewSigner(o.Secret, "sso-state"), browser: auth.NewSigner(o.Secret, "sso-browser"),
		relay: auth.NewSigner(o.Secret, "sso-saml-relay"),
		http:  o.HTTP, allowHTTP: o.AllowHTTP, base: strings.TrimRight(o.PublicURL, "/"), now: time.Now,
	}
}

// SSOInput is the body of PUT /v1/sso. Which fields apply depends on Type.
type SSOInput struct {
	Type string `json:"type"`
	// SAML: the identity provider's metadata, by URL or inline.
	IDPMetadataURL string `json:"idpMetadataUrl"`
	IDPMetadataXML string `json:"idpMetadataXml"`
	RoleAttribute  string `json:"roleAttribute"`
	// OIDC: the issuer and the client registered with it.
	Issuer       string `json:"issuer"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	RoleClaim    string `json:"roleClaim"`

	RoleMapping map[string]string `json:"roleMapping"`
	DefaultRole string            `json:"defaultRole"`
	Enforce     bool              `json:"enforce"`
}

// SSOView is a tenant's connection as the owner and admins read it, with
// what to enter at the identity provider. Secrets are never part of it.
type SSOView struct {
	Type            string            `json:"type"`
	Issuer          string            `json:"issuer,omitempty"`
	ClientID        string            `json:"clientId,omitempty"`
	ClientSecretSet bool              `json:"clientSecretSet,omitempty"`
	RedirectURL     string            `json:"redirectUrl,omitempty"`
	RoleClaim       string            `json:"roleClaim,omitempty"`
	IDPMetadataURL  string            `json:"idpMetadataUrl,omitempty"`
	IDPEntityID     string            `json:"idpEntityId,omitempty"`
	SPEntityID      string            `json:"spEntityId,omitempty"`
	ACSURL          string            `json:"acsUrl,omitempty"`
	MetadataURL     string            `json:"metadataUrl,omitempty"`
	RoleAttribute   string            `json:"roleAttribute,omitempty"`
	RoleMapping     map[string]string `json:"roleMapping"`
	DefaultRole     string            `json:"defaultRole"`
	Enforce         bool              `json:"enforce"`
	LoginURL        string            `json:"loginUrl"`
	UpdatedAt       time.Time         `json:"updatedAt"`
}

// ssoRoles are the roles a provider may grant, strongest first: never owner,
// so a compromised or misconfigured provider cannot take a tenant over.
var ssoRoles = []string{models.RoleAdmin, models.RoleOperator, models.RoleViewer}

func ssoRole(r string) bool { return r != "" && r != models.RoleOwner && models.ValidRole(r) }

// requireEnterprise loads the tenant and refuses any plan but enterprise.
func (s *SSO) requireEnterprise(ctx context.Context, tenantID string) error {
	t, err := s.store.TenantByID(ctx, tenantID)
	if errors.Is(err, models.ErrNotFound) {
		return errcode.New(errcode.NotFound, "no single sign-on is configured for this tenant")
	}
	if err != nil {
		return errcode.Down("the database", err)
	}
	if t.Plan != models.PlanEnterprise {
		return errcode.New(errcode.PlanRequired, "single sign-on needs the enterprise plan; this tenant is on %s", t.Plan)
	}
	return nil
}

// Configure creates or replaces the caller's tenant's connection after
// checking the provider answers: OIDC discovery at the issuer, or SAML
// metadata that parses and names a signing certificate. Nothing is stored
// when a check fails.
func (s *SSO) Configure(ctx context.Context, who auth.Principal, in SSOInput) (SSOView, error) {
	if err := s.requireEnterprise(ctx, who.TenantID); err != nil {
		return SSOView{}, err
	}
	c := &SSOConnection{TenantID: who.TenantID, Type: in.Type, ConfiguredBy: who.UserID, Enforce: in.Enforce}
	if err := validRoles(c, in); err != nil {
		return SSOView{}, err
	}
	var err error
	switch in.Type {
	case SSOTypeOIDC:
		err = s.configureOIDC(ctx, c, in)
	case SSOTypeSAML:
		err = s.configureSAML(ctx, c, in)
	default:
		err = errcode.Invalid("type must be saml or oidc")
	}
	if err != nil {
		return SSOView{}, err
	}
	now := s.now().UTC()
	c.CreatedAt, c.UpdatedAt = now, now
	if err := s.own.SaveSSOConnection(ctx, c); err != nil {
		return SSOView{}, errcode.Down("the database", err)
	}
	// Enforcement ends, at once, every sign-in that did not come through the
	// provider, except the configuring owner's; a later refresh re-checks it.
	if c.Enforce {
		if err := s.accounts.store.RevokeSessionsNotBy(ctx, c.TenantID, models.SignInSSO, who.UserID, now); err != nil {
			return SSOView{}, errcode.Down("the database", err)
		}
		s.accounts.sessions.forgetAll()
	}
	return s.view(c), nil
}

func validRoles(c *SSOConnection, in SSOInput) error {
	if !ssoRole(in.DefaultRole) {
		return errcode.Invalid("defaultRole must be one of admin, operator, viewer (a provider never grants owner)")
	}
	if len(in.RoleMapping) > 100 {
		return errcode.Invalid("roleMapping has at most 100 entries")
	}
	for k, v := range in.RoleMapping {
		if k == "" || utf8.RuneCountInString(k) > 200 {
			return errcode.Invalid("roleMapping keys are 1 to 200 characters")
		}
		if !ssoRole(v) {
			return errcode.Invalid("roleMapping[%q] must be one of admin, operator, viewer (a provider never grants owner)", k)
		}
	}
	attr := in.RoleClaim
	if in.Type == SSOTypeSAML {
		attr = in.RoleAttribute
	}
	if utf8.RuneCountInString(attr) > 200 {
		return errcode.Invalid("roleClaim/roleAttribute is at most 200 characters")
	}
	if len(in.RoleMapping) > 0 && attr == "" {
		return errcode.Invalid("roleMapping needs roleClaim (oidc) or roleAttribute (saml) to say where the values come from")
	}
	c.RoleAttribute, c.RoleMapping, c.DefaultRole = attr, in.RoleMapping, in.DefaultRole
	return nil
}

// checkURL accepts an https URL (http too where allowHTTP) for field.
func (s *SSO) checkURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(s.allowHTTP && u.Scheme == "http")) || len(raw) > 1000 {
		return nil, errcode.Invalid("%s must be an https:// URL", field)
	}
	return u, nil
}

// Get reads the caller's tenant's connection.
func (s *SSO) Get(ctx context.Context, who auth.Principal) (SSOView, error) {
	c, err := s.own.SSOConnection(ctx, who.TenantID)
	if errors.Is(err, models.ErrNotFound) {
		return SSOView{}, errcode.New(errcode.NotFound, "no single sign-on is configured for this tenant")
	}
	if err != nil {
		return SSOView{}, errcode.Down("the database", err)
	}
	return s.view(c), nil
}

// Delete removes the caller's tenant's connection. It works on any plan, so a
// tenant that left enterprise can still clean up.
func (s *SSO) Delete(ctx context.Context, who auth.Principal) error {
	err := s.own.DeleteSSOConnection(ctx, who.TenantID)
	if errors.Is(err, models.ErrNotFound) {
		return errcode.New(errcode.NotFound, "no single sign-on is configured for this tenant")
	}
	if err != nil {
		return errcode.Down("the database", err)
	}
	return nil
}

func (s *SSO) url(tenantID, leaf string) string {
	return s.base + "/auth/sso/" + tenantID + "/" + leaf
}

func (s *SSO) view(c *SSOConnection) SSOView {
	v := SSOView{Type: c.Type, RoleMapping: c.RoleMapping, DefaultRole: c.DefaultRole, Enforce: c.Enforce,
		LoginURL: s.url(c.TenantID, "login"), UpdatedAt: c.UpdatedAt}
	if v.RoleMapping == nil {
		v.RoleMapping = map[string]string{}
	}
	switch c.Type {
	case SSOTypeOIDC:
		v.Issuer, v.ClientID, v.ClientSecretSet, v.RedirectURL, v.RoleClaim = c.Issuer, c.ClientID, c.ClientSecretEnc != "", s.url(c.TenantID, "callback"), c.RoleAttribute
	case SSOTypeSAML:
		v.IDPMetadataURL, v.IDPEntityID, v.RoleAttribute = c.IDPMetadataURL, s.samlIDPEntityID(c), c.RoleAttribute
		v.SPEntityID, v.ACSURL, v.MetadataURL = s.url(c.TenantID, "metadata"), s.url(c.TenantID, "acs"), s.url(c.TenantID, "metadata")
	}
	return v
}

// Summary says whether and how the tenant signs in through SSO, for GET
// /v1/tenant; nil when it has no connection.
func (s *SSO) Summary(ctx context.Context, tenantID string) (*SSOSummary, error) {
	c, err := s.own.SSOConnection(ctx, tenantID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return &SSOSummary{Type: c.Type, Enforced: c.Enforce}, nil
}

// connection loads the connection a public flow acts on, refusing a tenant
// with none and a tenant no longer on enterprise.
func (s *SSO) connection(ctx context.Context, tenantID string) (*SSOConnection, error) {
	c, err := s.own.SSOConnection(ctx, tenantID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "no single sign-on is configured for this tenant")
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	if err := s.requireEnterprise(ctx, tenantID); err != nil {
		return nil, err
	}
	return c, nil
}

// LoginRedirect is where GET /auth/sso/{tenantId}/login sends the browser,
// and the cookie that binds the flow to that browser (empty when none).
type LoginRedirect struct {
	URL    string
	Cookie string
}

// Login starts a sign-in at the tenant's identity provider.
func (s *SSO) Login(ctx context.Context, tenantID string) (LoginRedirect, error) {
	c, err := s.connection(ctx, tenantID)
	if err != nil {
		return LoginRedirect{}, err
	}
	if c.Type == SSOTypeSAML {
		return s.samlLogin(c)
	}
	return s.oidcLogin(ctx, c)
}

// mapRole picks the strongest role any of the provider's values maps to, or
// the default role.
func mapRole(c *SSOConnection, values []string) string {
	granted := map[string]bool{}
	for _, v := range values {
		if r, ok := c.RoleMapping[v]; ok && ssoRole(r) {
			granted[r] = true
		}
	}
	for _, r := range ssoRoles {
		if granted[r] {
			return r
		}
	}
	return c.DefaultRole
}

// signIn finds or creates the provider's subject's user in the tenant and
// issues the token pair login returns.
func (s *SSO) signIn(ctx context.Context, c *SSOConnection, subject, email string, emailVerified bool, name string, roleValues []string) (TokenPair, error) {
	email, err := validEmail(email)
	if err != nil {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the identity provider sent no valid e-mail address for this person")
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 200 {
		name, _, _ = strings.Cut(email, "@")
	}
	limit, plan, err := s.accounts.userCap(ctx, c.TenantID)
	if err != nil {
		return TokenPair{}, err
	}
	u, err := s.own.SignInSSOUser(ctx, SSOUser{TenantID: c.TenantID, Subject: subject, Email: email, Name: name,
		Role: mapRole(c, roleValues), EmailVerified: emailVerified, MaxUsers: limit}, s.now().UTC(), func() string { return models.NewID("usr") })
	switch {
	case errors.Is(err, models.ErrUserCap):
		return TokenPair{}, userCapErr(plan, limit)
	case errors.Is(err, models.ErrConflict):
		return TokenPair{}, errcode.New(errcode.EmailTaken, "an account with this e-mail belongs to another tenant")
	case errors.Is(err, ErrOwnerAccount):
		return TokenPair{}, errcode.New(errcode.Unauthorized, "this e-mail belongs to an owner of the tenant; owners sign in with their password")
	case err != nil:
		return TokenPair{}, errcode.Down("the database", err)
	}
	return s.accounts.issue(ctx, u, models.SignInSSO)
}

// consume spends a single-use artefact; a second use is a replay.
func (s *SSO) consume(ctx context.Context, key string, expires time.Time) error {
	err := s.own.ConsumeSSOArtefact(ctx, key, expires, s.now().UTC())
	if errors.Is(err, models.ErrConflict) {
		return errcode.New(errcode.Unauthorized, "this sign-in response was already used; start again")
	}
	if err != nil {
		return errcode.Down("the database", err)
	}
	return nil
}

// claimValues reads a claim or attribute that may be one string or a list.
func claimValues(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		sort.Strings(out)
		return out
	}
	return nil
}
