package api_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/api"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
	"github.com/causeway/causeway/ratelimit"
	"github.com/causeway/causeway/service"
)

const testSecretsKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// hookEnv is the real HTTP API on a real database. Its Temporal client points at a
// closed port: the webhook path must answer without ever calling Temporal.
type hookEnv struct {
	srv      *httptest.Server
	store    *models.Store
	sns      *snsSigner
	confirms atomic.Int32
	quota    int
	logs     *logBuffer
}

// logBuffer collects the server's log lines so tests can check what an SRE sees.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newHookEnv(tb testing.TB, quota int) *hookEnv {
	tb.Helper()
	return newHookEnvTemporal(tb, quota, "127.0.0.1:1")
}

// newHookEnvTemporal is newHookEnv with its Temporal client pointed at hostPort.
func newHookEnvTemporal(tb testing.TB, quota int, hostPort string) *hookEnv {
	tb.Helper()
	e := &hookEnv{store: testdb.Open(tb), quota: quota, logs: &logBuffer{}}
	log := slog.New(slog.NewTextHandler(e.logs, nil))
	tc, err := client.NewLazyClient(client.Options{HostPort: hostPort})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tc.Close)
	e.sns = newSNSSigner(tb, &e.confirms)
	sealer, err := auth.NewSealer(testSecretsKey)
	if err != nil {
		tb.Fatal(err)
	}
	jwtSecret := auth.RandomToken(32)
	tokens := auth.NewTokens(jwtSecret, "causeway", "causeway-api", time.Hour, models.ValidRole)
	accounts := identity.NewAccounts(e.store, tokens, identity.AccountsConfig{
		RefreshTTL: 24 * time.Hour, SignupEnabled: true, QuotaEvents: quota, QuotaInvestigations: 10,
	})
	disp := investigation.NewDispatcher(e.store, tc, "test-queue", 16, log)
	incidents := investigation.NewIncidents(e.store, tc, disp, auth.NewSigner(jwtSecret, "cursor"), log)
	reg := providers.New(providers.Options{
		HTTPClient:         e.sns.srv.Client(),
		SNSCertHostAllowed: func(h string) bool { return h == e.sns.host },
	})
	shared := ratelimit.NewMemory()
	e.srv = httptest.NewServer(api.NewRouter(api.Deps{
		Log: log, Limiter: shared, Marks: shared, Accounts: accounts, Incidents: incidents,
		APIKeys: identity.NewAPIKeys(e.store, sealer, service.ForgetVerifiedKey),
		Ingest:  service.NewIngest(e.store, incidents, disp, reg, sealer, e.sns.srv.Client(), shared, log),
		Changes: service.NewChanges(e.store, auth.NewSigner(jwtSecret, "cursor"), shared, log),
	}))
	tb.Cleanup(e.srv.Close)
	return e
}

// tenant is a signed-up tenant with one API key.
type tenant struct {
	ID, Token, KeyID, Key, Secret string
}

func (e *hookEnv) tenant(tb testing.TB) tenant {
	tb.Helper()
	var su struct{ TenantID, AccessToken string }
	st, _ := e.do(tb, "POST", "/auth/signup", "", map[string]string{
		"tenantName": "acme", "email": "o-" + strings.ToLower(auth.RandomToken(6)) + "@example.com",
		"password": "correct horse battery", "name": "Owner",
	}, &su)
	if st != http.StatusCreated {
		tb.Fatalf("signup: %d", st)
	}
	t := tenant{ID: su.TenantID, Token: su.AccessToken}
	var k struct{ KeyID, Key, WebhookSecret string }
	if st, raw := e.do(tb, "POST", "/v1/api-keys", t.Token, map[string]string{"name": "alerts"}, &k); st != http.StatusCreated {
		tb.Fatalf("create key: %d %s", st, raw)
	}
	t.KeyID, t.Key, t.Secret = k.KeyID, k.Key, k.WebhookSecret
	return t
}

// do sends a JSON request with an optional Bearer token.
func (e *hookEnv) do(tb testing.TB, method, path, token string, body, out any) (int, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return send(tb, req, out)
}

func send(tb testing.TB, req *http.Request, out any) (int, []byte) {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatalf("decode %s: %v", raw, err)
		}
	}
	return resp.StatusCode, raw
}

