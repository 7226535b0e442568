package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/internal/apptest"
)

// apiServer is the real router on a real database. Temporal points at a closed
// port: the endpoints tested here never need it, and health must say so.
type apiServer struct {
	*httptest.Server
	cfg *config.Config
	app *app.App
}

func apiConfig(t *testing.T) *config.Config { return apptest.Config(t) }

func startAPI(t *testing.T, cfg *config.Config) *apiServer {
	t.Helper()
	srv, a := apptest.Start(t, cfg)
	return &apiServer{Server: srv, cfg: cfg, app: a}
}

// do sends body (a string is sent raw, anything else as JSON) and decodes the answer.
func (s *apiServer) do(t *testing.T, method, path, token string, body any, out any) (int, http.Header) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, resp.Header
}

type tokens struct {
	TenantID     string `json:"tenantId"`
	UserID       string `json:"userId"`
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	TokenType    string `json:"tokenType"`
	ExpiresIn    int    `json:"expiresIn"`
}

func (s *apiServer) signup(t *testing.T, email string) tokens {
	t.Helper()
	var out tokens
	st, _ := s.do(t, "POST", "/auth/signup", "", map[string]string{
		"tenantName": "Acme", "email": email, "password": "correct horse battery", "name": "Owner",
	}, &out)
	if st != http.StatusCreated {
		t.Fatalf("signup: %d", st)
	}
	return out
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

func TestJWTRejections(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	if st, _ := s.do(t, "GET", "/v1/incidents", tk.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("valid token: %d", st)
	}
	now := time.Now()
	claims := func(drop string, set map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{
			"sub": tk.UserID, "email": "owner@example.com", "tenant_id": tk.TenantID, "roles": []string{"owner"},
			"iss": "causeway", "aud": "causeway-api", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
		}
		delete(c, drop)
		for k, v := range set {
			c[k] = v
		}
		return c
	}
	sign := func(c jwt.MapClaims, key string) string {
		raw, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	key := s.cfg.AuthJWTSecret
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims("", nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	cases := []struct{ name, header string }{
		{"no token", ""},
		{"not bearer", "Basic b3duZXI6cHc="},
		{"bad signature", "Bearer " + sign(claims("", nil), "a-different-secret-a-different-secret")},
		{"alg none", "Bearer " + none},
		{"wrong iss", "Bearer " + sign(claims("", map[string]any{"iss": "evil"}), key)},
		{"wrong aud", "Bearer " + sign(claims("", map[string]any{"aud": "causeway-admin"}), key)},
		{"expired", "Bearer " + sign(claims("", map[string]any{"exp": now.Add(-time.Hour).Unix()}), key)},
		{"no exp", "Bearer " + sign(claims("exp", nil), key)},
		{"no tenant_id", "Bearer " + sign(claims("tenant_id", nil), key)},
		{"no roles", "Bearer " + sign(claims("roles", nil), key)},
		{"no email", "Bearer " + sign(claims("email", nil), key)},
		{"no sub", "Bearer " + sign(claims("sub", nil), key)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", s.URL+"/v1/incidents", nil)
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body errorBody
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != http.StatusUnauthorized || body.Error != "unauthorized" || body.Message == "" {
				t.Fatalf("status %d body %+v", resp.StatusCode, body)
			}
		})
	}
}

func TestRouterErrorsAreJSON(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	var body errorBody
	if st, _ := s.do(t, "GET", "/v2/nothing", "", nil, &body); st != 404 || body.Error != "not_found" {
		t.Fatalf("404: %d %+v", st, body)
	}
	if st, _ := s.do(t, "DELETE", "/health", "", nil, &body); st != 405 || body.Error != "method_not_allowed" {
		t.Fatalf("405: %d %+v", st, body)
	}
	big := `{"title":"x","description":"` + strings.Repeat("a", 1<<20) + `"}`
	if st, _ := s.do(t, "POST", "/v1/incidents/chat", tk.AccessToken, big, &body); st != 413 || body.Error != "payload_too_large" {
		t.Fatalf("413: %d %+v", st, body)
	}
	if st, _ := s.do(t, "POST", "/v1/incidents/chat", tk.AccessToken, `{"title":`, &body); st != 400 || body.Error != "validation_error" {
		t.Fatalf("bad json: %d %+v", st, body)
	}
	if st, _ := s.do(t, "GET", "/v1/incidents/inc_missing", tk.AccessToken, nil, &body); st != 404 || body.Error != "incident_not_found" {
		t.Fatalf("missing incident: %d %+v", st, body)
	}
}

func TestIncidentValidation(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	cases := map[string]struct {
		body map[string]any
		want string
	}{
		"no title":         {map[string]any{"description": "long enough text"}, "title is required"},
		"blank title":      {map[string]any{"title": "  ", "description": "long enough text"}, "title is required"},
		"no description":   {map[string]any{"title": "x"}, "description is required (10 to 4000 characters)"},
		"short":            {map[string]any{"title": "x", "description": "too short"}, "description must be 10 to 4000 characters, got 9"},
		"long":             {map[string]any{"title": "x", "description": strings.Repeat("é", 4001)}, "description must be 10 to 4000 characters, got 4001"},
		"title not string": {map[string]any{"title": 7, "description": "long enough text"}, "field title must be of type string"},
		"long title":       {map[string]any{"title": strings.Repeat("t", 201), "description": "long enough text"}, "title must be at most 200 characters"},
	}
	for name, c := range cases {
		var body errorBody
		st, _ := s.do(t, "POST", "/v1/incidents/chat", tk.AccessToken, c.body, &body)
		if st != 400 || body.Error != "validation_error" || body.Message != c.want {
			t.Errorf("%s: %d %+v", name, st, body)
		}
	}
	var page struct {
		Count int `json:"count"`
	}
	if s.do(t, "GET", "/v1/incidents", tk.AccessToken, nil, &page); page.Count != 0 {
		t.Fatalf("rejected requests created %d incidents", page.Count)
	}
}

func TestAccountsFlow(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "Owner@Example.com")
	if owner.TokenType != "Bearer" || owner.ExpiresIn != 3600 || owner.RefreshToken == "" {
		t.Fatalf("signup tokens = %+v", owner)
	}
	var body errorBody
	if st, _ := s.do(t, "POST", "/auth/signup", "", map[string]string{"tenantName": "x", "email": "owner@example.com", "password": "correct horse battery", "name": "x"}, &body); st != 409 || body.Error != "email_taken" {
		t.Fatalf("duplicate signup: %d %+v", st, body)
	}
	if st, _ := s.do(t, "POST", "/auth/signup", "", map[string]string{"tenantName": "x", "email": "b@example.com", "password": "short", "name": "x"}, &body); st != 400 {
		t.Fatalf("short password: %d", st)
	}
	// Wrong password and unknown e-mail are indistinguishable.
	var a, b errorBody
	s.do(t, "POST", "/auth/login", "", map[string]string{"email": "owner@example.com", "password": "wrong password!"}, &a)
	st, _ := s.do(t, "POST", "/auth/login", "", map[string]string{"email": "nobody@example.com", "password": "wrong password!"}, &b)
	if st != 401 || a != b || a.Error != "invalid_credentials" {
		t.Fatalf("login failures differ: %+v vs %+v", a, b)
	}

	// Users: an admin can add operators but not owners; viewers cannot add anyone.
	var admin map[string]any
	if st, _ := s.do(t, "POST", "/v1/users", owner.AccessToken, map[string]string{"email": "admin@example.com", "password": "correct horse battery", "name": "Ad", "role": "admin"}, &admin); st != 201 || admin["role"] != "admin" || admin["passwordHash"] != nil {
		t.Fatalf("create admin: %d %v", st, admin)
	}
	var adminTok tokens
	s.do(t, "POST", "/auth/login", "", map[string]string{"email": "admin@example.com", "password": "correct horse battery"}, &adminTok)
	if st, _ := s.do(t, "POST", "/v1/users", adminTok.AccessToken, map[string]string{"email": "o2@example.com", "password": "correct horse battery", "name": "O", "role": "owner"}, &body); st != 403 || body.Error != "forbidden" {
		t.Fatalf("admin creating owner: %d %+v", st, body)
	}
	s.do(t, "POST", "/v1/users", adminTok.AccessToken, map[string]string{"email": "viewer@example.com", "password": "correct horse battery", "name": "V", "role": "viewer"}, nil)
	var viewerTok tokens
	s.do(t, "POST", "/auth/login", "", map[string]string{"email": "viewer@example.com", "password": "correct horse battery"}, &viewerTok)
	if st, _ := s.do(t, "POST", "/v1/users", viewerTok.AccessToken, map[string]string{"email": "x@example.com", "password": "correct horse battery", "name": "X", "role": "viewer"}, &body); st != 403 {
		t.Fatalf("viewer creating user: %d", st)
	}
	if st, _ := s.do(t, "POST", "/v1/incidents/chat", viewerTok.AccessToken, map[string]string{"title": "x", "description": "long enough text"}, &body); st != 403 || body.Error != "forbidden" {
		t.Fatalf("viewer creating incident: %d %+v", st, body)
	}
	var users struct {
		Users []map[string]any `json:"users"`
	}
	if st, _ := s.do(t, "GET", "/v1/users", viewerTok.AccessToken, nil, &users); st != 200 || len(users.Users) != 3 {
		t.Fatalf("list users: %d %+v", st, users)
	}
}

func TestRefreshRotationAndReuse(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	first := s.signup(t, "owner@example.com")
	var second tokens
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": first.RefreshToken}, &second); st != 200 || second.RefreshToken == first.RefreshToken {
		t.Fatalf("refresh: %d %+v", st, second)
	}
	if st, _ := s.do(t, "GET", "/v1/incidents", second.AccessToken, nil, nil); st != 200 {
		t.Fatalf("refreshed access token: %d", st)
	}
	// Reusing the rotated token is treated as theft: refused, and the family dies,
	// so the newer token stops working too.
	var body errorBody
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": first.RefreshToken}, &body); st != 401 || body.Error != "unauthorized" {
		t.Fatalf("reuse: %d %+v", st, body)
	}
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": second.RefreshToken}, &body); st != 401 {
		t.Fatalf("family not revoked: %d", st)
	}
	// A separate login has its own family and still works.
	var fresh tokens
	s.do(t, "POST", "/auth/login", "", map[string]string{"email": "owner@example.com", "password": "correct horse battery"}, &fresh)
	if st, _ := s.do(t, "POST", "/auth/refresh", "", map[string]string{"refreshToken": fresh.RefreshToken}, nil); st != 200 {
		t.Fatalf("independent family: %d", st)
	}
}

