package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"gorm.io/gorm"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/models"
)

// verifySignature is a receiver's Standard Webhooks check, independent of the
// sender's code: HMAC-SHA256 over id.timestamp.body with the decoded whsec_ key,
// constant-time compare, five-minute timestamp tolerance.
func verifySignature(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, terr := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || terr != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if raw, ok := strings.CutPrefix(sig, "v1,"); ok {
			if got, err := base64.StdEncoding.DecodeString(raw); err == nil && hmac.Equal(got, want) {
				return true
			}
		}
	}
	return false
}

// eventReceiver answers 500 to its first failFirst requests (1 unless a test
// changes it) and 2xx afterwards, and counts successful deliveries per
// webhook-id.
type eventReceiver struct {
	*httptest.Server
	secret    string
	failFirst int
	mu        sync.Mutex
	total     int
	ok        map[string]int
	bodies    map[string]map[string]any
	bad       int
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{failFirst: 1, ok: map[string]int{}, bodies: map[string]map[string]any{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.total++
		if !verifySignature(r.secret, req.Header, body) {
			r.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.total <= r.failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		id := req.Header.Get("webhook-id")
		r.ok[id]++
		var env map[string]any
		_ = json.Unmarshal(body, &env)
		r.bodies[id] = env
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// subscribe creates a webhook endpoint for the receiver's URL and kinds, and
// gives the receiver the endpoint's secret to verify signatures with.
func (r *eventReceiver) subscribe(t *testing.T, e *env, token string, kinds ...string) (ep struct{ EndpointID, Secret string }) {
	t.Helper()
	if st := e.call(t, "POST", "/v1/webhook-endpoints", token, map[string]any{"url": r.URL + "/hooks", "events": kinds}, &ep); st != http.StatusCreated {
		t.Fatalf("create endpoint: %d", st)
	}
	r.mu.Lock()
	r.secret = ep.Secret
	r.mu.Unlock()
	return ep
}

// startRelay runs one outbound-event relay for e until the returned stop,
// which may be called more than once, has returned.
func startRelay(e *env) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.App.Relay().Run(ctx, 100*time.Millisecond); close(done) }()
	return sync.OnceFunc(func() { cancel(); <-done })
}

func (r *eventReceiver) delivered(id string) (int, map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok[id], r.bodies[id]
}

// TestEventSurvivesCrashBeforeDelivery records an event in the same transaction
// as a state change, with no relay running (the process died right after the
// commit), then starts two fresh relays: the receiver gets it exactly once, after
// one retried 500, and every attempt is in the deliveries log. A real
// investigation's investigation.completed then arrives the same way.
func TestEventSurvivesCrashBeforeDelivery(t *testing.T) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "Events")
	rcv := newEventReceiver(t)
	ep := rcv.subscribe(t, e, token, models.EventInvestigationCompleted, models.EventRemediationFailed)

	// The state change and its event commit together; then the process "dies".
	evt := models.OutboxEvent{ID: models.EventID("rem_crash", models.EventRemediationFailed), TenantID: tenantID,
		Type: models.EventRemediationFailed, Payload: `{"remediationId":"rem_crash","status":"failed"}`, CreatedAt: time.Now().UTC()}
	err := e.Store.DB().Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&models.TimelineEntry{TenantID: tenantID, IncidentID: "inc_crash", At: evt.CreatedAt, Kind: "remediation_failed",
			Message: "step 2 failed", Actor: "causeway", DedupKey: "crash/remediation_failed"}).Error; err != nil {
			return err
		}
		return tx.Create(&evt).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	// This is the state a crash right after the commit leaves: the event is
	// recorded, not yet fanned out, and no delivery exists.
	var stored models.OutboxEvent
	if err := e.Store.DB().Where("id = ?", evt.ID).Take(&stored).Error; err != nil || stored.DeliveredAt != nil {
		t.Fatalf("outbox row after the commit: %+v, %v; want it recorded and not dispatched", stored, err)
	}
	var deliveries int64
	if err := e.Store.DB().Model(&delivery.EventDelivery{}).Where("event_id = ?", evt.ID).Count(&deliveries).Error; err != nil || deliveries != 0 {
		t.Fatalf("%d deliveries before any relay ran (%v)", deliveries, err)
	}

	// A fresh process starts: two relays (a restart racing a second replica).
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); e.App.Relay().Run(ctx, 100*time.Millisecond) }()
	}
	stopRelays := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stopRelays)

	eventually(t, 45*time.Second, "the event delivered after one retry", func() bool { n, _ := rcv.delivered(evt.ID); return n > 0 })
	// Decide "no duplicate" once nothing can send any more: both relays have
	// stopped and the delivery's workflow, the only sender, has closed.
	stopRelays()
	awaitWorkflowClosed(t, e, delivery.WorkflowID(evt.ID, ep.EndpointID))
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, delivery.WorkflowID(evt.ID, ep.EndpointID), "delivery.json")
	}
	n, body := rcv.delivered(evt.ID)
	if n != 1 {
		t.Errorf("delivered %d times, want exactly once", n)
	}
	rcv.mu.Lock()
	total := rcv.total
	rcv.mu.Unlock()
	if total != 2 {
		t.Errorf("receiver got %d requests, want the failed first attempt and the successful retry", total)
	}
	if body["id"] != evt.ID || body["type"] != models.EventRemediationFailed || body["tenantId"] != tenantID ||
		body["data"].(map[string]any)["remediationId"] != "rem_crash" || body["createdAt"] == nil {
		t.Errorf("body %v", body)
	}
	var log struct {
		Deliveries []struct {
			EventID    string `json:"eventId"`
			Attempt    int    `json:"attempt"`
			StatusCode int    `json:"statusCode"`
			LatencyMs  int64  `json:"latencyMs"`
		}
	}
	if st := e.call(t, "GET", "/v1/webhook-endpoints/"+ep.EndpointID+"/deliveries", token, nil, &log); st != 200 {
		t.Fatalf("deliveries: %d", st)
	}
	if len(log.Deliveries) != 2 || log.Deliveries[0].StatusCode != 204 || log.Deliveries[0].Attempt != 2 ||
		log.Deliveries[1].StatusCode != 500 || log.Deliveries[1].Attempt != 1 {
		t.Errorf("deliveries log %+v, want attempt 2 = 204 then attempt 1 = 500", log.Deliveries)
	}

	// A real investigation emits investigation.completed through the same path,
	// with a relay running again.
	t.Cleanup(startRelay(e))
	var inc struct{ IncidentID string }
	if st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{
		"title": "checkout errors", "description": "checkout-api returns 500s: too many connections on orders-db",
	}, &inc); st != http.StatusCreated {
		t.Fatalf("create incident: %d", st)
	}
	if st := e.call(t, "POST", "/v1/investigation/"+inc.IncidentID+"/start", token, map[string]any{}, nil); st != http.StatusAccepted {
		t.Fatalf("start investigation: %d", st)
	}
	var invID string
	eventually(t, 60*time.Second, "investigation.completed delivered", func() bool {
		var evts []models.OutboxEvent
		e.Store.DB().Where("tenant_id = ? AND type = ?", tenantID, models.EventInvestigationCompleted).Find(&evts)
		if len(evts) == 0 {
			return false
		}
		invID = evts[0].ID
		n, _ := rcv.delivered(invID)
		return n == 1
	})
	_, body = rcv.delivered(invID)
	if data, _ := body["data"].(map[string]any); data["incidentId"] != inc.IncidentID {
		t.Errorf("investigation.completed data %v", body["data"])
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.bad != 0 {
		t.Errorf("%d deliveries failed signature verification", rcv.bad)
	}
}

