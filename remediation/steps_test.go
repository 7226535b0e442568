package remediation

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/temporalx"
)

// TestExecutorsRefuseHostileURLs shows the http, verification and rollback
// executors go through the egress client and report its refusal as a
// non-retryable EgressBlocked error, for every hostile destination.
func TestExecutorsRefuseHostileURLs(t *testing.T) {
	// An allowed public-facing server that redirects to internal addresses.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer redirector.Close()
	ap := netip.MustParseAddrPort(redirector.Listener.Addr().String())
	a := &Activities{Egress: egress.NewClient(egress.Options{AllowPrivate: false, AllowAddrs: []netip.AddrPort{ap}})}

	hostile := []string{
		"http://127.0.0.1/",
		"http://[::1]/",
		"http://localhost/", // a name resolving to 127.0.0.1
		"http://10.0.0.1/",
		"http://172.16.0.1/",
		"http://192.168.1.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://100.100.100.200/latest/meta-data/",
		"http://168.63.129.16/metadata/instance",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:169.254.169.254]/",
		"http://2130706433/",
		"http://0x7f000001/",
		"http://0177.0.0.1/",
		"http://127.1/",
		"http://0.0.0.0/",
		"http://[fe80::1]/",
		redirector.URL + "/?to=http://127.0.0.1:1/admin",
		redirector.URL + "/?to=http://169.254.169.254/latest/meta-data/",
	}
	steps := []struct {
		typ    string
		params func(u string) map[string]any
	}{
		{StepHTTP, func(u string) map[string]any { return map[string]any{"method": "POST", "url": u} }},
		{StepVerification, func(u string) map[string]any { return map[string]any{"url": u, "retries": 3, "timeout": "2s"} }},
		{StepDeploymentRollback, func(u string) map[string]any { return map[string]any{"url": u, "service": "api"} }},
	}
	for _, s := range steps {
		for _, u := range hostile {
			t.Run(s.typ+" "+u, func(t *testing.T) {
				err := executors[s.typ].run(context.Background(), a, stepCall{Params: s.params(u), Key: "remediation/rem_1/step/0"})
				var app *temporal.ApplicationError
				if !errors.As(err, &app) || app.Type() != ErrTypeEgressBlocked || !app.NonRetryable() {
					t.Fatalf("error %v, want a non-retryable %s", err, ErrTypeEgressBlocked)
				}
			})
		}
	}
}

// TestHTTPStepClassifiesStatus shows which answers are retried.
func TestHTTPStepClassifiesStatus(t *testing.T) {
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get(IdempotencyHeader))
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusAccepted)
		case "/busy":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/down":
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	a := &Activities{Egress: egress.NewClient(egress.Options{AllowPrivate: true})}
	cases := []struct {
		path      string
		expect    int
		ok, retry bool
	}{
		{"/ok", 0, true, false}, {"/ok", 202, true, false}, {"/ok", 200, false, false},
		{"/busy", 0, false, true}, {"/down", 0, false, true}, {"/forbidden", 0, false, false},
	}
	for _, c := range cases {
		err := httpStep{}.run(context.Background(), a, stepCall{Params: map[string]any{"url": srv.URL + c.path, "expectStatus": c.expect}, Key: "k1"})
		var app *temporal.ApplicationError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.path, err)
		case !c.ok && (!errors.As(err, &app) || app.NonRetryable() == c.retry):
			t.Errorf("%s expect %d: %v, want retryable=%v", c.path, c.expect, err, c.retry)
		}
	}
	for _, k := range keys {
		if k != "k1" {
			t.Fatalf("Idempotency-Key %q", k)
		}
	}
}

// TestSQLStepAppliesOnce runs a migration twice with one key: the ledger row
// written in the same transaction makes the second run a no-op.
func TestSQLStepAppliesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.db")
	a := &Activities{SQLTargets: SQLTargets{DSNs: map[string]string{"main": "sqlite:" + path}, Tenants: map[string][]string{"main": {"*"}}}}
	params := map[string]any{"target": "main", "statements": []any{
		"CREATE TABLE IF NOT EXISTS counters (n INTEGER NOT NULL)", "INSERT INTO counters (n) VALUES (1)"}}
	for i := 0; i < 2; i++ {
		if err := (sqlStep{}).run(context.Background(), a, stepCall{Params: params, Key: "remediation/rem_1/step/0"}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open(SQLDriver("sqlite:" + path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM counters").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows %d (%v), want 1", n, err)
	}
	bad := map[string]any{"target": "main", "statements": []any{"INSERT INTO nowhere VALUES (1)"}}
	err = (sqlStep{}).run(context.Background(), a, stepCall{Params: bad, Key: "remediation/rem_1/step/1"})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Fatalf("bad statement: %v, want non-retryable", err)
	}
}

