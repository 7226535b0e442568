package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// assetBudget is the most a dashboard page may ship: its HTML, stylesheet and
// script together.
const assetBudget = 200 * 1024

// screenshotDir is where the browser test leaves a picture of every main page:
// CAUSEWAY_SCREENSHOTS_DIR, or test-output/screenshots in the repository
// (git-ignored). `make screenshots` runs the test for them.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("CAUSEWAY_SCREENSHOTS_DIR")
	if dir == "" {
		dir = repoFile("test-output", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pageCost is what one page cost the browser: Navigation Timing figures and the
// bytes of the document and every asset it loaded.
type pageCost struct {
	Name     string
	Load     float64 `json:"load"`     // navigation start to the end of the load event, ms
	TTFB     float64 `json:"ttfb"`     // request sent to first byte, ms
	DOMReady float64 `json:"domReady"` // navigation start to DOMContentLoaded done, ms
	HTML     int     `json:"html"`
	Assets   []struct {
		Name string `json:"name"`
		Size int    `json:"size"`
	} `json:"assets"`
}

func (p pageCost) bytes() int {
	n := p.HTML
	for _, a := range p.Assets {
		n += a.Size
	}
	return n
}

// measure reads the current page's Navigation and Resource Timing entries.
// Requests the page's own script makes (live updates) are not assets.
func (b *browser) measure(name string) pageCost {
	b.t.Helper()
	b.waitFor("the load event to end", `performance.getEntriesByType("navigation")[0].loadEventEnd > 0`, 30*time.Second)
	var c pageCost
	b.eval(`(() => {
		const n = performance.getEntriesByType("navigation")[0];
		const assets = performance.getEntriesByType("resource")
			.filter(r => r.initiatorType !== "fetch" && r.initiatorType !== "xmlhttprequest")
			.map(r => ({name: new URL(r.name).pathname, size: r.decodedBodySize}));
		return {load: n.loadEventEnd - n.startTime, ttfb: n.responseStart - n.requestStart,
			domReady: n.domContentLoadedEventEnd - n.startTime, html: n.decodedBodySize, assets};
	})()`, &c)
	c.Name = name
	return c
}

// costs collects the measured pages of a test.
type costs struct {
	mu    sync.Mutex
	pages []pageCost
}

func (c *costs) add(p pageCost) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pages = append(c.pages, p)
}

// report prints every page's load time and bytes, and fails any page over the
// asset budget. Times are reported only: a shared CI machine makes them noisy.
func (c *costs) report(t *testing.T) {
	t.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-28s %9s %9s %9s %9s   %s\n", "page", "load ms", "DOM ms", "TTFB ms", "bytes", "assets")
	for _, p := range c.pages {
		var parts []string
		for _, a := range p.Assets {
			parts = append(parts, fmt.Sprintf("%s %d", a.Name, a.Size))
		}
		sort.Strings(parts)
		fmt.Fprintf(&sb, "%-28s %9.1f %9.1f %9.1f %9d   html %d; %s\n", p.Name, p.Load, p.DOMReady, p.TTFB, p.bytes(), p.HTML, strings.Join(parts, "; "))
		if p.bytes() >= assetBudget {
			t.Errorf("page %s ships %d bytes, over the %d-byte budget", p.Name, p.bytes(), assetBudget)
		}
		if p.HTML == 0 || len(p.Assets) < 2 {
			t.Errorf("page %s: measured html %d bytes and %d assets; the measurement missed the page", p.Name, p.HTML, len(p.Assets))
		}
	}
	t.Log(sb.String())
}

// stepTarget is the system a runbook's steps act on: it records each request
// and answers 200.
type stepTarget struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newStepTarget(t *testing.T) *stepTarget {
	s := &stepTarget{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *stepTarget) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// signedAlert posts a custom alert signed with HMAC-SHA256 of the body under
// the webhook secret, as a monitoring tool would.
func signedAlert(t *testing.T, webhookURL, key, secret string, body map[string]string) (int, string) {
	t.Helper()
	raw, _ := json.Marshal(body)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(raw)
	req, _ := http.NewRequest("POST", webhookURL, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("X-Webhook-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post alert: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		IncidentID string `json:"incidentId"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.IncidentID
}

// apiLogin signs in through the JSON API, for the checks made beside the
// browser.
func (e *env) apiLogin(t *testing.T, email, password string) string {
	t.Helper()
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	if st := e.call(t, "POST", "/auth/login", "", map[string]string{"email": email, "password": password}, &out); st != http.StatusOK {
		t.Fatalf("api login %s: %d", email, st)
	}
	return out.AccessToken
}

// signIn signs in through the dashboard's form.
func (b *browser) signIn(base, email, password string) {
	b.t.Helper()
	b.open(base + "/ui/login")
	b.waitFor("the sign-in form", `document.querySelector("#password") !== null`, 30*time.Second)
	b.fill("#email", email)
	b.fill("#password", password)
	b.submit(`form[action="/ui/login"] button[type=submit]`)
}

func (b *browser) signOut() {
	b.t.Helper()
	b.submit(`form[action="/ui/logout"] button`)
	b.waitFor("the signed-out page", `location.pathname === "/ui/login" && document.querySelector("#password") !== null`, 30*time.Second)
}

// TestDashboard drives the dashboard in a real headless Chromium against a
// real stack (Temporal server, database, HTTP API, worker): sign-up, an API key,
// a signed alert whose investigation finishes on the open incident page, a
// runbook whose remediation is approved and executed with every step seen to
// complete, a viewer who sees no approve button and whose forced request is
// refused, a keyboard-only sign-in and approval, and the cost of every page.
func TestDashboard(t *testing.T) {
	b := newBrowser(t)
	shots := screenshotDir(t)
	cfg := testConfig(t)
	cfg.TemporalUIURL = "http://temporal-ui.test:8233"
	e := startEnv(t, cfg, false) // the worker starts once the incident page is open
	target := newStepTarget(t)
	pages := &costs{}
	defer pages.report(t)
	ownerEmail, password := fmt.Sprintf("owner-%d@example.com", time.Now().UnixNano()), "correct horse battery"

	t.Log("sign up")
	b.open(e.URL + "/")
	b.waitFor("the sign-in page", `location.pathname === "/ui/login" && document.querySelector("#password") !== null`, 30*time.Second)
	pages.add(b.measure("sign-in"))
	b.screenshot(shots, "01-sign-in")
	b.submit(`a[href="/ui/signup"]`)
	pages.add(b.measure("sign-up"))
	b.fill("#tenantName", "Acme")
	b.fill("#name", "Olive Owner")
	b.fill("#email", ownerEmail)
	b.fill("#password", password)
	b.screenshot(shots, "02-sign-up")
	b.submit(`form[action="/ui/signup"] button[type=submit]`)
	b.waitFor("the API keys page", `location.pathname === "/ui/settings/api-keys"`, 10*time.Second)
	if got := b.text(`document.querySelector(".top .who").innerText`); !strings.Contains(got, ownerEmail) || !strings.Contains(got, "owner") {
		t.Fatalf("signed-in header says %q", got)
	}

	t.Log("create an API key")
	b.fill("#key-name", "Alertmanager")
	b.submit(`form[action="/ui/settings/api-keys"] button[type=submit]`)
	key := b.text(`document.querySelector("#new-key-value").value`)
	secret := b.text(`document.querySelector("#new-key-secret").value`)
	webhook := b.text(`document.querySelector("#webhook-url").value`)
	if !strings.HasPrefix(key, "cw_live_") || len(secret) < 16 || !strings.HasPrefix(webhook, e.URL+"/v1/webhooks/ten_") {
		t.Fatalf("new key %q, secret %d chars, webhook %q", key, len(secret), webhook)
	}
	b.do(chromedp.Click(chromedp.CSS(`button[data-copy="new-key-value"]`), chromedp.NodeVisible))
	b.waitFor("the copy confirmation", `document.querySelector('button[data-copy="new-key-value"]').textContent === "Copied"`, 5*time.Second)
	b.screenshot(shots, "03-api-key-created")
	b.open(e.URL + "/ui/settings/api-keys")
	pages.add(b.measure("settings: API keys"))
	if b.text(`String(document.querySelector("#new-key-value"))`) != "null" || !strings.Contains(b.text(`document.body.innerText`), key[:12]) {
		t.Fatal("the key must be listed by its prefix and never shown again")
	}

	t.Log("runbooks: JSON errors inline, then a valid runbook")
	b.open(e.URL + "/ui/settings/runbooks")
	pages.add(b.measure("settings: runbooks"))
	b.fill("#runbook-json", `{"name": "broken",`)
	b.submit(`form[action="/ui/settings/runbooks"] button[type=submit]`)
	if msg := b.text(`document.querySelector("form #problem").innerText`); !strings.Contains(msg, "line 1") {
		t.Fatalf("syntax error shown as %q", msg)
	}
	if b.text(`document.querySelector("#runbook-json").getAttribute("aria-invalid")`) != "true" ||
		b.text(`document.querySelector("#runbook-json").value`) != `{"name": "broken",` {
		t.Fatal("the editor must keep the text and mark it invalid")
	}
	b.fill("#runbook-json", `{"name": "x", "match": {"categories": ["gremlins"]}, "steps": [{"type": "wait", "description": "w", "params": {"duration": "1s"}}]}`)
	b.submit(`form[action="/ui/settings/runbooks"] button[type=submit]`)
	if msg := b.text(`document.querySelector("form #problem").innerText`); !strings.Contains(msg, `unknown category "gremlins"`) {
		t.Fatalf("validation error shown as %q", msg)
	}
	runbook := map[string]any{
		"name": "Recycle the pool", "description": "Recycle connections, then check health",
		"match": map[string]any{"categories": []string{"db_connection_exhaustion"}},
		"steps": []map[string]any{
			{"type": "http", "description": "Recycle the connection pool", "params": map[string]any{"method": "POST", "url": target.URL + "/{{.Service}}/recycle", "expectStatus": 200}},
			{"type": "wait", "description": "Let connections settle", "params": map[string]any{"duration": "300ms"}},
			{"type": "verification", "description": "Health answers", "params": map[string]any{"url": target.URL + "/{{.Service}}/health", "expectStatus": 200, "retries": 2}},
		},
	}
	rbJSON, _ := json.MarshalIndent(runbook, "", "  ")
	b.fill("#runbook-json", string(rbJSON))
	b.submit(`form[action="/ui/settings/runbooks"] button[type=submit]`)
	b.waitFor("the saved runbook", `document.querySelector("article.runbook h3") && document.querySelector("article.runbook h3").innerText === "Recycle the pool"`, 5*time.Second)
	b.screenshot(shots, "04-runbooks")

	t.Log("ingest an alert through the signed webhook")
	st, incidentID := signedAlert(t, webhook, key, secret, map[string]string{
		"title": "Checkout API failing", "description": "checkout-api: FATAL: too many connections for role app; pool exhausted",
		"service": "checkout-api", "environment": "production", "severity": "high", "sourceAlertId": "am-1",
	})
	if st != http.StatusAccepted || incidentID == "" {
		t.Fatalf("alert: %d %q", st, incidentID)
	}

	t.Log("watch the investigation finish on the incident page without reloading")
	b.open(e.URL + "/ui/incidents")
	pages.add(b.measure("incidents"))
	b.waitFor("the incident in the list", `document.querySelector('a[href="/ui/incidents/`+incidentID+`"]') !== null`, 10*time.Second)
	b.screenshot(shots, "05-incidents")
	b.open(e.URL + "/ui/incidents/" + incidentID)
	pages.add(b.measure("incident (triaging)"))
	if got := b.text(`document.querySelector("#live-status").innerText`); got != "Triage is running." {
		t.Fatalf("before the worker runs the page says %q", got)
	}
	b.eval(`window.notReloaded = true`, nil)
	w := e.App.Worker()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	b.waitFor("the root cause", `document.querySelector("#root-cause") !== null && document.querySelector("#live a[href^='/ui/remediations/']") !== null`, 90*time.Second)
	if b.text(`String(window.notReloaded)`) != "true" {
		t.Fatal("the page reloaded; it must update in place")
	}
	if got := b.text(`document.querySelector("#category").innerText`); got != "DB connection exhaustion" {
		t.Errorf("category shown %q", got)
	}
	var agents []struct{ Role, Status string }
	b.eval(`[...document.querySelectorAll(".agents li")].map(li => ({role: li.dataset.agent, status: li.dataset.status}))`, &agents)
	if len(agents) == 0 {
		t.Fatal("no agents listed")
	}
	for _, a := range agents {
		if a.Status != "completed" {
			t.Errorf("agent %s is %s", a.Role, a.Status)
		}
	}
	body := b.text(`document.querySelector("#live").innerText`)
	for _, want := range []string{"Evidence by agent", "Source: the alert", "Hypotheses", "Recommended actions", "too many connections"} {
		if !strings.Contains(body, want) {
			t.Errorf("incident page lacks %q", want)
		}
	}
	// Each finding is shown once: not twice in one bullet, not again under
	// another agent that made it too.
	var items []string
	b.eval(`[...document.querySelectorAll("ul.evidence li")].map(li => li.innerText.split("\n")[0])`, &items)
	shown := map[string]string{}
	for _, it := range items {
		for _, part := range strings.Split(it, "[")[1:] {
			if prev, dup := shown[part]; dup {
				t.Errorf("the finding %q is shown twice (%q and %q)", part, prev, it)
			}
			shown[part] = it
		}
	}
	// Every workflow of the incident is linked in the Temporal UI by its ID.
	var links []string
	b.eval(`[...document.querySelectorAll(".workflows a")].map(a => a.href)`, &links)
	wantLinks := []string{"incident/" + incidentID, "investigation/" + incidentID + "/1"}
	for _, a := range agents {
		wantLinks = append(wantLinks, "investigation/"+incidentID+"/1/agent/"+a.Role)
	}
	for _, id := range wantLinks {
		want := "http://temporal-ui.test:8233/namespaces/" + cfg.TemporalNamespace + "/workflows/" + strings.ReplaceAll(id, "/", "%2F")
		if !contains(links, want) {
			t.Errorf("no Temporal UI link %s among %v", want, links)
		}
	}
	remHref := b.text(`document.querySelector("#live a[href^='/ui/remediations/']").getAttribute("href")`)
	remID := strings.TrimPrefix(remHref, "/ui/remediations/")
	if !contains(links, "http://temporal-ui.test:8233/namespaces/"+cfg.TemporalNamespace+"/workflows/remediation%2F"+remID) {
		t.Errorf("no Temporal UI link for remediation %s", remID)
	}
	b.screenshot(shots, "06-incident")
	b.open(e.URL + "/ui/incidents/" + incidentID)
	pages.add(b.measure("incident (investigated)"))

	t.Log("approve and execute the remediation; every step completes")
	owner := e.apiLogin(t, ownerEmail, password)
	var listed struct {
		Remediations []remediationJSON `json:"remediations"`
	}
	if st := e.call(t, "GET", "/v1/remediation/"+incidentID, owner, nil, &listed); st != http.StatusOK || len(listed.Remediations) != 1 {
		t.Fatalf("remediations: %d %+v", st, listed)
	}
	planHash := listed.Remediations[0].PlanHash
	b.submit(`#live a[href="` + remHref + `"]`)
	pages.add(b.measure("remediation"))
	b.screenshot(shots, "07-remediation")
	b.submit(`a[href="` + remHref + `/approve"]`)
	pages.add(b.measure("approve confirmation"))
	confirm := b.text(`document.querySelector("main").innerText`)
	for _, want := range []string{target.URL + "/checkout-api/recycle", target.URL + "/checkout-api/health", "Recycle the connection pool", planHash} {
		if !strings.Contains(confirm, want) {
			t.Errorf("approval page does not show %q (the rendered step as it will run)", want)
		}
	}
	b.screenshot(shots, "08-approve-confirmation")
	b.submit("#confirm")
	b.waitFor("the approval", `document.querySelector("#rem-status .badge").innerText === "Approved"`, 10*time.Second)
	if got := b.text(`document.querySelector(".notice").innerText`); !strings.Contains(got, "approved") {
		t.Errorf("after approving the page says %q", got)
	}
	b.submit(`a[href="` + remHref + `/execute"]`)
	if n := b.text(`String(document.querySelectorAll("tr.step").length)`); n != "3" {
		t.Fatalf("execute confirmation shows %s steps", n)
	}
	b.submit("#confirm")
	b.eval(`window.notReloaded = true`, nil)
	b.waitFor("every step completed", `[...document.querySelectorAll("tr.step")].length === 3 && [...document.querySelectorAll("tr.step")].every(r => r.dataset.status === "completed") && document.querySelector("#rem-status .badge").innerText === "Completed"`, 60*time.Second)
	if b.text(`String(window.notReloaded)`) != "true" {
		t.Fatal("the remediation page reloaded; it must update in place")
	}
	b.screenshot(shots, "09-remediation-completed")
	if got := target.requests(); !contains(got, "POST /checkout-api/recycle") || !contains(got, "GET /checkout-api/health") {
		t.Errorf("the step target saw %v", got)
	}

	t.Log("a refused decision is explained in words")
	b.open(e.URL + remHref + "/approve")
	if got := b.text(`document.querySelector("#problem").innerText`); !strings.Contains(got, "Already executed by "+ownerEmail) {
		t.Errorf("approving an executed remediation says %q", got)
	}
	second := e.reinvestigate(t, b, incidentID, 2)
	b.open(e.URL + "/ui/remediations/" + second + "/approve")
	admin, adminEmail := e.userToken(t, owner, "admin")
	if st := e.call(t, "POST", "/v1/remediation/"+second+"/approve", admin, nil, nil); st != http.StatusOK {
		t.Fatalf("admin approves through the API: %d", st)
	}
	b.submit("#confirm")
	if got := b.text(`document.querySelector("#problem").innerText`); !strings.Contains(got, "Already approved by "+adminEmail) || !strings.Contains(got, "409") {
		t.Errorf("a conflicting approval says %q", got)
	}
	b.screenshot(shots, "10-conflict-explained")

	t.Log("a viewer sees no approve button, and a forced request is refused")
	third := e.reinvestigate(t, b, incidentID, 3)
	b.open(e.URL + "/ui/settings/users")
	pages.add(b.measure("settings: users"))
	viewerEmail := fmt.Sprintf("viewer-%d@example.com", time.Now().UnixNano())
	b.fill("#u-name", "Vic Viewer")
	b.fill("#u-email", viewerEmail)
	b.fill("#u-password", password)
	b.eval(`document.querySelector("#u-role").value = "viewer"`, nil)
	b.submit(`form[action="/ui/settings/users"] button[type=submit]`)
	b.waitFor("the new viewer", `document.body.innerText.includes(`+jsString(viewerEmail)+`)`, 5*time.Second)
	b.screenshot(shots, "11-users")
	b.signOut()
	b.signIn(e.URL, viewerEmail, password)
	b.open(e.URL + "/ui/remediations/" + third)
	if n := b.text(`String(document.querySelectorAll('a[href$="/approve"], a[href$="/reject"], a[href$="/execute"], form[action^="/ui/remediations/"]').length)`); n != "0" {
		t.Fatalf("a viewer is offered %s decision controls", n)
	}
	var forced struct {
		Page, Post int
	}
	b.eval(`(async () => {
		const csrf = document.querySelector('meta[name="csrf-token"]').content;
		const page = await fetch("/ui/remediations/`+third+`/approve");
		const post = await fetch("/ui/remediations/`+third+`/approve", {method: "POST",
			body: new URLSearchParams({csrf, planHash: "forced"})});
		return {page: page.status, post: post.status};
	})()`, &forced)
	if forced.Page != http.StatusForbidden || forced.Post != http.StatusForbidden {
		t.Errorf("a viewer's forced approval through the dashboard got %+v, want 403", forced)
	}
	viewer := e.apiLogin(t, viewerEmail, password)
	expectCall(t, e, "viewer approves through the API", "POST", "/v1/remediation/"+third+"/approve", viewer, nil, http.StatusForbidden, "forbidden")
	if r := e.remediation(t, owner, incidentID, third); r.Status != "awaiting_approval" {
		t.Fatalf("after the refused approvals the remediation is %s", r.Status)
	}
	b.screenshot(shots, "12-viewer-remediation")
	b.signOut()

	t.Log("the owner removes the viewer from the dashboard, and the viewer's token stops at once")
	b.signIn(e.URL, ownerEmail, password)
	b.open(e.URL + "/ui/settings/users")
	viewerID := b.text(`[...document.querySelectorAll("tr[data-user]")].find(r => r.innerText.includes(` + jsString(viewerEmail) + `)).dataset.user`)
	b.submit(`tr[data-user="` + viewerID + `"] form[action$="/remove"] button[type=submit]`)
	if got := b.text(`document.querySelector("main").innerText`); strings.Contains(got, viewerEmail) || !strings.Contains(got, "User removed") {
		t.Errorf("after removal the users page says %q", got)
	}
	expectCall(t, e, "the removed viewer's token", "GET", "/v1/incidents", viewer, nil, http.StatusUnauthorized, "unauthorized")
	b.signOut()

	t.Log("a 401 returns to sign-in, and signing in comes back")
	b.signIn(e.URL, ownerEmail, password)
	b.open(e.URL + "/ui/incidents/" + incidentID)
	b.clearCookies()
	b.waitFor("the sign-in page", `location.pathname === "/ui/login" && document.querySelector("#password") !== null`, 30*time.Second)
	if next := b.text(`document.querySelector('input[name="next"]').value`); next != "/ui/incidents/"+incidentID {
		t.Fatalf("sign-in will return to %q", next)
	}
	b.fill("#email", ownerEmail)
	b.fill("#password", password)
	b.submit(`form[action="/ui/login"] button[type=submit]`)
	if got := b.text(`location.pathname`); got != "/ui/incidents/"+incidentID {
		t.Fatalf("after signing in again the browser is at %s", got)
	}

	t.Log("keyboard only: sign in and approve")
	b.signOut()
	b.waitFor("focus in the e-mail field", `document.activeElement && document.activeElement.id === "email"`, 5*time.Second)
	b.keys(ownerEmail)
	b.tabTo("the password field", `el.id === "password"`)
	b.keys(password)
	b.pressEnterAndWait()
	if got := b.text(`location.pathname`); got != "/ui/incidents" {
		t.Fatalf("keyboard sign-in landed on %s", got)
	}
	b.tabTo("the incident link", `el.getAttribute("href") === "/ui/incidents/`+incidentID+`"`)
	b.pressEnterAndWait()
	b.tabTo("the awaiting remediation", `el.getAttribute("href") === "/ui/remediations/`+third+`"`)
	b.pressEnterAndWait()
	b.tabTo("Review and approve", `el.getAttribute("href") === "/ui/remediations/`+third+`/approve"`)
	b.pressEnterAndWait()
	b.tabTo("the approve button", `el.id === "confirm"`)
	b.screenshot(shots, "13-keyboard-focus")
	b.pressEnterAndWait()
	b.waitFor("the approval", `document.querySelector("#rem-status .badge").innerText === "Approved"`, 10*time.Second)
	if r := e.remediation(t, owner, incidentID, third); r.Status != "approved" || r.ApprovedBy != ownerEmail {
		t.Fatalf("after the keyboard approval: %s by %q", r.Status, r.ApprovedBy)
	}

	t.Log("analytics and the remaining settings")
	for _, period := range []string{"7d", "30d", "90d"} {
		b.open(e.URL + "/ui/analytics?period=" + period)
		pages.add(b.measure("analytics " + period))
		if got := b.text(`document.querySelector("#stat-total").innerText`); got != "1" {
			t.Errorf("analytics %s counts %s incidents, want 1", period, got)
		}
		if got := b.text(`document.querySelector('.periods a[aria-current="page"]').innerText`); got != "Last "+period {
			t.Errorf("analytics marks %q as the current period", got)
		}
		if n := b.text(`String(document.querySelectorAll("svg.chart rect").length)`); n != "6" {
			t.Errorf("the chart draws %s bars", n)
		}
	}
	b.screenshot(shots, "14-analytics")
	b.open(e.URL + "/ui/settings/webhooks")
	pages.add(b.measure("settings: webhooks"))
	b.fill("#ep-url", target.URL+"/events")
	b.eval(`document.querySelectorAll('input[name="events"]').forEach(c => c.checked = true)`, nil)
	b.submit(`form[action="/ui/settings/webhooks"] button[type=submit]`)
	if s := b.text(`document.querySelector("#new-endpoint-secret").value`); !strings.HasPrefix(s, "whsec_") {
		t.Errorf("new endpoint secret %q", s)
	}
	b.screenshot(shots, "15-webhooks")

	t.Log("reject with a reason, then resolve")
	fourth := e.reinvestigate(t, b, incidentID, 4)
	b.open(e.URL + "/ui/remediations/" + fourth + "/reject")
	pages.add(b.measure("reject confirmation"))
	b.fill("#reason", "Pool already recycled by hand")
	b.submit("#confirm")
	b.waitFor("the rejection", `document.querySelector("#rem-status .badge").innerText === "Rejected"`, 10*time.Second)
	if r := e.remediation(t, owner, incidentID, fourth); r.Status != "rejected" || r.RejectReason != "Pool already recycled by hand" {
		t.Fatalf("after rejecting: %s %q", r.Status, r.RejectReason)
	}
	b.open(e.URL + "/ui/incidents/" + incidentID)
	b.fill("#note", "Pool resized to 40")
	b.submit(`form[action$="/resolve"] button[type=submit]`)
	b.waitFor("the resolution", `document.querySelector("#live-status").innerText === "Resolved."`, 30*time.Second)
	if n := b.text(`String(document.querySelectorAll('form[action$="/resolve"], form[action$="/context"]').length)`); n != "0" {
		t.Errorf("a resolved incident still offers %s forms", n)
	}
	b.screenshot(shots, "16-resolved")
}

// reinvestigate starts pass n from the incident page's "Investigate again now"
// button and returns the remediation that pass proposes.
func (e *env) reinvestigate(t *testing.T, b *browser, incidentID string, n int) string {
	t.Helper()
	b.open(e.URL + "/ui/incidents/" + incidentID)
	b.submit(`button[name="action"][value="reinvestigate"]`)
	b.waitFor(fmt.Sprintf("pass %d's remediation", n),
		fmt.Sprintf(`document.querySelectorAll("#live .rems li").length === %d`, n), 90*time.Second)
	var hrefs []string
	b.eval(`[...document.querySelectorAll("#live .rems a")].map(a => a.getAttribute("href"))`, &hrefs)
	return strings.TrimPrefix(hrefs[len(hrefs)-1], "/ui/remediations/")
}

// tabTo presses Tab until the focused element satisfies match (a JavaScript
// condition on el), checking that every element reached shows a focus ring.
func (b *browser) tabTo(what, match string) {
	b.t.Helper()
	for i := 0; i < 80; i++ {
		b.keys("\t")
		var st struct {
			Match   bool   `json:"match"`
			Outline string `json:"outline"`
			Tag     string `json:"tag"`
		}
		b.eval(`(() => { const el = document.activeElement; if (!el || el === document.body) return {match: false, outline: "", tag: ""};
			const s = getComputedStyle(el);
			return {match: Boolean(`+match+`), outline: s.outlineStyle + " " + s.outlineWidth, tag: el.tagName + (el.id ? "#" + el.id : "")}; })()`, &st)
		if st.Tag != "" && (strings.HasPrefix(st.Outline, "none") || strings.HasSuffix(st.Outline, " 0px")) {
			b.t.Errorf("keyboard focus on %s is not visible (outline %s)", st.Tag, st.Outline)
		}
		if st.Match {
			return
		}
	}
	b.t.Fatalf("Tab never reached %s on %s", what, b.location())
}

// pressEnterAndWait activates the focused element and waits for the page it
// leads to.
func (b *browser) pressEnterAndWait() {
	b.t.Helper()
	before := b.text(`String(performance.timeOrigin)`)
	b.keys("\r")
	b.waitFor("the next page", `String(performance.timeOrigin) !== `+jsString(before)+` && document.readyState === "complete"`, 60*time.Second)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