// hook builds a webhook delivery; mutate its headers before sending.
func (e *hookEnv) hook(tb testing.TB, tenantID, provider string, body []byte) *http.Request {
	tb.Helper()
	req, err := http.NewRequest("POST", e.srv.URL+"/v1/webhooks/"+tenantID+"/"+provider, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// signed is a custom delivery with the key in X-API-Key and a bare signature.
func (e *hookEnv) signed(tb testing.TB, t tenant, body []byte) *http.Request {
	req := e.hook(tb, t.ID, "custom", body)
	req.Header.Set("X-API-Key", t.Key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(t.Secret), body, ""))
	return req
}

type ack struct {
	Error      string `json:"error"`
	Message    string `json:"message"`
	IncidentID string `json:"incidentId"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Alerts     []struct {
		IncidentID string `json:"incidentId"`
		Status     string `json:"status"`
		Duplicate  bool   `json:"duplicate"`
	} `json:"alerts"`
}

func alertBody(id, title string) []byte {
	b, _ := json.Marshal(map[string]any{
		"title": title, "description": "checkout p99 2.4s for 10m", "sourceAlertId": id, "severity": "info",
		"service": "checkout", "environment": "prod", "tags": map[string]string{"team": "payments"},
	})
	return b
}

func (e *hookEnv) countIncidents(tb testing.TB, tenantID string) int64 {
	var n int64
	if err := e.store.DB().Model(&models.Incident{}).Where("tenant_id = ?", tenantID).Count(&n).Error; err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestWebhookCreatesQueuedIncident(t *testing.T) {
	t.Logf("database: %s", testdb.Describe())
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	var a ack
	st, raw := send(t, e.signed(t, tn, alertBody("chk-1", "p99 latency > 2s")), &a)
	if st != http.StatusAccepted || a.Status != models.StatusTriaging || a.IncidentID == "" {
		t.Fatalf("got %d %s", st, raw)
	}
	inc, err := e.store.GetIncident(context.Background(), tn.ID, a.IncidentID)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Source != "custom" || inc.SourceAlertID != "chk-1" || inc.Severity != "info" || inc.Service != "checkout" ||
		inc.Environment != "prod" || inc.Tags["team"] != "payments" || inc.Status != models.StatusTriaging {
		t.Fatalf("incident fields: %+v", inc)
	}
	if inc.WorkflowStartedAt != nil {
		t.Fatal("the ack path must not have started the workflow itself; the dispatcher does")
	}
	// Queued: waiting for the dispatcher to admit it (investigation.Admission).
	if inc.AdmittedAt != nil {
		t.Fatal("the ack path must not have admitted the incident itself; the dispatcher does")
	}
	tl, _ := e.store.Timeline(context.Background(), tn.ID, a.IncidentID)
	if len(tl) != 1 || tl[0].Message != "Alert received from custom" || tl[0].Actor != "custom" {
		t.Fatalf("timeline: %+v", tl)
	}
	// An alert without a source id never dedups.
	body := []byte(`{"title":"disk full","description":"disk at 95%"}`)
	for i := 0; i < 2; i++ {
		if st, raw := send(t, e.signed(t, tn, body), &a); st != http.StatusAccepted {
			t.Fatalf("no source id: %d %s", st, raw)
		}
	}
	// An alert without a description gets its title as one.
	req := e.hook(t, tn.ID, "alertmanager", []byte(`{"version":"4","status":"firing","alerts":[{"status":"firing",
		"labels":{"alertname":"NodeDown"},"startsAt":"2025-05-01T10:00:00Z","fingerprint":"aa01"}]}`))
	req.Header.Set("X-API-Key", tn.Key)
	if st, raw := send(t, req, &a); st != http.StatusAccepted {
		t.Fatalf("alertmanager: %d %s", st, raw)
	}
	inc, _ = e.store.GetIncident(context.Background(), tn.ID, a.IncidentID)
	if inc.Description != "NodeDown" || inc.Severity != "high" {
		t.Fatalf("description %q severity %q", inc.Description, inc.Severity)
	}
	if n := e.countIncidents(t, tn.ID); n != 4 {
		t.Fatalf("%d incidents, want 4", n)
	}
}

func TestWebhookKeyForms(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	forms := map[string]func(*http.Request){
		"header": func(r *http.Request) { r.Header.Set("X-API-Key", tn.Key) },
		"bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tn.Key) },
		"query":  func(r *http.Request) { r.URL.RawQuery = url.Values{"apiKey": {tn.Key}}.Encode() },
	}
	for name, set := range forms {
		t.Run(name, func(t *testing.T) {
			body := alertBody("form-"+name, "form "+name)
			req := e.hook(t, tn.ID, "custom", body)
			set(req)
			req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(tn.Secret), body, ""))
			if st, raw := send(t, req, nil); st != http.StatusAccepted {
				t.Fatalf("%d %s", st, raw)
			}
		})
	}
}

func TestWebhookSignatures(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	now := strconv.FormatInt(time.Now().Unix(), 10)
	stale := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	secret := []byte(tn.Secret)
	cases := []struct {
		name   string
		sig    func(body []byte) (sig, ts string)
		tamper bool
		want   int
	}{
		{"bare", func(b []byte) (string, string) { return providers.Sign(secret, b, ""), "" }, false, 202},
		{"prefixed", func(b []byte) (string, string) { return "sha256=" + providers.Sign(secret, b, ""), "" }, false, 202},
		{"timestamped", func(b []byte) (string, string) { return providers.Sign(secret, b, now), now }, false, 202},
		{"tampered body", func(b []byte) (string, string) { return providers.Sign(secret, b, ""), "" }, true, 401},
		{"wrong secret", func(b []byte) (string, string) { return providers.Sign([]byte("whsec_other"), b, ""), "" }, false, 401},
		{"stale timestamp", func(b []byte) (string, string) { return providers.Sign(secret, b, stale), stale }, false, 401},
		{"missing", func(b []byte) (string, string) { return "", "" }, false, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := alertBody("sig-"+tc.name, "signature "+tc.name)
			sig, ts := tc.sig(body)
			if tc.tamper {
				body = bytes.Replace(body, []byte("signature"), []byte("SIGNATURE"), 1)
			}
			req := e.hook(t, tn.ID, "custom", body)
			req.Header.Set("X-API-Key", tn.Key)
			if sig != "" {
				req.Header.Set(providers.HeaderSignature, sig)
			}
			if ts != "" {
				req.Header.Set(providers.HeaderTimestamp, ts)
			}
			var a ack
			if st, raw := send(t, req, &a); st != tc.want {
				t.Fatalf("got %d %s, want %d", st, raw, tc.want)
			}
			if tc.want == 401 && (a.Error != "unauthorized" || strings.Contains(a.Message, "signature mismatch")) {
				t.Fatalf("401 body: %+v", a)
			}
		})
	}
}

// TestWebhookRejectsKeys shows every key failure gets the same answer, which names
// no failing part.
func TestWebhookRejectsKeys(t *testing.T) {
	e := newHookEnv(t, 100)
	tn, other, revoked := e.tenant(t), e.tenant(t), e.tenant(t)
	if st, _ := e.do(t, "DELETE", "/v1/api-keys/"+revoked.KeyID, revoked.Token, nil, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	badSum := tn.Key[:len(tn.Key)-1] + "A"
	if strings.HasSuffix(tn.Key, "A") {
		badSum = tn.Key[:len(tn.Key)-1] + "B"
	}
	unknown := auth.NewAPIKey()
	cases := map[string]struct{ tenantID, key, secret string }{
		"missing":         {tn.ID, "", tn.Secret},
		"bad checksum":    {tn.ID, badSum, tn.Secret},
		"garbage":         {tn.ID, "hello", tn.Secret},
		"unknown":         {tn.ID, unknown, tn.Secret},
		"revoked":         {revoked.ID, revoked.Key, revoked.Secret},
		"other tenant":    {tn.ID, other.Key, other.Secret},
		"tenant mismatch": {other.ID, tn.Key, tn.Secret},
	}
	messages := map[string]bool{}
	for name, c := range cases {
		body := alertBody("rej-"+name, "rejected")
		req := e.hook(t, c.tenantID, "custom", body)
		if c.key != "" {
			req.Header.Set("X-API-Key", c.key)
		}
		req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(c.secret), body, ""))
		var a ack
		if st, raw := send(t, req, &a); st != http.StatusUnauthorized || a.Error != "unauthorized" {
			t.Fatalf("%s: %d %s", name, st, raw)
		}
		messages[a.Message] = true
	}
	if len(messages) != 1 {
		t.Fatalf("401 messages differ: %v", messages)
	}
	for _, id := range []string{tn.ID, other.ID, revoked.ID} {
		if n := e.countIncidents(t, id); n != 0 {
			t.Fatalf("tenant %s got %d incidents from rejected deliveries", id, n)
		}
	}
}

func TestWebhookBadInput(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	var a ack
	if st, raw := send(t, e.signed(t, tn, []byte(`{"title":`)), &a); st != 400 || a.Error != "validation_error" {
		t.Fatalf("invalid json: %d %s", st, raw)
	}
	if st, raw := send(t, e.signed(t, tn, []byte(`{"description":"no title here"}`)), &a); st != 400 || !strings.Contains(a.Message, "title is required") {
		t.Fatalf("missing title: %d %s", st, raw)
	}
	big := append([]byte(`{"title":"x","description":"`), bytes.Repeat([]byte("a"), api.MaxBodyBytes)...)
	big = append(big, `"}`...)
	if st, raw := send(t, e.signed(t, tn, big), &a); st != http.StatusRequestEntityTooLarge || a.Error != "payload_too_large" {
		t.Fatalf("large body: %d %s", st, raw)
	}
	chunked := e.signed(t, tn, big)
	chunked.ContentLength = -1
	chunked.Body = io.NopCloser(bytes.NewReader(big))
	if st, raw := send(t, chunked, &a); st != http.StatusRequestEntityTooLarge {
		t.Fatalf("large chunked body: %d %s", st, raw)
	}
	req := e.hook(t, tn.ID, "splunk", alertBody("x", "x"))
	req.Header.Set("X-API-Key", tn.Key)
	if st, raw := send(t, req, &a); st != http.StatusNotFound || a.Error != "not_found" {
		t.Fatalf("unknown provider: %d %s", st, raw)
	}
	// Without a key the answer is 401 on any path, the provider unexamined.
	if st, raw := send(t, e.hook(t, tn.ID, "splunk", alertBody("x", "x")), &a); st != http.StatusUnauthorized || a.Error != "unauthorized" {
		t.Fatalf("unknown provider without a key: %d %s", st, raw)
	}
	if n := e.countIncidents(t, tn.ID); n != 0 {
		t.Fatalf("%d incidents from bad input", n)
	}
}

// TestWebhookConcurrentDuplicates fires 50 identical alerts at once: the unique
// index lets exactly one in and every loser names the winner.
func TestWebhookConcurrentDuplicates(t *testing.T) {
	t.Logf("database: %s", testdb.Describe())
	e := newHookEnv(t, 1000)
	tn := e.tenant(t)
	body := alertBody("storm-1", "identical")
	const n = 50
	type result struct {
		status int
		a      ack
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i].status, _ = send(t, e.signed(t, tn, body), &results[i].a)
		}()
	}
	close(start)
	wg.Wait()
	accepted, dup := 0, 0
	var winner string
	for _, r := range results {
		switch r.status {
		case http.StatusAccepted:
			accepted++
			winner = r.a.IncidentID
		case http.StatusConflict:
			dup++
		default:
			t.Fatalf("unexpected %d %+v", r.status, r.a)
		}
	}
	if accepted != 1 || dup != n-1 {
		t.Fatalf("%d accepted, %d duplicates", accepted, dup)
	}
	for _, r := range results {
		if r.status == http.StatusConflict && (r.a.Error != "duplicate_alert" || r.a.IncidentID != winner) {
			t.Fatalf("duplicate body %+v, want incident %s", r.a, winner)
		}
	}
	if c := e.countIncidents(t, tn.ID); c != 1 {
		t.Fatalf("%d incident rows", c)
	}
	rem, _ := e.store.Usage(context.Background(), tn.ID, time.Now())
	if rem.Events != 999 {
		t.Fatalf("events remaining %d: duplicates must not spend quota", rem.Events)
	}
}

func TestWebhookBatch(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	body := []byte(`{"version":"4","status":"firing","receiver":"ops","groupKey":"g","alerts":[
		{"status":"firing","labels":{"alertname":"A","severity":"warning"},"annotations":{"summary":"a"},"startsAt":"2025-05-01T10:00:00Z","fingerprint":"f1"},
		{"status":"firing","labels":{"alertname":"B"},"annotations":{"summary":"b"},"startsAt":"2025-05-01T10:00:00Z","fingerprint":"f2"},
		{"status":"resolved","labels":{"alertname":"C"},"annotations":{"summary":"c"},"startsAt":"2025-05-01T09:00:00Z","fingerprint":"f3"}]}`)
	post := func() (int, ack) {
		req := e.hook(t, tn.ID, "alertmanager", body)
		req.Header.Set("Authorization", "Bearer "+tn.Key)
		var a ack
		st, _ := send(t, req, &a)
		return st, a
	}
	st, a := post()
	if st != 202 || len(a.Alerts) != 3 || a.IncidentID != a.Alerts[0].IncidentID || a.Status != "triaging" ||
		a.Alerts[1].Duplicate || a.Alerts[2].Status != "ignored" {
		t.Fatalf("first delivery: %d %+v", st, a)
	}
	// The redelivery adds nothing, but the resolved alert is not a duplicate.
	st, b := post()
	if st != 202 || !b.Alerts[0].Duplicate || !b.Alerts[1].Duplicate || b.Alerts[0].IncidentID != a.IncidentID {
		t.Fatalf("redelivery: %d %+v", st, b)
	}
	// Only firing alerts: every one a duplicate is a 409 naming the first original.
	body = bytes.Replace(body, []byte(`"status":"resolved"`), []byte(`"status":"firing"`), 1)
	body = bytes.Replace(body, []byte(`"fingerprint":"f3"`), []byte(`"fingerprint":"f1"`), 1)
	body = bytes.Replace(body, []byte(`09:00:00Z","fingerprint":"f1"`), []byte(`10:00:00Z","fingerprint":"f1"`), 1)
	st, c := post()
	if st != http.StatusConflict || c.Error != "duplicate_alert" || c.IncidentID != a.IncidentID {
		t.Fatalf("all duplicates: %d %+v", st, c)
	}
	if n := e.countIncidents(t, tn.ID); n != 2 {
		t.Fatalf("%d incidents", n)
	}
}

func TestWebhookQuota(t *testing.T) {
	e := newHookEnv(t, 2)
	tn := e.tenant(t)
	for i := range 2 {
		if st, raw := send(t, e.signed(t, tn, alertBody(fmt.Sprint("q-", i), "quota")), nil); st != 202 {
			t.Fatalf("%d %s", st, raw)
		}
	}
	var a ack
	if st, raw := send(t, e.signed(t, tn, alertBody("q-3", "quota")), &a); st != 429 || a.Error != "event_quota_exceeded" {
		t.Fatalf("over quota: %d %s", st, raw)
	}
	// A duplicate of a recorded alert is still a duplicate, not a quota failure.
	if st, raw := send(t, e.signed(t, tn, alertBody("q-0", "quota")), &a); st != 409 {
		t.Fatalf("duplicate over quota: %d %s", st, raw)
	}
	if n := e.countIncidents(t, tn.ID); n != 2 {
		t.Fatalf("%d incidents", n)
	}
}

func TestAPIKeys(t *testing.T) {
	e := newHookEnv(t, 100)
	tn, other := e.tenant(t), e.tenant(t)
	if !strings.HasPrefix(tn.Key, auth.APIKeyPrefix) || !auth.ValidKeyChecksum(tn.Key) || !strings.HasPrefix(tn.Secret, "whsec_") {
		t.Fatalf("key format: %q %q", tn.Key[:12], tn.Secret[:6])
	}
	// A provider-generated secret is stored and used for verification.
	var k struct{ KeyID, Key, WebhookSecret, Prefix, Status string }
	own := "pagerduty-generated-secret-123"
	if st, raw := e.do(t, "POST", "/v1/api-keys", tn.Token, map[string]string{"name": "pd", "webhookSecret": own}, &k); st != 201 || k.WebhookSecret != own || k.Prefix != k.Key[:12] || k.Status != "active" {
		t.Fatalf("create with secret: %d %s", st, raw)
	}
	body := []byte(`{"event":{"id":"e1","event_type":"incident.triggered","data":{"id":"PD1","title":"DB replica lag","priority":{"summary":"P1"}}}}`)
	req := e.hook(t, tn.ID, "pagerduty", body)
	req.Header.Set("X-API-Key", k.Key)
	req.Header.Set(providers.HeaderPagerDutySignature, "v1="+providers.Sign([]byte(own), body, ""))
	if st, raw := send(t, req, nil); st != 202 {
		t.Fatalf("pagerduty with own secret: %d %s", st, raw)
	}
	for _, bad := range []map[string]string{{"name": ""}, {"name": "x", "webhookSecret": "short"}, {"name": strings.Repeat("n", 101)}} {
		if st, raw := e.do(t, "POST", "/v1/api-keys", tn.Token, bad, nil); st != 400 {
			t.Fatalf("invalid %v: %d %s", bad, st, raw)
		}
	}
	// The list shows metadata only.
	st, raw := e.do(t, "GET", "/v1/api-keys", tn.Token, nil, nil)
	if st != 200 || strings.Contains(string(raw), tn.Key) || strings.Contains(string(raw), tn.Secret) || strings.Contains(string(raw), own) {
		t.Fatalf("list leaks secrets or failed: %d", st)
	}
	var list struct{ Keys []map[string]any }
	_ = json.Unmarshal(raw, &list)
	if len(list.Keys) != 2 {
		t.Fatalf("keys: %s", raw)
	}
	for _, key := range list.Keys {
		fields := make([]string, 0, len(key))
		for f := range key {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		if strings.Join(fields, ",") != "createdAt,keyId,name,prefix,status" {
			t.Fatalf("list fields %v", fields)
		}
	}
	// Secrets are encrypted at rest, keys hashed.
	var row identity.APIKey
	if err := e.store.DB().Raw("SELECT * FROM api_keys WHERE id = ?", tn.KeyID).Scan(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.SecretEnc == "" || strings.Contains(row.SecretEnc, tn.Secret) || strings.Contains(row.SecretEnc, strings.TrimPrefix(tn.Secret, "whsec_")) ||
		row.KeyHash != auth.SHA256Hex(tn.Key) {
		t.Fatalf("stored key row not protected")
	}
	// Cross-tenant revoke is a 404 like a missing key; own revoke is idempotent.
	var a ack
	if st, _ := e.do(t, "DELETE", "/v1/api-keys/"+tn.KeyID, other.Token, nil, &a); st != 404 || a.Error != "not_found" {
		t.Fatalf("cross-tenant revoke: %d %+v", st, a)
	}
	if st, _ := e.do(t, "DELETE", "/v1/api-keys/key_missing", tn.Token, nil, nil); st != 404 {
		t.Fatalf("missing revoke: %d", st)
	}
	for range 2 {
		var r struct{ KeyID, Status string }
		if st, _ := e.do(t, "DELETE", "/v1/api-keys/"+tn.KeyID, tn.Token, nil, &r); st != 200 || r.Status != "revoked" || r.KeyID != tn.KeyID {
			t.Fatalf("revoke: %d %+v", st, r)
		}
	}
	if st, _ := send(t, e.signed(t, tn, alertBody("after-revoke", "x")), nil); st != 401 {
		t.Fatalf("revoked key accepted: %d", st)
	}
	if st, _ := e.do(t, "GET", "/v1/api-keys", "", nil, nil); st != 401 {
		t.Fatalf("unauthenticated list: %d", st)
	}
}

// fixtureAnswers is what each fixture of providers/testdata must get from the
// endpoint when posted to a fresh tenant, signed the way its provider signs:
// the HTTP status and the status field of the body. The values follow each
// tool's documented meaning of the payload (docs/providers.md), worked out by
// hand: a firing alert opens an incident (triaging), a resolved or
// acknowledgement-only notification has nothing to act on in a fresh tenant
// (ignored), a payload missing what identifies the alert is refused, and an SNS
// subscription is confirmed.
var fixtureAnswers = map[string]struct {
	status int
	field  string
}{
	"alertmanager/empty_alerts":      {400, ""},
	"alertmanager/firing":            {202, models.StatusTriaging},
	"alertmanager/group_mixed":       {202, models.StatusTriaging},
	"alertmanager/no_title":          {400, ""},
	"azure/fired":                    {202, models.StatusTriaging},
	"azure/legacy_schema":            {400, ""},
	"azure/resolved":                 {202, service.IngestIgnored},
	"custom/bad_severity":            {400, ""},
	"custom/firing":                  {202, models.StatusTriaging},
	"custom/minimal":                 {202, models.StatusTriaging},
	"custom/missing_description":     {400, ""},
	"custom/resolved":                {202, service.IngestIgnored},
	"datadog/firing":                 {202, models.StatusTriaging},
	"datadog/missing_id":             {400, ""},
	"datadog/numeric_id":             {202, models.StatusTriaging},
	"datadog/recovered":              {202, service.IngestIgnored},
	"datadog/spec_shape":             {202, models.StatusTriaging},
	"datadog/with_date":              {202, models.StatusTriaging},
	"gcp/closed":                     {202, service.IngestIgnored},
	"gcp/missing_incident":           {400, ""},
	"gcp/open":                       {202, models.StatusTriaging},
	"grafana/firing":                 {202, models.StatusTriaging},
	"grafana/missing_fingerprint":    {400, ""},
	"grafana/resolved":               {202, service.IngestIgnored},
	"newrelic/acknowledged":          {202, service.IngestIgnored},
	"newrelic/activated":             {202, models.StatusTriaging},
	"newrelic/closed":                {202, service.IngestIgnored},
	"newrelic/missing_id":            {400, ""},
	"opsgenie/acknowledge":           {202, service.IngestIgnored},
	"opsgenie/close":                 {202, service.IngestIgnored},
	"opsgenie/create":                {202, models.StatusTriaging},
	"opsgenie/missing_alert":         {400, ""},
	"pagerduty/acknowledged":         {202, service.IngestIgnored},
	"pagerduty/ping":                 {202, service.IngestIgnored},
	"pagerduty/reopened_no_priority": {202, models.StatusTriaging},
	"pagerduty/resolved":             {202, service.IngestIgnored},
	"pagerduty/service_updated":      {202, service.IngestIgnored},
	"pagerduty/triggered":            {202, models.StatusTriaging},
	"sentry/event_alert":             {202, models.StatusTriaging},
	"sentry/issue_created":           {202, service.IngestIgnored},
	"sentry/issue_resolved":          {202, service.IngestIgnored},
	"sentry/metric_critical":         {202, models.StatusTriaging},
	"sentry/metric_resolved":         {202, service.IngestIgnored},
	"sns/alarm":                      {202, models.StatusTriaging},
	"sns/confirmation_evil_host":     {400, ""},
	"sns/metric_math_insufficient":   {202, models.StatusTriaging},
	"sns/ok":                         {202, service.IngestIgnored},
	"sns/plain":                      {202, models.StatusTriaging},
	"sns/raw":                        {401, ""}, // raw delivery carries no SNS signature to verify
	"sns/subscription_confirmation":  {200, service.IngestConfirmed},
	"sns/unsubscribe":                {202, service.IngestIgnored},
}

// TestWebhookProviderFixtures sends every fixture of providers/testdata through the
// HTTP endpoint, signed the way its provider signs, each to a fresh tenant, and
// checks the answer against fixtureAnswers. A fixture without an answer fails,
// so a new fixture cannot slip in unchecked.
func TestWebhookProviderFixtures(t *testing.T) {
	e := newHookEnv(t, 100)
	files, err := filepath.Glob(filepath.Join("..", "providers", "testdata", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		key := name + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(key, func(t *testing.T) {
			seen[name] = true
			want, ok := fixtureAnswers[key]
			if !ok {
				t.Fatalf("no expected answer for fixture %s: add one to fixtureAnswers", key)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tn := e.tenant(t)
			body := raw
			if name == "sns" {
				body = e.sns.resign(t, raw)
				// The tenant subscribed to the fixture's topic earlier; only
				// confirmed topics may notify it.
				var env struct{ TopicArn string }
				if json.Unmarshal(raw, &env) == nil && env.TopicArn != "" {
					if err := e.store.AllowSNSTopic(context.Background(), &models.SNSTopic{TenantID: tn.ID, TopicArn: env.TopicArn,
						APIKeyID: tn.KeyID, ConfirmedAt: time.Now()}); err != nil {
						t.Fatal(err)
					}
				}
			}
			req := e.hook(t, tn.ID, name, body)
			req.URL.RawQuery = url.Values{"apiKey": {tn.Key}}.Encode()
			sig := providers.Sign([]byte(tn.Secret), body, "")
			req.Header.Set(providers.HeaderSignature, sig)
			req.Header.Set(providers.HeaderPagerDutySignature, "v1="+sig)
			req.Header.Set(providers.HeaderSentrySignature, sig)
			var a ack
			st, got := send(t, req, &a)
			if st != want.status {
				t.Fatalf("status %d (%s), want %d", st, got, want.status)
			}
			if a.Status != want.field {
				t.Fatalf("status field %q (%s), want %q", a.Status, got, want.field)
			}
			switch {
			case want.status >= 400 && a.Error == "":
				t.Fatalf("%d without an error code: %s", st, got)
			case want.field == models.StatusTriaging:
				inc, err := e.store.GetIncident(context.Background(), tn.ID, a.IncidentID)
				if err != nil || inc.Source != name {
					t.Fatalf("incident %s: %v %+v", a.IncidentID, err, inc)
				}
			default:
				if n := e.countIncidents(t, tn.ID); n != 0 {
					t.Fatalf("%d incidents from a delivery answered %d %q", n, st, a.Status)
				}
			}
		})
	}
	if len(seen) != len(providers.Names()) {
		t.Fatalf("fixtures cover %d providers, want %d", len(seen), len(providers.Names()))
	}
	if e.confirms.Load() != 1 {
		t.Fatalf("%d SNS subscriptions confirmed, want the one confirmation fixture", e.confirms.Load())
	}
}

// snsSigner plays AWS: a TLS server serving the signing certificate and answering
// subscription confirmations, and an RSA key that signs envelopes.
type snsSigner struct {
	srv  *httptest.Server
	host string
	key  *rsa.PrivateKey
}

var (
	snsKeyOnce sync.Once
	snsKey     *rsa.PrivateKey
)

func newSNSSigner(tb testing.TB, confirms *atomic.Int32) *snsSigner {
	snsKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		snsKey = k
	})
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.us-east-1.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &snsKey.PublicKey, snsKey)
	if err != nil {
		tb.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	s := &snsSigner{key: snsKey}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("Action") == "ConfirmSubscription" {
			confirms.Add(1)
			return
		}
		_, _ = w.Write(certPEM)
	}))
	tb.Cleanup(s.srv.Close)
	u, _ := url.Parse(s.srv.URL)
	s.host = u.Host
	return s
}

