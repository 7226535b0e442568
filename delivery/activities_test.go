package delivery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

const sealKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// verifyStandardWebhook is what a receiver does (Standard Webhooks v1), written
// independently of the sender: decode the whsec_ key, HMAC id.timestamp.body,
// compare in constant time against every v1 signature in the header, and refuse
// timestamps more than five minutes off.
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return false
	}
	id, tsRaw := h.Get("webhook-id"), h.Get("webhook-timestamp")
	ts, err := strconv.ParseInt(tsRaw, 10, 64)
	if id == "" || err != nil {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + tsRaw + "." + string(body)))
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, raw, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(raw)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

type received struct {
	Header http.Header
	Body   []byte
}

// receiver is an HTTP endpoint answering with respond(n) for its n-th request
// (from 1) and keeping every request.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter)) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, received{Header: req.Header.Clone(), Body: body})
		n := len(r.reqs)
		r.mu.Unlock()
		respond(n, w)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.reqs...)
}

type fixture struct {
	acts     *Activities
	store    *models.Store
	endpoint WebhookEndpoint
	secret   string
	event    models.OutboxEvent
	delivery string
}

// newFixture records an endpoint for url, an investigation.completed event and
// fans it out, as the relay does.
func newFixture(t *testing.T, url string, timeout time.Duration) *fixture {
	ctx := context.Background()
	store := testdb.Open(t)
	sealer, err := auth.NewSealer(sealKey)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: store, secret: auth.NewWebhookSecret(), acts: &Activities{Store: NewStore(store.DB()), Sealer: sealer,
		Egress: egress.NewClient(egress.Options{AllowPrivate: true, Timeout: timeout})}}
	f.endpoint = WebhookEndpoint{ID: "whe_1", TenantID: "ten_1", URL: url, Status: EndpointActive,
		Events: []string{models.EventInvestigationCompleted}, CreatedAt: time.Now().UTC()}
	f.endpoint.SecretEnc = sealer.Encrypt([]byte(f.secret), []byte(f.endpoint.ID))
	if err := NewStore(store.DB()).CreateWebhookEndpoint(ctx, &f.endpoint); err != nil {
		t.Fatal(err)
	}
	f.event = models.OutboxEvent{ID: models.EventID("inv_1", models.EventInvestigationCompleted), TenantID: "ten_1",
		Type: models.EventInvestigationCompleted, Payload: `{"incidentId":"inc_1","rootCause":"pool exhausted"}`,
		CreatedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	if err := store.DB().Create(&f.event).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := NewStore(store.DB()).FanOutEvents(ctx, time.Now().UTC(), 10); err != nil || n != 1 {
		t.Fatalf("fan out: %d, %v", n, err)
	}
	f.delivery = DeliveryID(f.event.ID, f.endpoint.ID)
	return f
}

func (f *fixture) deliver(t *testing.T, attempt int, final bool) DeliverOutput {
	out, err := f.acts.DeliverEvent(context.Background(), DeliverInput{DeliveryID: f.delivery, Attempt: attempt, Final: final})
	if err != nil {
		t.Fatalf("deliver attempt %d: %v", attempt, err)
	}
	return out
}

