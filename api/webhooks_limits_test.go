package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/providers"
)

// TestWebhookFieldLimits shows over-long fields cannot fail the insert: service is
// truncated to its column and an over-long source id is a 400 naming the limit.
func TestWebhookFieldLimits(t *testing.T) {
	t.Logf("database: %s", testdb.Describe())
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	body, _ := json.Marshal(map[string]any{
		"title": "long service", "description": "d", "sourceAlertId": "lim-1",
		"service": strings.Repeat("s", 300), "environment": strings.Repeat("e", 150),
	})
	var a ack
	if st, raw := send(t, e.signed(t, tn, body), &a); st != http.StatusAccepted {
		t.Fatalf("300-char service: %d %s", st, raw)
	}
	inc, err := e.store.GetIncident(context.Background(), tn.ID, a.IncidentID)
	if err != nil {
		t.Fatal(err)
	}
	if utf8.RuneCountInString(inc.Service) != providers.MaxServiceRunes || utf8.RuneCountInString(inc.Environment) != providers.MaxEnvironmentRunes {
		t.Fatalf("service %d runes, environment %d runes", utf8.RuneCountInString(inc.Service), utf8.RuneCountInString(inc.Environment))
	}
	body, _ = json.Marshal(map[string]any{"title": "long id", "description": "d", "sourceAlertId": strings.Repeat("i", 600)})
	if st, raw := send(t, e.signed(t, tn, body), &a); st != http.StatusBadRequest || a.Error != "validation_error" ||
		!strings.Contains(a.Message, "500") {
		t.Fatalf("600-char sourceAlertId: %d %s", st, raw)
	}
	if n := e.countIncidents(t, tn.ID); n != 1 {
		t.Fatalf("%d incidents, want 1", n)
	}
}

// TestWebhookAlertCap shows a group delivery over MaxAlertsPerDelivery is refused
// whole, with a message telling the operator what to change.
func TestWebhookAlertCap(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	var b bytes.Buffer
	b.WriteString(`{"version":"4","status":"firing","alerts":[`)
	for i := range providers.MaxAlertsPerDelivery + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"status":"firing","labels":{"alertname":"A%d"},"startsAt":"2025-05-01T10:00:00Z","fingerprint":"f%d"}`, i, i)
	}
	b.WriteString(`]}`)
	req := e.hook(t, tn.ID, "alertmanager", b.Bytes())
	req.Header.Set("X-API-Key", tn.Key)
	var a ack
	st, raw := send(t, req, &a)
	if st != http.StatusBadRequest || a.Error != "validation_error" ||
		!strings.Contains(a.Message, "1001 alerts exceed the limit of 1000") || !strings.Contains(a.Message, "max_alerts") {
		t.Fatalf("got %d %s", st, raw)
	}
	if n := e.countIncidents(t, tn.ID); n != 0 {
		t.Fatalf("%d incidents from a refused delivery", n)
	}
}

// TestWebhookRejectionLogs shows each refusal the 401 hides is explained in the
// log, by key prefix only: no key or secret ever reaches a log line.
func TestWebhookRejectionLogs(t *testing.T) {
	e := newHookEnv(t, 100)
	tn, other, revoked := e.tenant(t), e.tenant(t), e.tenant(t)
	if st, _ := e.do(t, "DELETE", "/v1/api-keys/"+revoked.KeyID, revoked.Token, nil, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	unknown := auth.NewAPIKey()
	cases := []struct{ reason, tenantID, key string }{
		{"unknown", tn.ID, unknown},
		{"revoked", revoked.ID, revoked.Key},
		{"tenant_mismatch", other.ID, tn.Key},
	}
	for _, c := range cases {
		body := alertBody("log-"+c.reason, "rejected")
		req := e.hook(t, c.tenantID, "custom", body)
		req.Header.Set("X-API-Key", c.key)
		req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(tn.Secret), body, ""))
		if st, raw := send(t, req, nil); st != http.StatusUnauthorized {
			t.Fatalf("%s: %d %s", c.reason, st, raw)
		}
		want := fmt.Sprintf("tenant_id=%s key_prefix=%s reason=%s", c.tenantID, auth.KeyDisplayPrefix(c.key), c.reason)
		if !strings.Contains(e.logs.String(), want) {
			t.Fatalf("no log line with %q in:\n%s", want, e.logs)
		}
	}
	// A bad signature names the key by id.
	body := alertBody("log-sig", "bad signature")
	req := e.hook(t, tn.ID, "custom", body)
	req.Header.Set("X-API-Key", tn.Key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte("whsec_other"), body, ""))
	if st, raw := send(t, req, nil); st != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d %s", st, raw)
	}
	if want := "tenant_id=" + tn.ID + " key_id=" + tn.KeyID; !strings.Contains(e.logs.String(), want) {
		t.Fatalf("no signature log with %q in:\n%s", want, e.logs)
	}
	// An ignored delivery is logged with the provider's delivery id.
	body = []byte(`{"event":{"id":"evt-ack-1","event_type":"incident.acknowledged"}}`)
	req = e.hook(t, tn.ID, "pagerduty", body)
	req.Header.Set("X-API-Key", tn.Key)
	req.Header.Set(providers.HeaderPagerDutySignature, "v1="+providers.Sign([]byte(tn.Secret), body, ""))
	var a ack
	if st, raw := send(t, req, &a); st != http.StatusAccepted || a.Status != "ignored" {
		t.Fatalf("ignored delivery: %d %s", st, raw)
	}
	if want := "provider=pagerduty reason=\"pagerduty event incident.acknowledged does not open or resolve an alert\" delivery_id=evt-ack-1"; !strings.Contains(e.logs.String(), want) {
		t.Fatalf("no ignored log with %q in:\n%s", want, e.logs)
	}
	logs := e.logs.String()
	for _, secret := range []string{unknown, tn.Key, other.Key, revoked.Key, tn.Secret, other.Secret, revoked.Secret} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a key or secret reached the log:\n%s", logs)
		}
	}
}

// TestWebhookResolveBounded shows a resolved notification does not wait on a
// hanging Temporal until the tool gives up: it is answered 503 with Retry-After,
// so the tool retries. How long the service waits is pinned by a unit test of the
// service package against PagerDuty's delivery timeout; the client here only
// guards against a request that never ends.
func TestWebhookResolveBounded(t *testing.T) {
	// A Temporal that accepts connections and never answers.
	silent := testenv.Listen(t, func(ctx context.Context, _ net.Conn) { <-ctx.Done() })
	e := newHookEnvTemporal(t, 100, silent)
	tn := e.tenant(t)
	if st, raw := send(t, e.signed(t, tn, alertBody("res-1", "to resolve")), nil); st != http.StatusAccepted {
		t.Fatalf("firing: %d %s", st, raw)
	}
	body, _ := json.Marshal(map[string]any{"title": "to resolve", "description": "d", "sourceAlertId": "res-1", "status": "resolved"})
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(e.signed(t, tn, body))
	if err != nil {
		t.Fatalf("the resolve never answered: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("got %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
