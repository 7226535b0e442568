package models

import (
	"reflect"
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

// TestRemediationViewShowsRedactedParams shows approvers see what a step
// does, without its credentials.
func TestRemediationViewShowsRedactedParams(t *testing.T) {
	r := Remediation{Steps: []RemediationStep{{Type: "http", Params: map[string]any{
		"url": "https://deploy.example.com/rollback", "headers": map[string]any{"Authorization": "Bearer abc"}}}}}
	p := r.View().Steps[0].Params
	if p["url"] != "https://deploy.example.com/rollback" || p["headers"].(map[string]any)["Authorization"] != Redacted {
		t.Fatalf("step params %#v", p)
	}
}