func TestValidateStep(t *testing.T) {
	targets := SQLTargets{DSNs: map[string]string{"main": "sqlite:x.db"}, Tenants: map[string][]string{"main": {"ten_1"}}}
	good := []struct {
		typ string
		p   map[string]any
	}{
		{StepHTTP, map[string]any{"method": "post", "url": "https://flags.example.com/{{.Service}}/flags/{{index .Tags \"flag\"}}", "expectStatus": 200}},
		{StepVerification, map[string]any{"url": "https://example.com/health", "timeout": "5s", "retries": 3}},
		{StepSQLMigration, map[string]any{"target": "main", "statements": []any{"SELECT 1"}}},
		{StepDeploymentRollback, map[string]any{"url": "https://deploy.example.com/rollback", "service": "{{.Service}}"}},
		{StepWait, map[string]any{"duration": "30s"}},
	}
	for _, g := range good {
		if err := ValidateStep(g.typ, g.p, targets, "ten_1", false); err != nil {
			t.Errorf("%s: %v", g.typ, err)
		}
	}
	bad := []struct {
		typ string
		p   map[string]any
	}{
		{"shell", map[string]any{}},
		{StepHTTP, map[string]any{"url": "https://x/{{.Nope"}},
		{StepHTTP, map[string]any{"url": "https://x/", "extra": true}},
		{StepHTTP, map[string]any{"url": "https://x/", "method": "CONNECT"}},
		{StepSQLMigration, map[string]any{"target": "other", "statements": []any{"SELECT 1"}}},
		{StepWait, map[string]any{"duration": "48h"}},
		{StepHTTP, map[string]any{"url": "http://2130706433/"}},
		{StepHTTP, map[string]any{"url": "http://10.0.0.1/"}},
		{StepVerification, map[string]any{"url": "http://[::1]:8080/health"}},
	}
	for _, b := range bad {
		if err := ValidateStep(b.typ, b.p, targets, "ten_1", false); err == nil {
			t.Errorf("%s %v: accepted", b.typ, b.p)
		}
	}
	if err := ValidateStep(StepSQLMigration, map[string]any{"target": "main", "statements": []any{"SELECT 1"}}, targets, "ten_2", false); err == nil {
		t.Error("another tenant's target accepted")
	}
	if err := ValidateStep(StepHTTP, map[string]any{"url": "http://10.0.0.1/"}, targets, "ten_1", true); err != nil {
		t.Errorf("private literal with private egress on: %v", err)
	}
	out, err := RenderParams(map[string]any{"url": "https://hooks.example.com/{{.Service}}/{{index .Tags \"env\"}}/{{.IncidentID}}"},
		TemplateData{Service: "api", IncidentID: "inc_1", Tags: map[string]string{"env": "prod"}})
	if err != nil || out["url"] != "https://hooks.example.com/api/prod/inc_1" {
		t.Fatalf("render %v %v", out, err)
	}
	if _, err := RenderParams(map[string]any{"u": "{{.Missing}}"}, TemplateData{}); err == nil {
		t.Fatal("missing field rendered")
	}
}

// TestHTTPStepIgnoresLargeBody shows a 2xx answer with a body beyond the
// egress size cap still completes the step: only the status decides it.
func TestHTTPStepIgnoresLargeBody(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, big)
	}))
	defer srv.Close()
	a := &Activities{Egress: egress.NewClient(egress.Options{AllowPrivate: true})}
	if err := (httpStep{}).run(context.Background(), a, stepCall{Params: map[string]any{"url": srv.URL, "method": "GET"}, Key: "k1"}); err != nil {
		t.Fatalf("2 MiB 200 answer: %v", err)
	}
}

