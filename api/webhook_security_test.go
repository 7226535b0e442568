package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// sharedConfig is apiConfig with the test Redis, so several API servers built
// from it share limits and caches the way replicas do.
func sharedConfig(t *testing.T) (*apiServer, func() *apiServer) {
	cfg := apiConfig(t)
	cfg.RedisURL = os.Getenv("CAUSEWAY_TEST_REDIS_URL")
	first := startAPI(t, cfg)
	return first, func() *apiServer {
		if cfg.RedisURL == "" {
			return first // one process: the in-memory backend is what replicas would not share
		}
		c := *cfg
		return startAPI(t, &c)
	}
}

type webhookKey struct{ tenant, key, secret string }

func (s *apiServer) webhookKeyOf(t *testing.T, owner tokens) webhookKey {
	t.Helper()
	var k struct{ Key, WebhookSecret string }
	if st, _ := s.do(t, "POST", "/v1/api-keys", owner.AccessToken, map[string]string{"name": "alerts"}, &k); st != http.StatusCreated {
		t.Fatalf("create key: %d", st)
	}
	return webhookKey{tenant: owner.TenantID, key: k.Key, secret: k.WebhookSecret}
}

// deliver posts a custom alert signed with ts (unix seconds, or "" for none).
func (s *apiServer) deliver(t *testing.T, k webhookKey, body []byte, ts string, clientIP string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/v1/webhooks/"+k.tenant+"/custom", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", k.key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(k.secret), body, ts))
	if ts != "" {
		req.Header.Set(providers.HeaderTimestamp, ts)
	}
	if clientIP != "" {
		req.Header.Set("X-Forwarded-For", clientIP)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func alert(title string) []byte {
	b, _ := json.Marshal(map[string]any{"title": title, "description": "checkout-api 5xx above 5%", "service": "checkout"})
	return b
}

// TestSignedWebhookReplayIsRefused shows a delivery signed with a timestamp is
// accepted once within the 300 s window: the same signed request again, to
// this or another API replica, is refused, while a fresh signature of the same
// body is accepted.
func TestSignedWebhookReplayIsRefused(t *testing.T) {
	a, replica := sharedConfig(t)
	b := replica()
	k := a.webhookKeyOf(t, a.signup(t, "owner@example.com"))
	body := alert("Checkout 5xx")
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	if st := a.deliver(t, k, body, ts, ""); st != http.StatusAccepted {
		t.Fatalf("first delivery: %d", st)
	}
	if st := b.deliver(t, k, body, ts, ""); st != http.StatusUnauthorized {
		t.Fatalf("replayed delivery: %d, want 401", st)
	}
	if st := a.deliver(t, k, body, ts, ""); st != http.StatusUnauthorized {
		t.Fatalf("replay to the same replica: %d, want 401", st)
	}
	later := strconv.FormatInt(time.Now().Unix()+1, 10)
	if st := b.deliver(t, k, body, later, ""); st != http.StatusAccepted {
		t.Fatalf("newly signed delivery: %d", st)
	}
	var n int64
	a.app.Store.DB().Model(&models.Incident{}).Where("tenant_id = ?", k.tenant).Count(&n)
	if n != 2 {
		t.Fatalf("%d incidents, want 2", n)
	}
}

// TestUnknownWebhookKeysAreCachedAcrossReplicas shows an unknown key is
// remembered for a short while by every replica: a flood of one bogus key
// costs one lookup, not one per request.
func TestUnknownWebhookKeysAreCachedAcrossReplicas(t *testing.T) {
	a, replica := sharedConfig(t)
	b := replica()
	owner := a.signup(t, "owner@example.com")
	plain := auth.NewAPIKey()
	k := webhookKey{tenant: owner.TenantID, key: plain, secret: "0123456789abcdef0123456789abcdef"}
	if st := a.deliver(t, k, alert("x"), "", ""); st != http.StatusUnauthorized {
		t.Fatalf("unknown key: %d", st)
	}
	// The key now exists (as if the lookup had raced its creation): within the
	// cache's lifetime every replica still answers from the cache.
	sealer, err := auth.NewSealer(a.cfg.SecretsKey)
	if err != nil {
		t.Fatal(err)
	}
	row := identity.APIKey{ID: models.NewID("key"), TenantID: owner.TenantID, Name: "late", Prefix: auth.KeyDisplayPrefix(plain),
		KeyHash: auth.SHA256Hex(plain), Status: identity.APIKeyActive, CreatedAt: time.Now().UTC()}
	row.SecretEnc = sealer.Encrypt([]byte(k.secret), []byte(row.ID))
	if err := identity.NewStore(a.app.Store.DB()).CreateAPIKey(context.Background(), &row); err != nil {
		t.Fatal(err)
	}
	if st := b.deliver(t, k, alert("x"), "", ""); st != http.StatusUnauthorized {
		t.Fatalf("cached unknown key on another replica: %d, want 401", st)
	}
}

// TestWebhookRateLimitBeforeKeyLookup shows deliveries are limited per client
// address before any key is looked up, so guessing keys cannot make the
// database work without bound; a valid key from the same address waits too.
func TestWebhookRateLimitBeforeKeyLookup(t *testing.T) {
	cfg := apiConfig(t)
	cfg.WebhookIPRateLimitPerMinute = 3
	cfg.TrustedProxies = "127.0.0.1"
	s := startAPI(t, cfg)
	k := s.webhookKeyOf(t, s.signup(t, "owner@example.com"))
	bogus := webhookKey{tenant: k.tenant, key: auth.NewAPIKey(), secret: k.secret}
	for i := 0; i < 3; i++ {
		if st := s.deliver(t, bogus, alert("x"), "", "198.51.100.7"); st != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, st)
		}
	}
	if st := s.deliver(t, k, alert("x"), "", "198.51.100.7"); st != http.StatusTooManyRequests {
		t.Fatalf("valid key from the limited address: %d, want 429", st)
	}
	if st := s.deliver(t, k, alert("x"), "", "198.51.100.8"); st != http.StatusAccepted {
		t.Fatalf("valid key from another address: %d", st)
	}
}

