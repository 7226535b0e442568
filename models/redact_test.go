package models

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRedactParams shows credentials are masked wherever they sit while the
// shape of the params, and harmless values, stay visible.
func TestRedactParams(t *testing.T) {
	in := map[string]any{
		"method":        "POST",
		"url":           "https://flags.example.com/api",
		"headers":       map[string]any{"Authorization": "Bearer abc", "X-Trace": "1"},
		"body":          map[string]any{"flag": "checkout", "nested": []any{map[string]any{"ApiToken": "t1", "n": 2.0}}},
		"Client_Secret": "s3",
		"password":      map[string]any{"value": "p"},
	}
	want := map[string]any{
		"method":        "POST",
		"url":           "https://flags.example.com/api",
		"headers":       map[string]any{"Authorization": Redacted, "X-Trace": Redacted},
		"body":          map[string]any{"flag": "checkout", "nested": []any{map[string]any{"ApiToken": Redacted, "n": 2.0}}},
		"Client_Secret": Redacted,
		"password":      map[string]any{"value": Redacted},
	}
	got := RedactParams(in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if in["headers"].(map[string]any)["Authorization"] != "Bearer abc" {
		t.Fatal("input modified")
	}
	if RedactParams(nil) != nil {
		t.Fatal("nil params")
	}
}

// TestRedactParamsWidened shows the credential names beyond token, secret,
// password and authorization (api_key, apikey, cookie, dsn) are masked, and so
// are credentials inside URLs: a password in the user-info part and query
// parameters named like credentials.
func TestRedactParamsWidened(t *testing.T) {
	in := map[string]any{
		"api_key":  "k1",
		"ApiKey":   "k2",
		"cookie":   "session=abc",
		"dsn":      "postgres://u:p@db/x",
		"url":      "https://ops:hunter2@hooks.example.com/run?api_key=k3&token=t1&region=eu",
		"body":     map[string]any{"callback": "https://cb.example.com/?apikey=k4&x=1", "note": "plain"},
		"password": "p",
	}
	got := RedactParams(in)
	raw, _ := json.Marshal(got)
	for _, secret := range []string{"k1", "k2", "session=abc", "u:p@", "hunter2", "k3", "t1", "k4"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("%q visible in %s", secret, raw)
		}
	}
	for _, kept := range []string{"hooks.example.com/run", "region=eu", "cb.example.com", "x=1", "plain"} {
		if !strings.Contains(string(raw), kept) {
			t.Errorf("%q lost from %s", kept, raw)
		}
	}
}
