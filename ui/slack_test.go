package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/causeway/causeway/slack/slackfake"
)

// TestSlackSettingsPage connects Slack from the dashboard, sends the test
// message, and shows a stopped integration's reason.
func TestSlackSettingsPage(t *testing.T) {
	fake := slackfake.New(t, "C0INCIDENTS")
	fake.AddChannel("C0ELSEWHERE", false)
	cfg := testConfig(t)
	cfg.SlackAPIURL, cfg.EgressAllowPrivate = fake.URL, true
	v := newVisitor(t, start(t, cfg))
	v.signUp("Acme", "owner@acme.test")

	page := v.get("/ui/settings/slack")
	if page.status != http.StatusOK || !strings.Contains(page.body, "Connect Slack") || !strings.Contains(page.body, `href="/ui/settings/slack"`) {
		t.Fatalf("settings page: %d %.300s", page.status, page.body)
	}
	form := url.Values{"csrf": {v.csrf("/ui/settings/slack")}, "botToken": {"xoxb-wrong"}, "signingSecret": {"s3cret-signing"},
		"channel": {"C0INCIDENTS"}, "minSeverity": {"high"}}
	if a := v.post("/ui/settings/slack", form); a.status != http.StatusBadRequest || !strings.Contains(a.body, "invalid_auth") {
		t.Fatalf("bad token: %d %.500s", a.status, a.body)
	}
	form.Set("botToken", fake.Token)
	if a := v.post("/ui/settings/slack", form); a.status != http.StatusSeeOther {
		t.Fatalf("connect: %d %.500s", a.status, a.body)
	}
	page = v.get("/ui/settings/slack")
	if !strings.Contains(page.body, "Test Workspace") || strings.Contains(page.body, fake.Token) || strings.Contains(page.body, "s3cret-signing") {
		t.Fatalf("connected page: %.800s", page.body)
	}
	if a := v.post("/ui/settings/slack/test", url.Values{"csrf": {v.csrf("/ui/settings/slack")}}); a.status != http.StatusSeeOther || len(fake.Messages()) != 1 {
		t.Fatalf("test message: %d, %d messages", a.status, len(fake.Messages()))
	}
	form.Set("csrf", v.csrf("/ui/settings/slack"))
	form.Set("channel", "C0ELSEWHERE")
	if a := v.post("/ui/settings/slack", form); a.status != http.StatusSeeOther {
		t.Fatalf("reconnect: %d", a.status)
	}
	v.post("/ui/settings/slack/test", url.Values{"csrf": {v.csrf("/ui/settings/slack")}})
	if page = v.get("/ui/settings/slack"); !strings.Contains(page.body, "Sending stopped") || !strings.Contains(page.body, "not_in_channel") {
		t.Fatalf("stopped integration: %.1500s", page.body)
	}
}