// resign points a fixture's certificate and SNS URLs at the fake AWS, dates it
// now (as SNS does when it sends) and signs it (SignatureVersion 2). Envelopes
// without a Type are left as they are.
func (s *snsSigner) resign(tb testing.TB, raw []byte) []byte {
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		tb.Fatal(err)
	}
	if _, ok := env["Timestamp"]; ok {
		env["Timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		raw, _ = json.Marshal(env)
	}
	return s.resignAsIs(tb, raw)
}

// resignAsIs is resign keeping the envelope's Timestamp.
func (s *snsSigner) resignAsIs(tb testing.TB, raw []byte) []byte {
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		tb.Fatal(err)
	}
	if _, ok := env["Type"]; !ok {
		return raw
	}
	for _, k := range []string{"SigningCertURL", "SubscribeURL", "UnsubscribeURL"} {
		if v, ok := env[k].(string); ok {
			env[k] = strings.Replace(v, "https://sns.us-east-1.amazonaws.com", "https://"+s.host, 1)
		}
	}
	env["SignatureVersion"] = "2"
	keys := []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	if env["Type"] != "Notification" {
		keys = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var sb strings.Builder
	for _, k := range keys {
		if v, ok := env[k].(string); ok {
			sb.WriteString(k + "\n" + v + "\n")
		}
	}
	d := sha256.Sum256([]byte(sb.String()))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, d[:])
	if err != nil {
		tb.Fatal(err)
	}
	env["Signature"] = base64.StdEncoding.EncodeToString(sig)
	out, _ := json.Marshal(env)
	return out
}
