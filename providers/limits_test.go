package providers

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFieldLimits shows service and environment are truncated to their columns
// while a source id longer than its column is refused, since truncating it would
// merge distinct alerts.
func TestFieldLimits(t *testing.T) {
	reg := New(Options{})
	body, _ := json.Marshal(map[string]any{
		"title": "t", "description": "d", "sourceAlertId": strings.Repeat("界", MaxSourceAlertIDRunes),
		"service": strings.Repeat("ş", MaxServiceRunes+50), "environment": strings.Repeat("é", MaxEnvironmentRunes+50),
	})
	b, err := normalizeWith(t, reg, "custom", Request{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	a := b.Alerts[0]
	if n := utf8.RuneCountInString(a.Service); n != MaxServiceRunes {
		t.Fatalf("service has %d runes, want %d", n, MaxServiceRunes)
	}
	if n := utf8.RuneCountInString(a.Environment); n != MaxEnvironmentRunes {
		t.Fatalf("environment has %d runes, want %d", n, MaxEnvironmentRunes)
	}
	if n := utf8.RuneCountInString(a.SourceAlertID); n != MaxSourceAlertIDRunes {
		t.Fatalf("source id at the limit has %d runes", n)
	}

	body, _ = json.Marshal(map[string]any{"title": "t", "description": "d", "sourceAlertId": strings.Repeat("x", MaxSourceAlertIDRunes+1)})
	_, err = normalizeWith(t, reg, "custom", Request{Body: body})
	var pe *PayloadError
	if !errors.Is(err, ErrInvalidPayload) || !errors.As(err, &pe) || pe.Msg != "custom: alert id exceeds the limit of 500 characters" {
		t.Fatalf("over-long source id: %v", err)
	}
	// Providers whose id comes from the payload are held to the same limit.
	body = []byte(`{"alert_id":"` + strings.Repeat("9", MaxSourceAlertIDRunes+1) + `","title":"t"}`)
	if _, err := normalizeWith(t, reg, "datadog", Request{Body: body}); !errors.Is(err, ErrInvalidPayload) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("datadog over-long id: %v", err)
	}
}
