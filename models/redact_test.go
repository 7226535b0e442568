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

// TestRedactSecretsInLogLines: credentials as real services print them in
// their logs are masked, and the rest of each line is kept so the scenario
// still reads as the incident did.
func TestRedactSecretsInLogLines(t *testing.T) {
	for _, c := range []struct{ line, secret, keep string }{
		{`level=error msg="upstream refused" authorization="Bearer sk-live-4f9a8b7c6d5e"`, "sk-live-4f9a8b7c6d5e", "upstream refused"},
		{`GET /v1/orders Authorization: Basic dXNlcjpodW50ZXIy 401`, "dXNlcjpodW50ZXIy", "GET /v1/orders"},
		{`{"level":"error","msg":"login failed","password":"hunter22","user":"svc"}`, "hunter22", `"user":"svc"`},
		{`db_password: s3cr3t-pw connecting`, "s3cr3t-pw", "connecting"},
		{`connect failed: postgres://app:pa55word@db-1:5432/orders timeout`, "pa55word", "db-1:5432/orders"},
		{`token refresh eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJlLXZhbHVl expired`, "eyJzdWIiOiJ1c3JfMSJ9", "expired"},
		{`using AWS key AKIAIOSFODNN7EXAMPLE in us-east-1`, "AKIAIOSFODNN7EXAMPLE", "us-east-1"},
		{"loaded key -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY----- ok", "MIIEowIBAAKCAQEA7", "loaded key"},
		{`git clone with ghp_16C7e42F292c6912E7710c838347Ae178B4a failed`, "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "failed"},
		{`slack post xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy rate limited`, "xoxb-17653672481", "rate limited"},
		{`retry api_key=abc123def456&region=eu`, "abc123def456", "region=eu"},
	} {
		got := RedactSecrets(c.line)
		if strings.Contains(got, c.secret) || !strings.Contains(got, c.keep) || !strings.Contains(got, "redacted") {
			t.Errorf("RedactSecrets(%q) = %q; want %q masked and %q kept", c.line, got, c.secret, c.keep)
		}
	}
	for _, plain := range []string{`GET /health 200 12ms`, `pool exhausted: 97 of 100 connections (max_connections=100)`, `token bucket empty for tenant acme`} {
		if got := RedactSecrets(plain); got != plain {
			t.Errorf("a line without secrets changed: %q → %q", plain, got)
		}
	}
}
