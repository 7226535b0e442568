package api_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/models"
)

// TestRunbookParamsRedacted shows GET /v1/runbooks keeps the shape of step
// params but masks header values and credential-named values for every role.
func TestRunbookParamsRedacted(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	step := map[string]any{"type": "http", "description": "flip the flag", "params": map[string]any{
		"method": "POST", "url": "https://flags.example.com/api",
		"headers": map[string]any{"Authorization": "Bearer s3cret"},
		"body":    map[string]any{"flag": "checkout", "apiToken": "t0ken"},
	}}
	body := map[string]any{"name": "flag", "match": map[string]any{"categories": []string{"bad_deployment"}}, "steps": []any{step}}
	if st, _ := s.do(t, "POST", "/v1/runbooks", tk.AccessToken, body, nil); st != 201 {
		t.Fatalf("create runbook: %d", st)
	}
	var list struct {
		Runbooks []struct {
			Steps []struct {
				Params map[string]any `json:"params"`
			} `json:"steps"`
		} `json:"runbooks"`
	}
	if st, _ := s.do(t, "GET", "/v1/runbooks", tk.AccessToken, nil, &list); st != 200 || len(list.Runbooks) != 1 {
		t.Fatalf("list: %d %+v", st, list)
	}
	p := list.Runbooks[0].Steps[0].Params
	headers, _ := p["headers"].(map[string]any)
	reqBody, _ := p["body"].(map[string]any)
	if p["url"] != "https://flags.example.com/api" || p["method"] != "POST" || headers["Authorization"] != models.Redacted ||
		reqBody["flag"] != "checkout" || reqBody["apiToken"] != models.Redacted {
		t.Fatalf("params %#v", p)
	}
}

// TestCreationRefusesURLsEgressRefuses shows runbooks and webhook endpoints
// refuse, with a 400, URLs the egress client would refuse on every attempt
// when private egress is off.
func TestCreationRefusesURLsEgressRefuses(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	for _, u := range []string{"http://2130706433/", "http://10.0.0.1/", "http://[::1]/hook", "http://0x7f000001/"} {
		var e errorBody
		ep := map[string]any{"url": u, "events": []string{"investigation.completed"}}
		if st, _ := s.do(t, "POST", "/v1/webhook-endpoints", tk.AccessToken, ep, &e); st != 400 || e.Error != "validation_error" {
			t.Errorf("endpoint %s: %d %+v", u, st, e)
		}
		step := map[string]any{"type": "http", "description": "x", "params": map[string]any{"url": u}}
		rb := map[string]any{"name": "x", "match": map[string]any{"categories": []string{"bad_deployment"}}, "steps": []any{step}}
		if st, _ := s.do(t, "POST", "/v1/runbooks", tk.AccessToken, rb, &e); st != 400 || e.Error != "validation_error" {
			t.Errorf("runbook %s: %d %+v", u, st, e)
		}
	}
}

// TestEndpointLimitPerTenant shows the endpoint after MaxEndpointsPerTenant is
// refused with a validation error naming the limit, for that tenant only.
func TestEndpointLimitPerTenant(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	other := s.signup(t, "other@example.com")
	ep := map[string]any{"url": "https://example.com/hook", "events": []string{"investigation.completed"}}
	for i := 0; i < delivery.MaxEndpointsPerTenant; i++ {
		if st, _ := s.do(t, "POST", "/v1/webhook-endpoints", tk.AccessToken, ep, nil); st != 201 {
			t.Fatalf("endpoint %d: %d", i+1, st)
		}
	}
	var e errorBody
	if st, _ := s.do(t, "POST", "/v1/webhook-endpoints", tk.AccessToken, ep, &e); st != 400 || e.Error != "validation_error" ||
		!strings.Contains(e.Message, strconv.Itoa(delivery.MaxEndpointsPerTenant)) {
		t.Fatalf("endpoint over the limit: %d %+v", st, e)
	}
	if st, _ := s.do(t, "POST", "/v1/webhook-endpoints", other.AccessToken, ep, nil); st != 201 {
		t.Fatalf("other tenant: %d", st)
	}
}
