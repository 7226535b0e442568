package ui_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/internal/apptest"
)

// These tests run the real router (API and dashboard) on a real database. No
// Temporal server is needed for what they cover: sessions, CSRF, roles and the
// settings pages; the browser tests in e2e cover the rest on a real stack.

func testConfig(t *testing.T) *config.Config { return apptest.Config(t) }

func start(t *testing.T, cfg *config.Config) string {
	srv, _ := apptest.Start(t, cfg)
	return srv.URL
}

// visitor is one browser: a cookie jar, no automatic redirects.
type visitor struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newVisitor(t *testing.T, base string) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	status  int
	body    string
	header  http.Header
	cookies []*http.Cookie
}

func (v *visitor) get(path string) answer { return v.send("GET", path, nil, nil) }

func (v *visitor) post(path string, form url.Values) answer { return v.send("POST", path, form, nil) }

func (v *visitor) send(method, path string, form url.Values, header http.Header) answer {
	v.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, v.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, vals := range header {
		req.Header[k] = vals
	}
	resp, err := v.c.Do(req)
	if err != nil {
		v.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header, cookies: resp.Cookies()}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the form token on the page at path.
func (v *visitor) csrf(path string) string {
	v.t.Helper()
	a := v.get(path)
	m := csrfField.FindStringSubmatch(a.body)
	if m == nil {
		v.t.Fatalf("no CSRF token on %s (%d): %.300s", path, a.status, a.body)
	}
	return html.UnescapeString(m[1])
}

func (v *visitor) signUp(tenant, email string) {
	v.t.Helper()
	tok := v.csrf("/ui/signup")
	a := v.post("/ui/signup", url.Values{"csrf": {tok}, "tenantName": {tenant}, "name": {"Owner"}, "email": {email}, "password": {"correct horse battery"}})
	if a.status != http.StatusSeeOther {
		v.t.Fatalf("sign up: %d %.300s", a.status, a.body)
	}
}

func (v *visitor) signIn(email string) answer {
	v.t.Helper()
	tok := v.csrf("/ui/login?hop=1")
	return v.post("/ui/login", url.Values{"csrf": {tok}, "email": {email}, "password": {"correct horse battery"}, "next": {"/ui/incidents"}})
}

// cookie is the last Set-Cookie of name: the one the browser keeps.
func cookie(cs []*http.Cookie, name string) *http.Cookie {
	var out *http.Cookie
	for _, c := range cs {
		if c.Name == name {
			out = c
		}
	}
	return out
}

// apiUser creates a user with role through the JSON API, as the owner.
func apiUser(t *testing.T, base, ownerEmail, role string) string {
	t.Helper()
	var login struct{ AccessToken string }
	if st := apptest.PostJSON(t, base+"/auth/login", "", map[string]string{"email": ownerEmail, "password": "correct horse battery"}, &login); st != 200 {
		t.Fatalf("owner login: %d", st)
	}
	email := fmt.Sprintf("%s-%d@example.com", role, time.Now().UnixNano())
	body := map[string]string{"email": email, "password": "correct horse battery", "name": role, "role": role}
	if st := apptest.PostJSON(t, base+"/v1/users", login.AccessToken, body, nil); st != 201 {
		t.Fatalf("create %s: %d", role, st)
	}
	return email
}

func TestSignInKeepsTokensInAnEncryptedStrictCookie(t *testing.T) {
	base := start(t, testConfig(t))
	owner := newVisitor(t, base)
	owner.signUp("Acme", "owner@acme.test")

	v := newVisitor(t, base)
	if a := v.get("/ui/incidents"); a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/login?next=%2Fui%2Fincidents" {
		t.Fatalf("signed out page: %d → %q", a.status, a.header.Get("Location"))
	}
	// A visit from another site carries no Strict cookie: the first sign-in
	// page sends the browser on to itself, so the second request can.
	hop := v.get("/ui/login?next=%2Fui%2Fincidents")
	if hop.status != 200 || !strings.Contains(hop.body, `http-equiv="refresh" content="0;url=/ui/login?next=%2Fui%2Fincidents&amp;hop=1"`) {
		t.Fatalf("first sign-in page: %d %.600s", hop.status, hop.body)
	}
	tok := v.csrf("/ui/login?hop=1&next=%2Fui%2Fincidents")
	if a := v.post("/ui/login", url.Values{"email": {"owner@acme.test"}, "password": {"correct horse battery"}}); a.status != http.StatusForbidden {
		t.Fatalf("sign-in without the form token: %d", a.status)
	}
	if a := v.post("/ui/login", url.Values{"csrf": {tok}, "email": {"owner@acme.test"}, "password": {"wrong password!"}}); a.status != http.StatusUnauthorized ||
		!strings.Contains(a.body, "e-mail or password is incorrect") || !strings.Contains(a.body, `value="owner@acme.test"`) {
		t.Fatalf("wrong password: %d %.300s", a.status, a.body)
	}
	a := v.post("/ui/login", url.Values{"csrf": {tok}, "email": {"owner@acme.test"}, "password": {"correct horse battery"}, "next": {"/ui/analytics"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/analytics" {
		t.Fatalf("sign in: %d → %q", a.status, a.header.Get("Location"))
	}
	c := cookie(a.cookies, "causeway_session")
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui" || c.Secure {
		t.Fatalf("session cookie %+v", c)
	}
	// A JWT starts with the base64 of `{"alg"`: the cookie carries none in clear.
	if strings.Contains(c.Value, "eyJ") {
		t.Fatal("the session cookie shows a token in clear")
	}
	if p := v.get("/ui/analytics"); p.status != 200 || !strings.Contains(p.body, "owner@acme.test") {
		t.Fatalf("signed-in page: %d", p.status)
	}
	// The sign-in page never sends anyone off-site.
	if a := v.get("/ui/login?next=https%3A%2F%2Fevil.example%2F"); a.header.Get("Location") != "/ui/incidents" {
		t.Fatalf("off-site next: → %q", a.header.Get("Location"))
	}
}

func TestCookieIsSecureBehindHTTPS(t *testing.T) {
	cfg := testConfig(t)
	cfg.PublicURL = "https://causeway.example.com"
	base := start(t, cfg)
	newVisitor(t, base).signUp("Acme", "owner@acme.test")
	a := newVisitor(t, base).signIn("owner@acme.test")
	// The jar will not send a Secure cookie over this test's plain HTTP; the
	// flag is what matters.
	if c := cookie(a.cookies, "causeway_session"); c == nil || !c.Secure {
		t.Fatalf("session cookie behind an HTTPS public URL: %+v", c)
	}
}

func TestEveryChangeNeedsTheSessionsCSRFToken(t *testing.T) {
	base := start(t, testConfig(t))
	v := newVisitor(t, base)
	v.signUp("Acme", "owner@acme.test")
	other := newVisitor(t, base)
	other.signIn("owner@acme.test")
	theirs := other.csrf("/ui/settings/api-keys")
	mine := v.csrf("/ui/settings/api-keys")
	if mine == theirs {
		t.Fatal("two sessions share a CSRF token")
	}
	for name, form := range map[string]url.Values{
		"no token":              {"name": {"k"}},
		"another session token": {"name": {"k"}, "csrf": {theirs}},
		"a made-up token":       {"name": {"k"}, "csrf": {flipFirst(mine)}},
	} {
		if a := v.post("/ui/settings/api-keys", form); a.status != http.StatusForbidden || !strings.Contains(a.body, "forbidden") {
			t.Errorf("%s: %d", name, a.status)
		}
	}
	if page := v.get("/ui/settings/api-keys"); strings.Contains(page.body, `data-key="key_`) {
		t.Fatal("a refused request created a key")
	}
	// The header works as well as the form field, for the page's script.
	a := v.send("POST", "/ui/settings/api-keys", url.Values{"name": {"via header"}}, http.Header{"X-Csrf-Token": {mine}})
	if a.status != http.StatusCreated || !strings.Contains(a.body, `id="new-key-value"`) {
		t.Fatalf("with the token: %d %.300s", a.status, a.body)
	}
	if !strings.Contains(a.header.Get("Cache-Control"), "no-store") {
		t.Error("the page that shows a new key must not be cached")
	}
}

func TestRolesAreCheckedOnEveryRequest(t *testing.T) {
	base := start(t, testConfig(t))
	owner := newVisitor(t, base)
	owner.signUp("Acme", "owner@acme.test")
	for role, want := range map[string]int{"viewer": 403, "operator": 403, "admin": 201} {
		v := newVisitor(t, base)
		if a := v.signIn(apiUser(t, base, "owner@acme.test", role)); a.status != http.StatusSeeOther {
			t.Fatalf("%s signs in: %d", role, a.status)
		}
		page := v.get("/ui/settings/api-keys")
		tok := csrfField.FindStringSubmatch(page.body)[1]
		showsForm := strings.Contains(page.body, `action="/ui/settings/api-keys"`)
		if showsForm != (want == 201) {
			t.Errorf("%s: create form shown = %v", role, showsForm)
		}
		if a := v.post("/ui/settings/api-keys", url.Values{"csrf": {tok}, "name": {role}}); a.status != want {
			t.Errorf("%s creates a key: %d, want %d", role, a.status, want)
		}
		hooks := v.get("/ui/settings/webhooks")
		if (hooks.status == 200) != (want == 201) {
			t.Errorf("%s opens webhook endpoints: %d", role, hooks.status)
		}
		if strings.Contains(page.body, `href="/ui/settings/webhooks"`) != (want == 201) {
			t.Errorf("%s: settings menu lists webhook endpoints wrongly", role)
		}
		// Deciding on a remediation is for owners and admins: an operator is
		// refused before the remediation is even looked up, like a viewer;
		// an admin gets as far as finding there is no such remediation.
		for _, decision := range []string{"approve", "reject", "execute"} {
			path := "/ui/remediations/rem_missing/" + decision
			got := v.post(path, url.Values{"csrf": {tok}, "planHash": {"h"}, "reason": {"r"}}).status
			if (got == http.StatusForbidden) != (want == 403) || (want == 201 && got != http.StatusNotFound) {
				t.Errorf("%s posts %s: %d", role, path, got)
			}
			if page := v.get(path); (page.status == http.StatusForbidden) != (want == 403) {
				t.Errorf("%s opens %s: %d", role, path, page.status)
			}
		}
	}
}

// refreshingSession signs up an owner on a server whose one-minute access
// tokens are always within the refresh margin, so every request refreshes.
func refreshingSession(t *testing.T) (base string, v *visitor, dashboard *url.URL) {
	cfg := testConfig(t)
	cfg.AuthTokenTTL = time.Minute
	base = start(t, cfg)
	v = newVisitor(t, base)
	v.signUp("Acme", "owner@acme.test")
	dashboard, _ = url.Parse(base + "/ui/")
	return base, v, dashboard
}

// TestConcurrentRefreshKeepsTheSession makes every request refresh (a one-minute
// token is always within the refresh margin) and sends many at once with the
// same cookie, as a polling page and a click do: the rotation rules must not see
// them as a stolen token, and the session must go on.
func TestConcurrentRefreshKeepsTheSession(t *testing.T) {
	base, v, u := refreshingSession(t)
	jar := v.c.Jar.Cookies(u)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var fresh *http.Cookie
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", base+"/ui/incidents", nil)
			for _, c := range jar {
				req.AddCookie(c)
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			if c := cookie(resp.Cookies(), "causeway_session"); c != nil && c.Value != "" {
				fresh = c
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 16 || fresh == nil {
		t.Fatalf("16 parallel requests with one cookie: %v, fresh cookie %v", statuses, fresh != nil)
	}
	// The chain was rotated, not revoked: the new cookie refreshes again.
	req, _ := http.NewRequest("GET", base+"/ui/incidents", nil)
	req.AddCookie(fresh)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("after the burst the session answers %d", resp.StatusCode)
	}
}

func TestSignOutRevokesTheSession(t *testing.T) {
	base, v, u := refreshingSession(t)
	kept := cookie(v.c.Jar.Cookies(u), "causeway_session")
	tok := v.csrf("/ui/incidents")
	a := v.post("/ui/logout", url.Values{"csrf": {tok}})
	if a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/ui/login") {
		t.Fatalf("sign out: %d → %q", a.status, a.header.Get("Location"))
	}
	if c := cookie(a.cookies, "causeway_session"); c == nil || c.MaxAge >= 0 {
		t.Fatalf("sign out must delete the cookie: %+v", c)
	}
	// A copy of the old cookie cannot refresh any more.
	stolen := newVisitor(t, base)
	stolen.c.Jar.SetCookies(u, []*http.Cookie{{Name: kept.Name, Value: kept.Value, Path: "/ui"}})
	if a := stolen.get("/ui/incidents"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/ui/login") {
		t.Fatalf("old cookie after sign-out: %d → %q", a.status, a.header.Get("Location"))
	}
	if a := stolen.send("GET", "/ui/incidents/inc_x/live", nil, http.Header{"X-Requested-With": {"causeway-live"}}); a.status != http.StatusUnauthorized {
		t.Fatalf("a live update after sign-out: %d, want 401 for the page's script", a.status)
	}
}

func TestRunbookEditorShowsErrorsInline(t *testing.T) {
	v := newVisitor(t, start(t, testConfig(t)))
	v.signUp("Acme", "owner@acme.test")
	tok := v.csrf("/ui/settings/runbooks")
	cases := []struct{ text, want string }{
		{"{\n  \"name\": \"x\",\n  \"steps\": [}\n", "line 3, column 13"},
		{`{"name": "x"`, "the JSON ends early"},
		{`{"name": 5}`, "field name must be of type string"},
		{`{"name": "x", "match": {"categories": ["db_connection_exhaustion"]}, "steps": [{"type": "shell", "params": {}}]}`, `steps[0]`},
		{`{"name": "x"} {"name": "y"}`, "one JSON object"},
	}
	for _, c := range cases {
		a := v.post("/ui/settings/runbooks", url.Values{"csrf": {tok}, "runbook": {c.text}})
		if a.status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(a.body), c.want) ||
			!strings.Contains(a.body, `aria-invalid="true"`) || !strings.Contains(a.body, html.EscapeString(strings.TrimSpace(c.text))) {
			t.Errorf("%q: %d, want 400 mentioning %q with the text kept", c.text, a.status, c.want)
		}
	}
	good := `{"name": "Wait it out", "match": {"categories": ["cpu_saturation"]}, "steps": [{"type": "wait", "description": "pause", "params": {"duration": "1s"}}]}`
	if a := v.post("/ui/settings/runbooks", url.Values{"csrf": {tok}, "runbook": {good}}); a.status != http.StatusSeeOther {
		t.Fatalf("valid runbook: %d", a.status)
	}
	if page := v.get("/ui/settings/runbooks"); !strings.Contains(page.body, "Wait it out") {
		t.Fatal("the saved runbook is not listed")
	}
}