// TestEventGoneDisablesEndpoint: a receiver answering 410 disables its endpoint
// after one attempt.
func TestEventGoneDisablesEndpoint(t *testing.T) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "Gone")
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.WriteHeader(http.StatusGone)
	}))
	t.Cleanup(srv.Close)
	var ep struct{ EndpointID string }
	if st := e.call(t, "POST", "/v1/webhook-endpoints", token, map[string]any{"url": srv.URL, "events": []string{models.EventRemediationCompleted}}, &ep); st != http.StatusCreated {
		t.Fatalf("create endpoint: %d", st)
	}
	evt := models.OutboxEvent{ID: "evt_gone", TenantID: tenantID, Type: models.EventRemediationCompleted, Payload: "{}", CreatedAt: time.Now().UTC()}
	if err := e.Store.DB().Create(&evt).Error; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.App.Relay().Run(ctx, 100*time.Millisecond); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
	})
	var list struct {
		Endpoints []struct{ EndpointID, Status string }
	}
	eventually(t, 20*time.Second, "endpoint disabled", func() bool {
		e.call(t, "GET", "/v1/webhook-endpoints", token, nil, &list)
		return len(list.Endpoints) == 1 && list.Endpoints[0].Status == delivery.EndpointDisabled
	})
	// Count once nothing can send any more: the relay has stopped and the
	// delivery's workflow has closed.
	cancel()
	<-done
	awaitWorkflowClosed(t, e, delivery.WorkflowID(evt.ID, ep.EndpointID))
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Errorf("receiver hit %d times, want 1", hits)
	}
}

