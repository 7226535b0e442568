package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/causeway/causeway/slack/slackfake"
)

// TestSlackIntegrationSettings covers PUT/GET/DELETE /v1/integrations/slack:
// validation naming the field, auth.test before saving, write-only secrets,
// the test message and its refusal showing on the status.
func TestSlackIntegrationSettings(t *testing.T) {
	fake := slackfake.New(t, "C0INCIDENTS")
	fake.AddChannel("C0ELSEWHERE", false)
	cfg := apiConfig(t)
	cfg.SlackAPIURL, cfg.EgressAllowPrivate = fake.URL, true
	s := startAPI(t, cfg)
	owner := s.signup(t, "owner@example.com").AccessToken

	var e errorBody
	if st, _ := s.do(t, "GET", "/v1/integrations/slack", owner, nil, &e); st != http.StatusNotFound || e.Error != "not_found" {
		t.Fatalf("GET before connecting: %d %+v", st, e)
	}
	good := map[string]any{"botToken": fake.Token, "signingSecret": "s3cret-signing", "channel": "C0INCIDENTS",
		"notify": map[string]any{"minSeverity": "high", "categories": []string{"bad_deployment"}}}
	for field, body := range map[string]map[string]any{
		"channel":            with(good, "channel", "#incidents"),
		"signingSecret":      with(good, "signingSecret", ""),
		"notify.minSeverity": with(good, "notify", map[string]any{"minSeverity": "urgent"}),
		"notify.categories":  with(good, "notify", map[string]any{"minSeverity": "low", "categories": []string{"gremlins"}}),
		"botToken":           with(good, "botToken", "xoxb-revoked"),
	} {
		e = errorBody{}
		if st, _ := s.do(t, "PUT", "/v1/integrations/slack", owner, body, &e); st != http.StatusBadRequest || e.Error != "validation_error" || !strings.Contains(e.Message, field) {
			t.Errorf("PUT with a bad %s: %d %+v", field, st, e)
		}
	}
	if n := fake.Calls("auth.test"); n != 1 {
		t.Fatalf("auth.test called %d times; only the body that passed validation should reach Slack", n)
	}
	var view map[string]any
	if st, _ := s.do(t, "PUT", "/v1/integrations/slack", owner, good, &view); st != http.StatusOK || view["status"] != "active" ||
		view["team"] != "Test Workspace" || !strings.HasSuffix(view["interactionsUrl"].(string), "/interactions") {
		t.Fatalf("PUT: %d %v", st, view)
	}
	var raw json.RawMessage
	if st, _ := s.do(t, "GET", "/v1/integrations/slack", owner, nil, &raw); st != http.StatusOK {
		t.Fatalf("GET: %d", st)
	}
	if strings.Contains(string(raw), fake.Token) || strings.Contains(string(raw), "s3cret-signing") {
		t.Fatalf("GET shows a credential: %s", raw)
	}
	var sent map[string]string
	if st, _ := s.do(t, "POST", "/v1/integrations/slack/test", owner, nil, &sent); st != http.StatusOK || sent["ts"] == "" || len(fake.Messages()) != 1 {
		t.Fatalf("test message: %d %v", st, sent)
	}

	// Pointing at a channel the bot is not in: the test message says so and
	// sending stops until the integration is saved again.
	if st, _ := s.do(t, "PUT", "/v1/integrations/slack", owner, with(good, "channel", "C0ELSEWHERE"), nil); st != http.StatusOK {
		t.Fatalf("PUT elsewhere: %d", st)
	}
	e = errorBody{}
	if st, _ := s.do(t, "POST", "/v1/integrations/slack/test", owner, nil, &e); st != http.StatusBadRequest || !strings.Contains(e.Message, "not_in_channel") {
		t.Fatalf("test message to a channel without the bot: %d %+v", st, e)
	}
	if st, _ := s.do(t, "GET", "/v1/integrations/slack", owner, nil, &view); st != http.StatusOK || view["status"] != "stopped" || view["lastError"] != "not_in_channel" {
		t.Fatalf("status after a permanent refusal: %v", view)
	}
	if st, _ := s.do(t, "DELETE", "/v1/integrations/slack", owner, nil, nil); st != http.StatusOK {
		t.Fatalf("DELETE: %d", st)
	}
	if st, _ := s.do(t, "GET", "/v1/integrations/slack", owner, nil, nil); st != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d", st)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}