func (f *fixture) attempts(t *testing.T) []DeliveryAttempt {
	atts, err := NewStore(f.store.DB()).DeliveryAttempts(context.Background(), "ten_1", f.endpoint.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	return atts
}

func TestDeliverEventIsSignedAsStandardWebhooks(t *testing.T) {
	rcv := newReceiver(t, func(int, http.ResponseWriter) {})
	f := newFixture(t, rcv.URL+"/hook", 0)
	if out := f.deliver(t, 1, false); out.Outcome != OutcomeSucceeded || out.StatusCode != 200 {
		t.Fatalf("outcome %+v", out)
	}
	reqs := rcv.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	r := reqs[0]
	if !verifyStandardWebhook(f.secret, r.Header, r.Body, time.Now()) {
		t.Fatalf("signature does not verify: %v", r.Header)
	}
	if verifyStandardWebhook(f.secret, r.Header, append(r.Body, ' '), time.Now()) {
		t.Fatal("a tampered body verified")
	}
	if verifyStandardWebhook(f.secret, r.Header, r.Body, time.Now().Add(6*time.Minute)) {
		t.Fatal("a stale timestamp verified")
	}
	if r.Header.Get("webhook-id") != f.event.ID {
		t.Errorf("webhook-id %q, want the event id %q", r.Header.Get("webhook-id"), f.event.ID)
	}
	var env struct {
		ID, Type, TenantID string
		CreatedAt          time.Time
		Data               map[string]any
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.ID != f.event.ID || env.Type != models.EventInvestigationCompleted || env.TenantID != "ten_1" ||
		!env.CreatedAt.Equal(f.event.CreatedAt) || env.Data["rootCause"] != "pool exhausted" {
		t.Errorf("envelope %+v", env)
	}
	atts := f.attempts(t)
	if len(atts) != 1 || atts[0].StatusCode != 200 || atts[0].Attempt != 1 || atts[0].Error != "" || atts[0].EventType != models.EventInvestigationCompleted {
		t.Errorf("attempt log %+v", atts)
	}
	// A retried activity for a recorded attempt does not send again.
	if out := f.deliver(t, 1, false); out.Outcome != OutcomeSucceeded || len(rcv.requests()) != 1 {
		t.Errorf("retried recorded attempt: %+v, %d requests", out, len(rcv.requests()))
	}
}

func TestDeliverEventRecordsEveryFailedAttempt(t *testing.T) {
	rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			time.Sleep(700 * time.Millisecond) // longer than the client timeout
		case 3:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	f := newFixture(t, rcv.URL, 300*time.Millisecond)
	if out := f.deliver(t, 1, false); out.Outcome != OutcomeRetry || out.StatusCode != 500 {
		t.Errorf("500: %+v", out)
	}
	if out := f.deliver(t, 2, false); out.Outcome != OutcomeRetry || out.StatusCode != 0 {
		t.Errorf("timeout: %+v", out)
	}
	if out := f.deliver(t, 3, false); out.Outcome != OutcomeRetry || out.RetryAfter != 7*time.Second {
		t.Errorf("429: %+v", out)
	}
	if out := f.deliver(t, 4, true); out.Outcome != OutcomeFailed || out.StatusCode != 400 {
		t.Errorf("final 400: %+v", out)
	}
	atts := f.attempts(t)
	if len(atts) != 4 {
		t.Fatalf("%d attempts recorded, want 4: %+v", len(atts), atts)
	}
	byNum := map[int]DeliveryAttempt{}
	for _, a := range atts {
		byNum[a.Attempt] = a
	}
	if byNum[1].StatusCode != 500 || byNum[2].StatusCode != 0 || byNum[2].Error == "" || byNum[2].LatencyMs < 250 ||
		byNum[3].StatusCode != 429 || byNum[4].StatusCode != 400 {
		t.Errorf("attempt log %+v", atts)
	}
	var d EventDelivery
	if err := f.store.DB().Where("id = ?", f.delivery).Take(&d).Error; err != nil {
		t.Fatal(err)
	}
	if d.Status != StatusFailed || d.Attempts != 4 || d.CompletedAt == nil {
		t.Errorf("delivery %+v", d)
	}
	for _, r := range rcv.requests() {
		if r.Header.Get("webhook-id") != f.event.ID || !verifyStandardWebhook(f.secret, r.Header, r.Body, time.Now()) {
			t.Errorf("retry not signed with the same id: %v", r.Header)
		}
	}
}

func TestDeliverEventGoneDisablesEndpoint(t *testing.T) {
	rcv := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	f := newFixture(t, rcv.URL, 0)
	if out := f.deliver(t, 1, false); out.Outcome != OutcomeGone {
		t.Fatalf("410: %+v", out)
	}
	ep, err := NewStore(f.store.DB()).GetWebhookEndpoint(context.Background(), "ten_1", f.endpoint.ID)
	if err != nil || ep.Status != EndpointDisabled || !strings.Contains(ep.DisabledReason, "410") {
		t.Fatalf("endpoint after 410: %+v, %v", ep, err)
	}
	// A retried activity of the same attempt answers from the record and
	// neither sends nor records again.
	if out := f.deliver(t, 1, false); out.Outcome != OutcomeGone || len(rcv.requests()) != 1 {
		t.Fatalf("retried 410 attempt: %+v, %d requests", out, len(rcv.requests()))
	}
	if atts := f.attempts(t); len(atts) != 1 || atts[0].StatusCode != 410 {
		t.Errorf("attempt log %+v", atts)
	}
	// A disabled endpoint gets no new deliveries.
	evt := models.OutboxEvent{ID: "evt_2", TenantID: "ten_1", Type: models.EventInvestigationCompleted, Payload: "{}", CreatedAt: time.Now().UTC()}
	if err := f.store.DB().Create(&evt).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := NewStore(f.store.DB()).FanOutEvents(context.Background(), time.Now().UTC(), 10); err != nil || n != 1 {
		t.Fatalf("fan out of evt_2: %d, %v; want the event dispatched", n, err)
	}
	var n int64
	if err := f.store.DB().Model(&EventDelivery{}).Where("event_id = ?", "evt_2").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("disabled endpoint got %d new deliveries", n)
	}
}

func TestFanOutIsIdempotentAndFiltersSubscriptions(t *testing.T) {
	f := newFixture(t, "https://example.com/hook", 0)
	ctx := context.Background()
	other := WebhookEndpoint{ID: "whe_2", TenantID: "ten_1", URL: "https://example.com/other", Status: EndpointActive,
		Events: []string{models.EventRemediationFailed}, SecretEnc: "x", CreatedAt: time.Now().UTC()}
	if err := NewStore(f.store.DB()).CreateWebhookEndpoint(ctx, &other); err != nil {
		t.Fatal(err)
	}
	// Redo the fan-out as a relay that crashed before marking the event would.
	if err := f.store.DB().Model(&models.OutboxEvent{}).Where("id = ?", f.event.ID).Update("delivered_at", nil).Error; err != nil {
		t.Fatal(err)
	}
	// And an event of the kind only whe_2 subscribes to, so the filter is seen
	// to let a subscribed kind through as well as to hold others back.
	failed := models.OutboxEvent{ID: "evt_failed", TenantID: "ten_1", Type: models.EventRemediationFailed, Payload: "{}", CreatedAt: time.Now().UTC()}
	if err := f.store.DB().Create(&failed).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := NewStore(f.store.DB()).FanOutEvents(ctx, time.Now().UTC(), 10); err != nil || n != 2 {
		t.Fatalf("fan out: %d, %v; want both events dispatched", n, err)
	}
	var ds []EventDelivery
	if err := f.store.DB().Order("endpoint_id").Find(&ds).Error; err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].EventID != f.event.ID || ds[0].EndpointID != "whe_1" ||
		ds[1].EventID != "evt_failed" || ds[1].EndpointID != "whe_2" {
		t.Errorf("deliveries %+v, want evt_failed→whe_2 and one %s→whe_1", ds, f.event.ID)
	}
}