func TestPagesAndAssetsAreServedSafely(t *testing.T) {
	base := start(t, testConfig(t))
	v := newVisitor(t, base)
	if a := v.get("/"); a.status != http.StatusFound || a.header.Get("Location") != "/ui/" {
		t.Fatalf("/ → %d %q", a.status, a.header.Get("Location"))
	}
	v.signUp("Acme", "owner@acme.test")
	for _, p := range []string{"/ui/incidents", "/ui/analytics?period=7d", "/ui/settings/api-keys", "/ui/settings/runbooks",
		"/ui/settings/webhooks", "/ui/settings/users", "/ui/settings/data-sources", "/ui/settings/changes"} {
		a := v.get(p)
		if a.status != 200 {
			t.Errorf("%s: %d %.300s", p, a.status, a.body)
			continue
		}
		if csp := a.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if strings.Contains(a.body, "<script>") || strings.Contains(a.body, " style=\"") {
			t.Errorf("%s has inline script or style, which the policy forbids", p)
		}
	}
	if a := v.get("/ui/analytics?period=1y"); a.status != http.StatusBadRequest || !strings.Contains(a.body, "period must be one of 7d, 30d, 90d") {
		t.Errorf("bad period: %d", a.status)
	}
	if a := v.get("/ui/incidents/inc_missing"); a.status != http.StatusNotFound || !strings.Contains(a.body, "incident_not_found") {
		t.Errorf("missing incident: %d", a.status)
	}
	page := v.get("/ui/incidents").body
	css := regexp.MustCompile(`href="(/ui/static/app\.css\?v=[0-9a-f]+)"`).FindStringSubmatch(page)
	if css == nil {
		t.Fatal("no versioned stylesheet link")
	}
	a := v.get(css[1])
	if a.status != 200 || !strings.Contains(a.header.Get("Cache-Control"), "immutable") || !strings.HasPrefix(a.header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet: %d %v", a.status, a.header)
	}
	if again := v.send("GET", css[1], nil, http.Header{"If-None-Match": {a.header.Get("ETag")}}); again.status != http.StatusNotModified {
		t.Errorf("revalidation: %d", again.status)
	}
	if stale := v.get("/ui/static/app.css?v=old"); strings.Contains(stale.header.Get("Cache-Control"), "immutable") {
		t.Error("an asset asked for by another version must not be cached for a year")
	}
}

