package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/causeway/causeway/providers"
)

// apiKey creates an API key for the token's tenant.
func (s *apiServer) apiKey(t *testing.T, token, name string) (key, secret string) {
	t.Helper()
	var k struct{ Key, WebhookSecret string }
	if st, _ := s.do(t, "POST", "/v1/api-keys", token, map[string]string{"name": name}, &k); st != http.StatusCreated {
		t.Fatalf("create key: %d", st)
	}
	return k.Key, k.WebhookSecret
}

// hook posts one signed custom alert with key.
func (s *apiServer) hook(t *testing.T, tenantID, key, secret, alertID string) (int, http.Header, errorBody) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"title": "disk full", "description": "db-1 /var at 97%", "sourceAlertId": alertID})
	req, _ := http.NewRequest("POST", s.URL+"/v1/webhooks/"+tenantID+"/custom", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(secret), body, ""))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e errorBody
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, resp.Header, e
}

// TestWebhookRateLimitPerTenant: webhooks are limited per tenant, all of its
// keys together, so a tenant cannot widen its budget by making keys, and one
// tenant's noise spends neither another tenant's budget nor its own API
// budget. The limit (3 a minute) refills every 20 s, far beyond the test.
func TestWebhookRateLimitPerTenant(t *testing.T) {
	cfg := apiConfig(t)
	cfg.RateLimitPerMinute = 3
	s := startAPI(t, cfg)
	owner := s.signup(t, "owner@example.com")
	other := s.signup(t, "other@example.com")
	noisy, noisySecret := s.apiKey(t, owner.AccessToken, "noisy")
	quiet, quietSecret := s.apiKey(t, owner.AccessToken, "quiet")
	foreign, foreignSecret := s.apiKey(t, other.AccessToken, "foreign")

	for i := range 3 {
		if st, h, e := s.hook(t, owner.TenantID, noisy, noisySecret, fmt.Sprint("noisy-", i)); st != http.StatusAccepted || h.Get("X-RateLimit-Limit") != "3" {
			t.Fatalf("noisy %d: %d %+v %v", i, st, e, h)
		}
	}
	st, h, e := s.hook(t, owner.TenantID, noisy, noisySecret, "noisy-3")
	if st != http.StatusTooManyRequests || e.Error != "rate_limited" || h.Get("Retry-After") == "" || h.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("noisy over its limit: %d %+v %v", st, e, h)
	}
	if st, _, e := s.hook(t, owner.TenantID, quiet, quietSecret, "quiet-0"); st != http.StatusTooManyRequests {
		t.Fatalf("another key of the same tenant widened its budget: %d %+v", st, e)
	}
	// The tenant's own API calls have their own bucket: two key creations spent
	// two of its three, the webhooks none.
	if st, _ := s.do(t, "GET", "/v1/users", owner.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("tenant API after its webhooks were limited: %d", st)
	}
	if st, _, e := s.hook(t, other.TenantID, foreign, foreignSecret, "foreign-0"); st != http.StatusAccepted {
		t.Fatalf("another tenant's key: %d %+v", st, e)
	}
	// A request with a key that is not valid is refused before the tenant's
	// limit, so it spends nothing of the tenant's budget.
	for range 3 {
		if st, _, _ := s.hook(t, other.TenantID, "cw_live_not-a-real-key", foreignSecret, "unknown-key"); st != http.StatusUnauthorized {
			t.Fatalf("unknown key: %d", st)
		}
	}
	if st, _, e := s.hook(t, other.TenantID, foreign, foreignSecret, "foreign-1"); st != http.StatusAccepted {
		t.Fatalf("the other tenant after requests with unknown keys: %d %+v", st, e)
	}
	// A valid key with a wrong signature is refused. It is counted: the limiter
	// runs before the body is read, so a flood costs no more than a key check
	// (docs/security.md).
	if st, _, _ := s.hook(t, other.TenantID, foreign, "whsec_wrong", "forged"); st != http.StatusUnauthorized {
		t.Fatalf("forged signature: %d", st)
	}
	if st, _, e := s.hook(t, other.TenantID, foreign, foreignSecret, "foreign-2"); st != http.StatusTooManyRequests || e.Error != "rate_limited" {
		t.Fatalf("the other tenant after its third request: %d %+v, want rate_limited", st, e)
	}
}