// TestAPIKeysPerTenantAreCapped shows a tenant holds a bounded number of
// active keys; revoking one makes room.
func TestAPIKeysPerTenantAreCapped(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@example.com")
	var first string
	for i := 0; i < 50; i++ {
		var k struct{ KeyID string }
		if st, _ := s.do(t, "POST", "/v1/api-keys", owner.AccessToken, map[string]string{"name": "k" + strconv.Itoa(i)}, &k); st != http.StatusCreated {
			t.Fatalf("key %d: %d", i+1, st)
		}
		if first == "" {
			first = k.KeyID
		}
	}
	var body errorBody
	if st, _ := s.do(t, "POST", "/v1/api-keys", owner.AccessToken, map[string]string{"name": "one more"}, &body); st != http.StatusBadRequest || body.Error != "validation_error" || !strings.Contains(body.Message, "50") {
		t.Fatalf("51st key: %d %+v", st, body)
	}
	if st, _ := s.do(t, "DELETE", "/v1/api-keys/"+first, owner.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	if st, _ := s.do(t, "POST", "/v1/api-keys", owner.AccessToken, map[string]string{"name": "replacement"}, nil); st != http.StatusCreated {
		t.Fatalf("after revoking one: %d", st)
	}
}

// TestSNSTopicsAreLearnedAndTimestampsChecked shows an SNS notification is
// accepted only from a topic whose subscription this tenant confirmed (a
// genuinely signed message from any topic can be replayed to any tenant's
// endpoint), and only while its signed Timestamp is within SNS's retry horizon.
func TestSNSTopicsAreLearnedAndTimestampsChecked(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	read := func(name string) map[string]any {
		raw, err := os.ReadFile(filepath.Join("..", "providers", "testdata", "sns", name))
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		return env
	}
	post := func(env map[string]any, at time.Time) int {
		env["Timestamp"] = at.UTC().Format("2006-01-02T15:04:05.000Z")
		raw, _ := json.Marshal(env)
		req := e.hook(t, tn.ID, "sns", e.sns.resignAsIs(t, raw))
		req.Header.Set("X-API-Key", tn.Key)
		st, _ := send(t, req, nil)
		return st
	}
	alarm := read("alarm.json")
	topic := alarm["TopicArn"].(string)
	if st := post(alarm, time.Now()); st != http.StatusUnauthorized {
		t.Fatalf("notification before any confirmation: %d, want 401", st)
	}
	conf := read("subscription_confirmation.json")
	conf["TopicArn"] = topic
	if st := post(conf, time.Now()); st != http.StatusOK {
		t.Fatalf("confirmation: %d", st)
	}
	if st := post(alarm, time.Now().Add(-2*time.Hour)); st != http.StatusUnauthorized {
		t.Fatalf("two-hour-old notification: %d, want 401", st)
	}
	if st := post(alarm, time.Now()); st != http.StatusAccepted {
		t.Fatalf("notification from the confirmed topic: %d", st)
	}
	other := read("plain.json")
	other["TopicArn"] = topic + "-other"
	if st := post(other, time.Now()); st != http.StatusUnauthorized {
		t.Fatalf("notification from another topic: %d, want 401", st)
	}
	other2 := e.tenant(t)
	req := e.hook(t, other2.ID, "sns", func() []byte {
		alarm["Timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		raw, _ := json.Marshal(alarm)
		return e.sns.resignAsIs(t, raw)
	}())
	req.Header.Set("X-API-Key", other2.Key)
	if st, _ := send(t, req, nil); st != http.StatusUnauthorized {
		t.Fatalf("topic confirmed by another tenant: %d, want 401", st)
	}
}
