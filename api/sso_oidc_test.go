package api_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
)

// oidcPerson is who the test identity provider signs in next.
type oidcPerson struct {
	Sub, Email, Name string
	Groups           []string
}

// oidcIdP is an OpenID Connect provider speaking the real protocol over
// HTTP: discovery, JWKS, the authorization endpoint (which signs in `person`
// at once, as a provider does for a user with a session) and the token
// endpoint, which checks the client secret and the PKCE verifier and returns
// an RS256 ID token carrying the nonce of the authorization request.
type oidcIdP struct {
	t      *testing.T
	srv    *httptest.Server
	key    *rsa.PrivateKey
	client string
	secret string

	mu     sync.Mutex
	person oidcPerson
	codes  map[string]oidcGrant
	// signWith, when set, signs ID tokens with another key under the
	// published key id; mutate edits the claims before signing.
	signWith *rsa.PrivateKey
	mutate   func(jwt.MapClaims)
}

type oidcGrant struct {
	person             oidcPerson
	nonce, challenge   string
	redirect, clientID string
}

func newOIDCIdP(t *testing.T, client, secret string) *oidcIdP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcIdP{t: t, key: key, client: client, secret: secret, codes: map[string]oidcGrant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"jwks_uri": p.srv.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k1",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (p *oidcIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("client_id") != p.client || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || !strings.Contains(q.Get("scope"), "openid") {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := auth.RandomToken(16)
	p.mu.Lock()
	p.codes[code] = oidcGrant{person: p.person, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), clientID: q.Get("client_id")}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *oidcIdP) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	p.mu.Lock()
	g, found := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case id != p.client || secret != p.secret:
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]string{"error": "invalid_client"})
		return
	case !found || r.PostForm.Get("grant_type") != "authorization_code" || r.PostForm.Get("redirect_uri") != g.redirect ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": p.srv.URL, "sub": g.person.Sub, "aud": g.clientID, "exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(),
		"nonce": g.nonce, "email": g.person.Email, "email_verified": true, "name": g.person.Name, "groups": g.person.Groups,
	}
	p.mu.Lock()
	key, mutate := p.key, p.mutate
	if p.signWith != nil {
		key = p.signWith
	}
	p.mu.Unlock()
	if mutate != nil {
		mutate(claims)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	raw, err := tok.SignedString(key)
	if err != nil {
		p.t.Error(err)
	}
	writeJSON(w, map[string]any{"access_token": auth.RandomToken(16), "token_type": "Bearer", "expires_in": 300, "id_token": raw})
}

func (p *oidcIdP) set(person oidcPerson, signWith *rsa.PrivateKey, mutate func(jwt.MapClaims)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.person, p.signWith, p.mutate = person, signWith, mutate
}

// ssoBrowser keeps cookies and stops at each redirect, like a browser whose
// every hop the test inspects.
type ssoBrowser struct {
	t *testing.T
	c *http.Client
}

func newSSOBrowser(t *testing.T) *ssoBrowser {
	jar, _ := cookiejar.New(nil)
	return &ssoBrowser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *ssoBrowser) get(u string) *http.Response {
	b.t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp
}

// start opens the tenant's SSO login and follows it through the provider,
// returning the callback URL the provider sent the browser to.
func (b *ssoBrowser) start(apiURL, tenantID string) string {
	b.t.Helper()
	resp := b.get(apiURL + "/auth/sso/" + tenantID + "/login")
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("login: %d", resp.StatusCode)
	}
	resp = b.get(resp.Header.Get("Location"))
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("authorize: %d", resp.StatusCode)
	}
	return strings.Replace(resp.Header.Get("Location"), publicSSOBase, apiURL, 1)
}

// publicSSOBase is the API's public URL in the SSO tests.
const publicSSOBase = "https://causeway.test"

// finish opens the callback URL and decodes the answer.
func (b *ssoBrowser) finish(callback string) (int, tokens, errorBody) {
	b.t.Helper()
	resp := b.get(callback)
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	raw, _ := json.Marshal(m)
	var tk tokens
	var eb errorBody
	_ = json.Unmarshal(raw, &tk)
	_ = json.Unmarshal(raw, &eb)
	return resp.StatusCode, tk, eb
}

