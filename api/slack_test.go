package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testenv"
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

// TestSlackSignedRequestsAcrossReplicas: PUT records the workspace auth.test
// names; a signed slash command is answered once, and the same signed request
// sent again to another API replica (sharing Redis) is 401, as is one from
// another workspace signed with this tenant's secret.
func TestSlackSignedRequestsAcrossReplicas(t *testing.T) {
	fake := slackfake.New(t, "C0INCIDENTS")
	fake.AddUser(slackfake.User{ID: "U0OWNER", Email: "owner@example.com", Confirmed: true})
	cfg := apiConfig(t)
	cfg.SlackAPIURL, cfg.EgressAllowPrivate, cfg.RedisURL = fake.URL, true, testenv.RedisURL(t)
	a := startAPI(t, cfg)
	second := *cfg
	b := startAPI(t, &second)
	owner := a.signup(t, "owner@example.com")
	const secret = "replica-signing-secret"
	var view map[string]any
	if st, _ := a.do(t, "PUT", "/v1/integrations/slack", owner.AccessToken,
		map[string]any{"botToken": fake.Token, "signingSecret": secret, "channel": "C0INCIDENTS"}, &view); st != http.StatusOK || view["teamId"] != fake.TeamID {
		t.Fatalf("PUT: %d %v, want the workspace %s recorded", st, view, fake.TeamID)
	}
	post := func(s *apiServer, ts, body string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL+"/v1/integrations/slack/"+owner.TenantID+"/commands", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", slackfake.Sign(secret, ts, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	body := url.Values{"command": {"/causeway"}, "text": {"status inc_none"}, "user_id": {"U0OWNER"}, "team_id": {fake.TeamID},
		"trigger_id": {strconv.FormatInt(time.Now().UnixNano(), 10)}}.Encode()
	if st := post(a, ts, body); st != http.StatusOK {
		t.Fatalf("first command: %d", st)
	}
	if st := post(b, ts, body); st != http.StatusUnauthorized {
		t.Fatalf("the same signed command at another replica: %d, want 401", st)
	}
	if st := post(a, ts, body); st != http.StatusUnauthorized {
		t.Fatalf("the same signed command again: %d, want 401", st)
	}
	other := strings.Replace(body, "team_id="+fake.TeamID, "team_id=T0ELSEWHERE", 1)
	if st := post(b, ts, other); st != http.StatusUnauthorized {
		t.Fatalf("a command from another workspace: %d, want 401", st)
	}
}