// TestHTTPStepRetryAfterDate shows an HTTP-date Retry-After is honoured and
// capped at five minutes.
func TestHTTPStepRetryAfterDate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	a := &Activities{Egress: egress.NewClient(egress.Options{AllowPrivate: true})}
	status, wait, err := a.callStep(context.Background(), stepRequest{method: http.MethodGet, url: srv.URL, key: "k1"})
	if err != nil || status != http.StatusServiceUnavailable || wait != maxStepRetryAfter {
		t.Fatalf("status %d wait %v err %v, want 503 after %v", status, wait, err, maxStepRetryAfter)
	}
}

// TestShortenKeepsValidUTF8 shows a long multibyte reason is cut on a rune
// boundary, so the database never receives invalid UTF-8.
func TestShortenKeepsValidUTF8(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 400), "x" + strings.Repeat("日本", 200), strings.Repeat("🙂", 100)} {
		got := temporalx.Reason(s)
		if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 300+len("…") {
			t.Errorf("temporalx.Reason(%d bytes) = %d bytes, valid %v", len(s), len(got), utf8.ValidString(got))
		}
	}
	if temporalx.Reason("short ✓") != "short ✓" {
		t.Error("short text changed")
	}
}

// TestSQLStepConcurrentFirstUse runs many steps at once against a PostgreSQL
// target whose ledger table does not exist yet: every one must apply, none
// may fail on the racing CREATE TABLE.
func TestSQLStepConcurrentFirstUse(t *testing.T) {
	testenv.DatabaseURL(t)
	dsn := testdb.URL(t)
	a := &Activities{SQLTargets: SQLTargets{DSNs: map[string]string{"main": dsn}, Tenants: map[string][]string{"main": {"*"}}}}
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			params := map[string]any{"target": "main", "statements": []any{"SELECT 1"}}
			errs <- (sqlStep{}).run(context.Background(), a, stepCall{Params: params, Key: "remediation/rem_c/step/" + strconv.Itoa(i)})
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Errorf("concurrent first use: %v", err)
		}
	}
}

// TestWaitStepResumesWithRemainingTime shows a wait resumed after a lost
// worker waits only what is left, counted from the step's first start.
func TestWaitStepResumesWithRemainingTime(t *testing.T) {
	params := map[string]any{"duration": "1h"}
	ctx := withStepStarted(context.Background(), time.Now().Add(-time.Hour-time.Second))
	start := time.Now()
	if err := (waitStep{}).run(ctx, nil, stepCall{Params: params, Key: "k"}); err != nil || time.Since(start) > time.Second {
		t.Fatalf("elapsed wait: %v after %v", err, time.Since(start))
	}
	ctx = withStepStarted(context.Background(), time.Now().Add(-time.Hour+200*time.Millisecond))
	start = time.Now()
	if err := (waitStep{}).run(ctx, nil, stepCall{Params: params, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 5*time.Second {
		t.Fatalf("resumed wait took %v, want about 200ms", el)
	}
}

// TestStepRedirectDropsHeadersAcrossOrigins shows a step's own headers (API
// keys, tokens) stay with the origin the runbook wrote them for: a redirect to
// another scheme, host or port is followed without them.
func TestStepRedirectDropsHeadersAcrossOrigins(t *testing.T) {
	got := make(chan http.Header, 2)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer elsewhere.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			got <- r.Header.Clone()
			return
		}
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/same", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, elsewhere.URL+"/collect", http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	a := &Activities{Egress: egress.NewClient(egress.Options{AllowPrivate: true})}
	headers := map[string]any{"X-Api-Key": "tenant-secret", "Authorization": "Bearer tenant-token"}
	for _, c := range []struct {
		path string
		kept bool
	}{{"/hop", true}, {"/away", false}} {
		err := httpStep{}.run(context.Background(), a, stepCall{Key: "k1",
			Params: map[string]any{"method": "POST", "url": origin.URL + c.path, "headers": headers, "body": map[string]any{"a": 1}}})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		h := <-got
		if kept := h.Get("X-Api-Key") != "" || h.Get("Authorization") != ""; kept != c.kept {
			t.Errorf("%s: runbook headers kept = %v, want %v (%v)", c.path, kept, c.kept, h)
		}
		if h.Get(IdempotencyHeader) != "k1" {
			t.Errorf("%s: Idempotency-Key %q", c.path, h.Get(IdempotencyHeader))
		}
	}
}