// awaitWorkflowClosed waits until the workflow has closed, whatever its outcome.
func awaitWorkflowClosed(t *testing.T, e *env, workflowID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var notFound *serviceerror.NotFound
	if err := e.Temporal.GetWorkflow(ctx, workflowID, "").Get(ctx, nil); ctx.Err() != nil || errors.As(err, &notFound) {
		t.Fatalf("workflow %s did not close: %v", workflowID, err)
	}
}

// TestRemediationFailedEventFromAFailingStep runs a remediation whose second
// step really fails (the system it calls refuses with 400) and follows the
// failure to a subscriber: the remediation ends failed at that step, the third
// step never runs, and the endpoint receives one signed remediation.failed
// event carrying the failed remediation.
func TestRemediationFailedEventFromAFailingStep(t *testing.T) {
	e := newEnv(t)
	owner, tenantID := e.signup(t, "Failing")
	var refused, after sync.Mutex
	refusedCalls, afterCalls := 0, 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/scale":
			refused.Lock()
			refusedCalls++
			refused.Unlock()
			http.Error(w, `{"error":"replicas must be at most 10"}`, http.StatusBadRequest)
		default:
			after.Lock()
			afterCalls++
			after.Unlock()
		}
	}))
	t.Cleanup(target.Close)

	rcv := newEventReceiver(t)
	rcv.failFirst = 0 // this test is about the event, not retries
	ep := rcv.subscribe(t, e, owner, models.EventRemediationFailed, models.EventRemediationCompleted)

	e.createRunbook(t, owner, "scale out",
		map[string]any{"type": "wait", "description": "let traffic settle", "params": map[string]any{"duration": "10ms"}},
		map[string]any{"type": "http", "description": "scale {{.Service}}", "params": map[string]any{"method": "POST", "url": target.URL + "/scale"}},
		map[string]any{"type": "http", "description": "never reached", "params": map[string]any{"method": "POST", "url": target.URL + "/after"}},
	)
	incID, rems := e.investigatedIncident(t, owner, 1)
	rem := rems[0]
	expectCall(t, e, "approve", "POST", "/v1/remediation/"+rem.RemediationID+"/approve", owner, nil, http.StatusOK, "")
	expectCall(t, e, "execute", "POST", "/v1/remediation/"+rem.RemediationID+"/execute", owner, nil, http.StatusOK, "")
	eventually(t, 30*time.Second, "the remediation to fail", func() bool { return e.remediation(t, owner, incID, rem.RemediationID).Status == "failed" })
	got := e.remediation(t, owner, incID, rem.RemediationID)
	if len(got.Steps) != 3 || got.Steps[0].Status != "completed" || got.Steps[1].Status != "failed" || got.Steps[2].Status == "completed" ||
		!strings.Contains(got.FailureReason, "400") {
		t.Fatalf("failed remediation %+v", got)
	}
	refused.Lock()
	after.Lock()
	if refusedCalls != 1 || afterCalls != 0 {
		t.Errorf("step 2 called %d times, step 3 %d times; want a refusal once and nothing after it", refusedCalls, afterCalls)
	}
	after.Unlock()
	refused.Unlock()

	// The failure's event, recorded with the state change, reaches the endpoint.
	evtID := models.EventID(rem.RemediationID, models.EventRemediationFailed)
	stopRelay := startRelay(e)
	t.Cleanup(stopRelay)
	eventually(t, 30*time.Second, "remediation.failed delivered", func() bool { n, _ := rcv.delivered(evtID); return n > 0 })
	stopRelay()
	awaitWorkflowClosed(t, e, delivery.WorkflowID(evtID, ep.EndpointID))
	n, body := rcv.delivered(evtID)
	data, _ := body["data"].(map[string]any)
	if n != 1 || body["type"] != models.EventRemediationFailed || body["tenantId"] != tenantID ||
		data["remediationId"] != rem.RemediationID || data["status"] != "failed" {
		t.Fatalf("remediation.failed delivered %d times, body %v", n, body)
	}
	var completed int64
	if err := e.Store.DB().Model(&models.OutboxEvent{}).Where("id = ?", models.EventID(rem.RemediationID, models.EventRemediationCompleted)).Count(&completed).Error; err != nil || completed != 0 {
		t.Errorf("%d remediation.completed events for a failed remediation (%v)", completed, err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.bad != 0 {
		t.Errorf("%d deliveries failed signature verification", rcv.bad)
	}
}