// TestSharedSenderDoesNotHoldBackOtherTenants: two tenants' alerts come from
// one address, as from a hosted monitoring service. One tenant's storm is
// limited by its own budget and spends nothing of the address's, which only
// refused keys spend; the other tenant's alerts from that address go through.
func TestSharedSenderDoesNotHoldBackOtherTenants(t *testing.T) {
	cfg := apiConfig(t)
	cfg.RateLimitPerMinute, cfg.WebhookIPRateLimitPerMinute = 5, 3
	cfg.TrustedProxies = "127.0.0.1"
	s := startAPI(t, cfg)
	storm, calm := s.webhookKeyOf(t, s.signup(t, "storm@example.com")), s.webhookKeyOf(t, s.signup(t, "calm@example.com"))
	const sender = "203.0.113.9"
	got := map[int]int{}
	for i := range 12 {
		got[s.deliver(t, storm, alert(fmt.Sprint("storm ", i)), "", sender)]++
	}
	if got[http.StatusAccepted] != 5 || got[http.StatusTooManyRequests] != 7 {
		t.Fatalf("the storming tenant's 12 deliveries: %v, want 5 accepted and 7 limited", got)
	}
	for i := range 3 {
		if st := s.deliver(t, calm, alert(fmt.Sprint("calm ", i)), "", sender); st != http.StatusAccepted {
			t.Fatalf("the calm tenant's alert %d from the shared sender: %d", i+1, st)
		}
	}
}

// TestTrustedProxyForwardedFor: behind a configured proxy the client IP is the
// rightmost address the proxy did not add itself, so clients behind one proxy
// get their own sign-in budgets, and a client that prepends a forged address
// still pays from its own.
func TestTrustedProxyForwardedFor(t *testing.T) {
	cfg := apiConfig(t)
	cfg.AuthRateLimitPerMinute = 2
	cfg.TrustedProxies = "127.0.0.1/32"
	s := startAPI(t, cfg)
	login := func(forwardedFor string) (int, errorBody) {
		st, _, body := s.failedLogin(t, forwardedFor)
		return st, body
	}
	for i := range 2 {
		if st, _ := login("203.0.113.7"); st != http.StatusUnauthorized {
			t.Fatalf("client A login %d: %d", i+1, st)
		}
	}
	if st, body := login("203.0.113.7"); st != http.StatusTooManyRequests || body.Error != "rate_limited" {
		t.Fatalf("client A over its budget: %d %+v", st, body)
	}
	if st, _ := login("203.0.113.8"); st != http.StatusUnauthorized {
		t.Fatalf("client B behind the same proxy: %d, want its own budget", st)
	}
	if st, body := login("198.51.100.1, 203.0.113.7"); st != http.StatusTooManyRequests {
		t.Fatalf("client A with a forged leading address: %d %+v, want A's spent budget", st, body)
	}
}