func (b *ssoBrowser) signIn(apiURL, tenantID string) (int, tokens, errorBody) {
	return b.finish(b.start(apiURL, tenantID))
}

func (s *apiServer) userCount(t *testing.T) int64 {
	var n int64
	if err := s.app.Store.DB().Table("users").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func oidcSettings(issuer, secret string, enforce bool) map[string]any {
	return map[string]any{
		"type": "oidc", "issuer": issuer, "clientId": "causeway", "clientSecret": secret,
		"roleClaim": "groups", "roleMapping": map[string]string{"sre-leads": "admin", "sre": "operator"},
		"defaultRole": "viewer", "enforce": enforce,
	}
}

// TestOIDCSingleSignOn drives the whole OpenID Connect sign-in of an
// enterprise tenant through a real provider over HTTP: configuration checks,
// just-in-time users with mapped roles and working tokens, every refusal
// (wrong signature, audience, expiry, nonce, state, replay) creating nothing,
// enforcement of SSO over passwords, and isolation between two tenants'
// providers.
func TestOIDCSingleSignOn(t *testing.T) {
	cfg := apiConfig(t)
	cfg.EgressAllowPrivate = true
	// The address browsers know the API by; the provider sends them back
	// there, and the browser below maps it to the test server.
	cfg.PublicURL = publicSSOBase
	s := startAPI(t, cfg)
	ctx := context.Background()
	plans := identity.NewPlans(s.app.Store, cfg.PlanQuotas())
	const secretA = "client-secret-of-tenant-a-9d8f7e"
	idpA := newOIDCIdP(t, "causeway", secretA)
	owner := s.signup(t, "owner@corp.example")

	// Configuration: enterprise only, the issuer must answer discovery, a
	// provider never grants owner; a refused configuration stores nothing.
	var eb errorBody
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, oidcSettings(idpA.srv.URL, secretA, true), &eb); st != http.StatusForbidden || eb.Error != "plan_required" {
		t.Fatalf("SSO on the free plan: %d %+v", st, eb)
	}
	if _, err := plans.Change(ctx, owner.TenantID, "enterprise"); err != nil {
		t.Fatal(err)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, oidcSettings(dead.URL, secretA, true), &eb); st != http.StatusBadRequest || eb.Error != "validation_error" || !strings.Contains(eb.Message, "issuer") {
		t.Fatalf("unreachable issuer: %d %+v", st, eb)
	}
	bad := oidcSettings(idpA.srv.URL, secretA, true)
	bad["defaultRole"] = "owner"
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, bad, &eb); st != http.StatusBadRequest || !strings.Contains(eb.Message, "defaultRole") {
		t.Fatalf("owner as default role: %d %+v", st, eb)
	}
	bad = oidcSettings(idpA.srv.URL, secretA, true)
	bad["roleMapping"] = map[string]string{"admins": "owner"}
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, bad, &eb); st != http.StatusBadRequest {
		t.Fatalf("owner in the role mapping: %d %+v", st, eb)
	}
	if st, _ := s.do(t, "GET", "/v1/sso", owner.AccessToken, nil, nil); st != http.StatusNotFound {
		t.Fatalf("a refused configuration was stored: %d", st)
	}
	var view map[string]any
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, oidcSettings(idpA.srv.URL, secretA, true), &view); st != http.StatusOK {
		t.Fatalf("configure: %d %v", st, view)
	}
	raw, _ := json.Marshal(view)
	if strings.Contains(string(raw), secretA) || view["clientSecretSet"] != true || view["redirectUrl"] != publicSSOBase+"/auth/sso/"+owner.TenantID+"/callback" {
		t.Fatalf("configure answered %s", raw)
	}
	s.do(t, "GET", "/v1/sso", owner.AccessToken, nil, &view)
	if raw, _ = json.Marshal(view); strings.Contains(string(raw), secretA) || view["issuer"] != idpA.srv.URL {
		t.Fatalf("GET /v1/sso: %s", raw)
	}
	var stored string
	s.app.Store.DB().Table("sso_connections").Select("client_secret_enc").Where("tenant_id = ?", owner.TenantID).Row().Scan(&stored)
	if stored == "" || strings.Contains(stored, secretA) {
		t.Fatalf("client secret at rest: %q", stored)
	}
	if v := s.tenant(t, owner.AccessToken); v.SSO == nil || v.SSO.Type != "oidc" || !v.SSO.Enforced {
		t.Fatalf("tenant view: %+v", v.SSO)
	}

	// Happy path: a new person is created as admin (mapped from groups) and
	// the tokens work; the next sign-in reuses the user with the new role.
	idpA.set(oidcPerson{Sub: "u-alice", Email: "Alice@Corp.example", Name: "Alice", Groups: []string{"staff", "sre-leads"}}, nil, nil)
	st, tk, eb := newSSOBrowser(t).signIn(s.URL, owner.TenantID)
	if st != http.StatusOK || tk.AccessToken == "" || tk.RefreshToken == "" || tk.TokenType != "Bearer" {
		t.Fatalf("SSO sign-in: %d %+v", st, eb)
	}
	verify := auth.NewTokens(cfg.AuthJWTSecret, cfg.AuthIssuer, cfg.AuthAudience, time.Hour, func(string) bool { return true })
	p, err := verify.Verify(tk.AccessToken)
	if err != nil || p.TenantID != owner.TenantID || p.Email != "alice@corp.example" || len(p.Roles) != 1 || p.Roles[0] != "admin" {
		t.Fatalf("access token: %+v %v", p, err)
	}
	if st, _ := s.do(t, "GET", "/v1/incidents", tk.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("the SSO token does not work: %d", st)
	}
	var refreshed tokens
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken}, &refreshed); st != http.StatusOK || refreshed.AccessToken == "" {
		t.Fatalf("refresh: %d", st)
	}
	idpA.set(oidcPerson{Sub: "u-alice", Email: "alice@corp.example", Name: "Alice", Groups: []string{"sre"}}, nil, nil)
	st, tk2, _ := newSSOBrowser(t).signIn(s.URL, owner.TenantID)
	if p2, _ := verify.Verify(tk2.AccessToken); st != http.StatusOK || p2.UserID != p.UserID || p2.Roles[0] != "operator" {
		t.Fatalf("second sign-in: %d %+v", st, p2)
	}
	idpA.set(oidcPerson{Sub: "u-carol", Email: "carol@corp.example", Name: "Carol"}, nil, nil)
	st, tk3, _ := newSSOBrowser(t).signIn(s.URL, owner.TenantID)
	if p3, _ := verify.Verify(tk3.AccessToken); st != http.StatusOK || p3.Roles[0] != "viewer" {
		t.Fatalf("unmapped person: %d %+v", st, p3)
	}

	// Refusals: each is a 401 and creates nobody.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	mallory := oidcPerson{Sub: "u-mallory", Email: "mallory@corp.example", Name: "Mallory", Groups: []string{"sre-leads"}}
	users := s.userCount(t)
	for name, tc := range map[string]struct {
		signWith *rsa.PrivateKey
		mutate   func(jwt.MapClaims)
	}{
		"wrong signature": {signWith: other},
		"wrong audience":  {mutate: func(c jwt.MapClaims) { c["aud"] = "another-client" }},
		"wrong issuer":    {mutate: func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }},
		"expired": {mutate: func(c jwt.MapClaims) {
			c["exp"], c["iat"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-2*time.Hour).Unix()
		}},
		"nonce mismatch":  {mutate: func(c jwt.MapClaims) { c["nonce"] = "a-nonce-of-another-flow" }},
		"no nonce":        {mutate: func(c jwt.MapClaims) { delete(c, "nonce") }},
		"unverified mail": {mutate: func(c jwt.MapClaims) { c["email_verified"] = false }},
	} {
		idpA.set(mallory, tc.signWith, tc.mutate)
		if st, _, eb := newSSOBrowser(t).signIn(s.URL, owner.TenantID); st != http.StatusUnauthorized || eb.Error != "unauthorized" {
			t.Errorf("%s: %d %+v", name, st, eb)
		}
	}
	idpA.set(mallory, nil, nil)
	b1, b2 := newSSOBrowser(t), newSSOBrowser(t)
	cb1, cb2 := b1.start(s.URL, owner.TenantID), b2.start(s.URL, owner.TenantID)
	u1, _ := url.Parse(cb1)
	u2, _ := url.Parse(cb2)
	swapped := *u1
	swapped.RawQuery = url.Values{"code": {u1.Query().Get("code")}, "state": {u2.Query().Get("state")}}.Encode()
	if st, _, eb := b1.finish(swapped.String()); st != http.StatusUnauthorized {
		t.Errorf("state of another browser: %d %+v", st, eb)
	}
	tampered := *u2
	tampered.RawQuery = url.Values{"code": {u2.Query().Get("code")}, "state": {u2.Query().Get("state") + "x"}}.Encode()
	if st, _, eb := b2.finish(tampered.String()); st != http.StatusUnauthorized {
		t.Errorf("tampered state: %d %+v", st, eb)
	}
	if got := s.userCount(t); got != users {
		t.Fatalf("refused sign-ins created %d users", got-users)
	}

	// Replay: the same callback, with the same cookie, a second time.
	b := newSSOBrowser(t)
	cb := b.start(s.URL, owner.TenantID)
	cookies := b.c.Jar.Cookies(mustURL(t, s.URL+"/auth/sso/"+owner.TenantID+"/callback"))
	if st, _, eb := b.finish(cb); st != http.StatusOK {
		t.Fatalf("sign-in before the replay: %d %+v", st, eb)
	}
	users = s.userCount(t)
	b.c.Jar.SetCookies(mustURL(t, s.URL+"/auth/sso/"+owner.TenantID+"/"), cookies)
	if st, _, eb := b.finish(cb); st != http.StatusUnauthorized || !strings.Contains(eb.Message, "already used") {
		t.Fatalf("replayed callback: %d %+v", st, eb)
	}
	if s.userCount(t) != users {
		t.Fatal("the replay created a user")
	}

	// The owner's e-mail at the provider does not hand over the owner account.
	idpA.set(oidcPerson{Sub: "u-fake-owner", Email: "owner@corp.example", Name: "Owner?"}, nil, nil)
	if st, _, eb := newSSOBrowser(t).signIn(s.URL, owner.TenantID); st != http.StatusUnauthorized {
		t.Fatalf("owner by SSO: %d %+v", st, eb)
	}

	// enforce: password sign-in is off for the tenant's users, except the
	// owner who configured SSO.
	if st, _ := s.do(t, "POST", "/v1/users", owner.AccessToken, map[string]string{"email": "bob@corp.example", "password": "bobs long password", "name": "Bob", "role": "admin"}, nil); st != http.StatusCreated {
		t.Fatalf("create bob: %d", st)
	}
	login := func(email, pw string) (int, errorBody) {
		var eb errorBody
		st, _ := s.do(t, "POST", "/auth/login", "", map[string]string{"email": email, "password": pw}, &eb)
		return st, eb
	}
	if st, eb := login("bob@corp.example", "bobs long password"); st != http.StatusUnauthorized || !strings.Contains(eb.Message, "single sign-on") {
		t.Fatalf("password login under enforce: %d %+v", st, eb)
	}
	if st, eb := login("bob@corp.example", "wrong password!!"); st != http.StatusUnauthorized || eb.Error != "invalid_credentials" {
		t.Fatalf("wrong password under enforce: %d %+v", st, eb)
	}
	if st, _ := login("owner@corp.example", "correct horse battery"); st != http.StatusOK {
		t.Fatalf("the configuring owner is locked out: %d", st)
	}
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, oidcSettings(idpA.srv.URL, secretA, false), nil); st != http.StatusOK {
		t.Fatal("turn enforce off")
	}
	if st, _ := login("bob@corp.example", "bobs long password"); st != http.StatusOK {
		t.Fatalf("password login without enforce: %d", st)
	}
	var bobTok tokens
	s.do(t, "POST", "/auth/login", "", map[string]string{"email": "bob@corp.example", "password": "bobs long password"}, &bobTok)
	if st, _ := s.do(t, "PUT", "/v1/sso", bobTok.AccessToken, oidcSettings(idpA.srv.URL, secretA, true), &eb); st != http.StatusForbidden {
		t.Fatalf("an admin configured SSO: %d", st)
	}
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, oidcSettings(idpA.srv.URL, secretA, true), nil); st != http.StatusOK {
		t.Fatal("turn enforce on again")
	}
	// Turning enforcement on ends the password sign-ins made before it, at
	// once, but not the configuring owner's.
	if st, _ := s.do(t, "GET", "/v1/tenant", bobTok.AccessToken, nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("bob's access token outlived enforcement: %d", st)
	}
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": bobTok.RefreshToken}, nil); st != http.StatusUnauthorized {
		t.Fatalf("bob's password session refreshed under enforce: %d", st)
	}
	if st, _ := s.do(t, "GET", "/v1/tenant", owner.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("enforcement ended the configuring owner's session: %d", st)
	}

	// A second enterprise tenant with its own provider: its people land in
	// it, never in the first tenant, and its flow cannot complete at the
	// first tenant's callback.
	const secretB = "client-secret-of-tenant-b-1a2b3c"
	idpB := newOIDCIdP(t, "causeway", secretB)
	ownerB := s.signup(t, "owner@other.example")
	if _, err := plans.Change(ctx, ownerB.TenantID, "enterprise"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.do(t, "PUT", "/v1/sso", ownerB.AccessToken, oidcSettings(idpB.srv.URL, secretB, false), nil); st != http.StatusOK {
		t.Fatal("configure tenant B")
	}
	idpB.set(oidcPerson{Sub: "u-alice", Email: "dave@other.example", Name: "Dave", Groups: []string{"sre-leads"}}, nil, nil)
	st, tkB, _ := newSSOBrowser(t).signIn(s.URL, ownerB.TenantID)
	if pB, _ := verify.Verify(tkB.AccessToken); st != http.StatusOK || pB.TenantID != ownerB.TenantID || pB.UserID == p.UserID {
		t.Fatalf("tenant B sign-in: %d %+v", st, pB)
	}
	bx := newSSOBrowser(t)
	cbB, _ := url.Parse(bx.start(s.URL, ownerB.TenantID))
	intoA := s.URL + "/auth/sso/" + owner.TenantID + "/callback?" + cbB.RawQuery
	if st, _, eb := bx.finish(intoA); st != http.StatusUnauthorized {
		t.Fatalf("tenant B's flow at tenant A's callback: %d %+v", st, eb)
	}
	idpB.set(oidcPerson{Sub: "u-x", Email: "alice@corp.example", Name: "Alice at B", Groups: []string{"sre-leads"}}, nil, nil)
	users = s.userCount(t)
	if st, _, eb := newSSOBrowser(t).signIn(s.URL, ownerB.TenantID); st != http.StatusConflict || eb.Error != "email_taken" {
		t.Fatalf("tenant B's provider naming tenant A's user: %d %+v", st, eb)
	}
	var listed struct {
		Users []struct{ Email, Role string }
	}
	s.do(t, "GET", "/v1/users", owner.AccessToken, nil, &listed)
	for _, u := range listed.Users {
		if strings.HasSuffix(u.Email, "other.example") {
			t.Fatalf("tenant A holds %s", u.Email)
		}
	}
	if s.userCount(t) != users {
		t.Fatal("the refused cross-tenant sign-in created a user")
	}

	// Leaving enterprise stops SSO and lifts its enforcement.
	if _, err := plans.Change(ctx, owner.TenantID, "team"); err != nil {
		t.Fatal(err)
	}
	resp := newSSOBrowser(t).get(s.URL + "/auth/sso/" + owner.TenantID + "/login")
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("SSO login on team: %d", resp.StatusCode)
	}
	if st, _ := login("bob@corp.example", "bobs long password"); st != http.StatusOK {
		t.Fatalf("password login after leaving enterprise: %d", st)
	}
	if st, _ := s.do(t, "DELETE", "/v1/sso", owner.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("delete: %d", st)
	}
	if v := s.tenant(t, owner.AccessToken); v.SSO != nil {
		t.Fatalf("tenant view after delete: %+v", v.SSO)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