func TestHealthReportsTemporalDown(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	var simple map[string]string
	if st, _ := s.do(t, "GET", "/health", "", nil, &simple); st != 200 || simple["status"] != "ok" {
		t.Fatalf("/health: %d %v", st, simple)
	}
	var rep struct {
		Status   string                    `json:"status"`
		Services map[string]map[string]any `json:"services"`
	}
	if st, _ := s.do(t, "GET", "/health/detailed", "", nil, &rep); st != 200 {
		t.Fatalf("/health/detailed: %d", st)
	}
	if rep.Status != "unhealthy" || rep.Services["temporal"]["status"] != "unhealthy" || rep.Services[s.app.Store.Dialect()]["status"] != "healthy" {
		t.Fatalf("report = %+v", rep)
	}
}

// fakeGitHub speaks the parts of GitHub's OAuth protocol the callback uses.
func fakeGitHub(t *testing.T, email string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("code") != "good-code" || r.Form.Get("client_secret") != "gh-secret" || r.Form.Get("grant_type") != "authorization_code" {
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "bad_verification_code"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "gho_token", "token_type": "bearer"})
	})
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer gho_token" {
			w.WriteHeader(401)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": 4242, "login": "octo", "name": "Octo Cat"})
	})
	mux.HandleFunc("GET /user/emails", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode([]map[string]any{
			{"email": "other@example.com", "primary": false, "verified": true},
			{"email": email, "primary": true, "verified": true},
		})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestOAuthGitHub(t *testing.T) {
	cfg := apiConfig(t)
	idp := fakeGitHub(t, "octo@example.com")
	cfg.OAuth.GitHub = config.OAuthProvider{
		ClientID: "gh-client", ClientSecret: "gh-secret",
		AuthURL: idp.URL + "/login/oauth/authorize", TokenURL: idp.URL + "/login/oauth/access_token",
		UserInfoURL: idp.URL + "/user", EmailsURL: idp.URL + "/user/emails",
	}
	s := startAPI(t, cfg)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := browser.Get(s.URL + "/auth/github/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), idp.URL+"/login/oauth/authorize") || loc.Query().Get("client_id") != "gh-client" {
		t.Fatalf("login redirect: %d %s", resp.StatusCode, loc)
	}
	state := loc.Query().Get("state")

	callback := func(c *http.Client, code, state string) (int, tokens) {
		resp, err := c.Get(s.URL + "/auth/github/callback?" + url.Values{"code": {code}, "state": {state}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tk tokens
		_ = json.NewDecoder(resp.Body).Decode(&tk)
		return resp.StatusCode, tk
	}
	// Without the browser's cookie (a forged callback) the state does not match.
	if st, _ := callback(http.DefaultClient, "good-code", state); st != 401 {
		t.Fatalf("callback without cookie: %d", st)
	}
	if st, _ := callback(browser, "good-code", state+"x"); st != 401 {
		t.Fatalf("tampered state: %d", st)
	}
	if st, _ := callback(browser, "bad-code", state); st != 401 {
		t.Fatalf("refused code: %d", st)
	}
	st, tk := callback(browser, "good-code", state)
	if st != 200 || tk.AccessToken == "" {
		t.Fatalf("callback: %d %+v", st, tk)
	}
	p, err := auth.NewTokens(cfg.AuthJWTSecret, cfg.AuthIssuer, cfg.AuthAudience, time.Hour, func(string) bool { return true }).Verify(tk.AccessToken)
	if err != nil || p.Email != "octo@example.com" || p.Roles[0] != "owner" {
		t.Fatalf("principal %+v %v", p, err)
	}
	// A second sign-in lands in the same account.
	resp, _ = browser.Get(s.URL + "/auth/github/login")
	resp.Body.Close()
	loc, _ = url.Parse(resp.Header.Get("Location"))
	_, again := callback(browser, "good-code", loc.Query().Get("state"))
	p2, _ := auth.NewTokens(cfg.AuthJWTSecret, cfg.AuthIssuer, cfg.AuthAudience, time.Hour, func(string) bool { return true }).Verify(again.AccessToken)
	if p2.UserID != p.UserID || p2.TenantID != p.TenantID {
		t.Fatalf("second sign-in made a new account: %+v vs %+v", p2, p)
	}
	var body errorBody
	if st, _ := s.do(t, "GET", "/auth/google/login", "", nil, &body); st != 404 || body.Error != "oauth_provider_disabled" {
		t.Fatalf("unconfigured provider: %d %+v", st, body)
	}
}

// Sign-in is limited per client IP, and a forged X-Forwarded-For does not buy a
// fresh budget: no proxy is trusted unless configured.
func TestAuthRateLimitPerClientIP(t *testing.T) {
	cfg := apiConfig(t)
	cfg.AuthRateLimitPerMinute = 3
	s := startAPI(t, cfg)
	login := func(forwardedFor string) (int, http.Header, errorBody) { return s.failedLogin(t, forwardedFor) }
	for i := range 3 {
		if st, _, _ := login(""); st != http.StatusUnauthorized {
			t.Fatalf("login %d: status %d", i+1, st)
		}
	}
	st, h, body := login("203.0.113.7")
	if st != http.StatusTooManyRequests || body.Error != "rate_limited" || h.Get("Retry-After") == "" || h.Get("X-RateLimit-Limit") != "3" {
		t.Fatalf("4th login: %d %+v %v", st, body, h)
	}
}

// failedLogin sends a login that cannot succeed, with X-Forwarded-For set when
// forwardedFor is not empty.
func (s *apiServer) failedLogin(t *testing.T, forwardedFor string) (int, http.Header, errorBody) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/auth/login", strings.NewReader(`{"email":"nobody@example.com","password":"wrong password!"}`))
	req.Header.Set("Content-Type", "application/json")
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body errorBody
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body
}