func TestOpenAnIncidentByHand(t *testing.T) {
	v := newVisitor(t, start(t, testConfig(t)))
	v.signUp("Acme", "owner@acme.test")
	tok := v.csrf("/ui/incidents")
	if a := v.post("/ui/incidents", url.Values{"csrf": {tok}, "title": {"Checkout slow"}, "description": {"short"}}); a.status != http.StatusBadRequest ||
		!strings.Contains(a.body, "description must be 10 to 4000 characters") || !strings.Contains(a.body, `value="Checkout slow"`) {
		t.Fatalf("too short a description: %d %.400s", a.status, a.body)
	}
	a := v.post("/ui/incidents", url.Values{"csrf": {tok}, "title": {"Checkout slow"}, "description": {"p95 latency of checkout doubled since 14:00"}})
	loc := a.header.Get("Location")
	if a.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/incidents/inc_") {
		t.Fatalf("open incident: %d → %q", a.status, loc)
	}
	page := v.get(loc)
	if page.status != 200 || !strings.Contains(page.body, "Incident opened.") || !strings.Contains(page.body, "Not investigated yet.") ||
		!strings.Contains(page.body, "p95 latency of checkout doubled") {
		t.Fatalf("incident page: %d %.600s", page.status, page.body)
	}
	live := v.send("GET", strings.Split(loc, "?")[0]+"/live", nil, http.Header{"X-Requested-With": {"causeway-live"}})
	if live.status != 200 || strings.Contains(live.body, "<html") || !strings.Contains(live.body, `data-summary="Not investigated yet."`) {
		t.Fatalf("live fragment: %d %.300s", live.status, live.body)
	}
	if list := v.get("/ui/incidents?status=open"); !strings.Contains(list.body, "Checkout slow") || !strings.Contains(list.body, "1 incident ") {
		t.Fatalf("filtered list: %.600s", list.body)
	}
	if list := v.get("/ui/incidents?status=resolved"); strings.Contains(list.body, "Checkout slow") {
		t.Fatal("the status filter lets an open incident through")
	}
	// Paging follows the API's cursor, keeping the filters.
	v.post("/ui/incidents", url.Values{"csrf": {tok}, "title": {"Search down"}, "description": {"search returns 500 for every query"}})
	first := v.get("/ui/incidents?limit=1&status=open")
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
	if !strings.Contains(first.body, "Search down") || strings.Contains(first.body, "Checkout slow") || next == nil {
		t.Fatalf("first page: %.800s", first.body)
	}
	second := v.get(html.UnescapeString(next[1]))
	if !strings.Contains(second.body, "Checkout slow") || strings.Contains(second.body, `rel="next"`) || !strings.Contains(second.body, "First page") {
		t.Fatalf("second page (%s): %.800s", next[1], second.body)
	}
	if bad := v.get("/ui/incidents?cursor=forged"); bad.status != http.StatusBadRequest || !strings.Contains(bad.body, "cursor is invalid") {
		t.Fatalf("forged cursor: %d", bad.status)
	}
}

// flipFirst changes the first character of a token, so the result differs
// from it whatever that character was.
func flipFirst(tok string) string {
	c := byte('x')
	if tok[0] == c {
		c = 'y'
	}
	return string(c) + tok[1:]
}