// TestFanOutGroupsEndpointsByTenant shows one sweep page with events of
// several tenants delivers each event to its own tenant's endpoints only.
func TestFanOutGroupsEndpointsByTenant(t *testing.T) {
	f := newFixture(t, "https://example.com/hook", 0)
	ctx := context.Background()
	for _, ep := range []WebhookEndpoint{
		{ID: "whe_t2", TenantID: "ten_2", URL: "https://example.com/t2", Status: EndpointActive,
			Events: []string{models.EventInvestigationCompleted}, SecretEnc: "x"},
		{ID: "whe_t3", TenantID: "ten_3", URL: "https://example.com/t3", Status: EndpointDisabled,
			Events: []string{models.EventInvestigationCompleted}, SecretEnc: "x"},
	} {
		if err := NewStore(f.store.DB()).CreateWebhookEndpoint(ctx, &ep); err != nil {
			t.Fatal(err)
		}
	}
	for _, tn := range []string{"ten_1", "ten_2", "ten_3"} {
		evt := models.OutboxEvent{ID: "evt_" + tn, TenantID: tn, Type: models.EventInvestigationCompleted, Payload: "{}", CreatedAt: time.Now().UTC()}
		if err := f.store.DB().Create(&evt).Error; err != nil {
			t.Fatal(err)
		}
	}
	if n, err := NewStore(f.store.DB()).FanOutEvents(ctx, time.Now().UTC(), 10); err != nil || n != 3 {
		t.Fatalf("fan out: %d, %v", n, err)
	}
	var ds []EventDelivery
	if err := f.store.DB().Where("event_id LIKE ?", "evt_ten_%").Order("event_id").Find(&ds).Error; err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].EndpointID != "whe_1" || ds[0].EventID != "evt_ten_1" || ds[1].EndpointID != "whe_t2" || ds[1].EventID != "evt_ten_2" {
		t.Fatalf("deliveries %+v, want evt_ten_1→whe_1 and evt_ten_2→whe_t2", ds)
	}
	var undelivered int64
	if err := f.store.DB().Model(&models.OutboxEvent{}).Where("delivered_at IS NULL").Count(&undelivered).Error; err != nil {
		t.Fatal(err)
	}
	if undelivered != 0 {
		t.Fatalf("%d events left undispatched", undelivered)
	}
}