// TestUnlimitedQuotaReportsMinusOne: a quota of 0 means unlimited, and the API
// reports what is left of it as -1, never 0 (which would read as "used up").
func TestUnlimitedQuotaReportsMinusOne(t *testing.T) {
	cfg := apiConfig(t)
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 0, 0
	s := startAPI(t, cfg)
	tk := s.signup(t, "owner@example.com")
	for i := range 3 {
		var out struct {
			IncidentID              string `json:"incidentId"`
			EventsRemaining         *int   `json:"eventsRemaining"`
			InvestigationsRemaining *int   `json:"investigationsRemaining"`
		}
		st, _ := s.do(t, "POST", "/v1/incidents/chat", tk.AccessToken, map[string]string{"title": "disk full", "description": "db-1 /var at 97%"}, &out)
		if st != http.StatusCreated || out.EventsRemaining == nil || *out.EventsRemaining != -1 ||
			out.InvestigationsRemaining == nil || *out.InvestigationsRemaining != -1 {
			t.Fatalf("incident %d: %d %+v", i, st, out)
		}
	}

	// A limited quota counts down to 0 and then refuses.
	limited := apiConfig(t)
	limited.QuotaEventsPerMonth = 2
	s2 := startAPI(t, limited)
	tk2 := s2.signup(t, "owner@example.com")
	for _, want := range []int{1, 0} {
		var out struct {
			EventsRemaining int `json:"eventsRemaining"`
		}
		if st, _ := s2.do(t, "POST", "/v1/incidents/chat", tk2.AccessToken, map[string]string{"title": "disk full", "description": "db-1 /var at 97%"}, &out); st != http.StatusCreated || out.EventsRemaining != want {
			t.Fatalf("limited quota: %d, eventsRemaining %d, want %d", st, out.EventsRemaining, want)
		}
	}
	var e errorBody
	if st, _ := s2.do(t, "POST", "/v1/incidents/chat", tk2.AccessToken, map[string]string{"title": "disk full", "description": "db-1 /var at 97%"}, &e); st != http.StatusTooManyRequests {
		t.Fatalf("over quota: %d %+v", st, e)
	}
}

// TestScopedKeysPostOnlyWhereTheyMay: a key made for some routes is refused
// on the others before anything else is read, a key with no routes posts
// anywhere, and a route that does not exist is refused when the key is made.
func TestScopedKeysPostOnlyWhereTheyMay(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@example.com")
	scoped := func(routes ...string) (key, secret string, st int, e errorBody) {
		var k struct {
			Key, WebhookSecret string
			Routes             []string
			Error, Message     string
		}
		st, _ = s.do(t, "POST", "/v1/api-keys", owner.AccessToken, map[string]any{"name": "scoped", "routes": routes}, &k)
		if st == http.StatusCreated && strings.Join(k.Routes, ",") != strings.Join(routes, ",") {
			t.Errorf("created with routes %v, answered %v", routes, k.Routes)
		}
		return k.Key, k.WebhookSecret, st, errorBody{Error: k.Error, Message: k.Message}
	}
	deploysOnly, deploySecret, st, _ := scoped("change", "github")
	if st != http.StatusCreated {
		t.Fatalf("create a deploys-only key: %d", st)
	}
	if st, _, e := s.hook(t, owner.TenantID, deploysOnly, deploySecret, "a-1"); st != http.StatusForbidden || e.Error != "forbidden" || !strings.Contains(e.Message, "change, github") {
		t.Errorf("a deploys-only key opening an incident: %d %+v, want 403 naming its routes", st, e)
	}
	alerts, alertSecret, _, _ := scoped("custom")
	if st, _, e := s.hook(t, owner.TenantID, alerts, alertSecret, "a-2"); st != http.StatusAccepted {
		t.Errorf("a custom-only key on the custom route: %d %+v", st, e)
	}
	req, _ := http.NewRequest("POST", s.URL+"/v1/webhooks/"+owner.TenantID+"/change", strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", alerts)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a custom-only key recording a change: %d, want 403", resp.StatusCode)
	}
	anywhere, anySecret := s.apiKey(t, owner.AccessToken, "all routes")
	if st, _, e := s.hook(t, owner.TenantID, anywhere, anySecret, "a-3"); st != http.StatusAccepted {
		t.Errorf("a key with no routes: %d %+v", st, e)
	}
	if _, _, st, e := scoped("custom", "nagios"); st != http.StatusBadRequest || !strings.Contains(e.Message, "nagios") {
		t.Errorf("a route that does not exist: %d %+v", st, e)
	}
}
