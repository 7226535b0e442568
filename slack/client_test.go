package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/slack/slackfake"
)

const testChannel = "C0INCIDENTS"

func TestClientErrorsAsSlackAnswersThem(t *testing.T) {
	fake := slackfake.New(t, testChannel)
	fake.AddChannel("C0OUTSIDE", false)
	ctx := context.Background()
	c := NewClient(fake.URL, http.DefaultClient, fake.Token)

	if _, err := NewClient(fake.URL, http.DefaultClient, "xoxb-wrong").AuthTest(ctx); code(err) != "invalid_auth" {
		t.Fatalf("wrong token: %v, want invalid_auth", err)
	}
	id, err := c.AuthTest(ctx)
	if err != nil || id.TeamID != "T0TEST" || id.UserID != "U0BOT" {
		t.Fatalf("auth.test = %+v, %v", id, err)
	}
	msg := Message{Text: "hello", Blocks: []Block{section("hello")}}
	for ch, want := range map[string]string{"C0MISSING": "channel_not_found", "C0OUTSIDE": "not_in_channel"} {
		msg.Channel = ch
		_, _, err := c.PostMessage(ctx, msg)
		if e, ok := AsAPIError(err); !ok || e.Code != want || !e.Permanent() {
			t.Fatalf("post to %s: %v, want permanent %s", ch, err, want)
		}
	}
	msg.Channel = testChannel

	fake.Fail("chat.postMessage", slackfake.Fault{Status: 429, RetryAfter: 7}, slackfake.Fault{Status: 503})
	_, _, err = c.PostMessage(ctx, msg)
	if e, ok := AsAPIError(err); !ok || e.Status != 429 || e.RetryAfter != 7*time.Second || !e.Retryable() || e.Permanent() {
		t.Fatalf("429: %+v", err)
	}
	_, _, err = c.PostMessage(ctx, msg)
	if e, ok := AsAPIError(err); !ok || e.Status != 503 || !e.Retryable() {
		t.Fatalf("503: %+v", err)
	}
	if _, _, err := c.PostMessage(ctx, Message{Channel: testChannel, Text: "x", Blocks: []Block{{Type: "carousel"}}}); code(err) != "invalid_blocks" {
		t.Fatalf("unknown block type: %v, want invalid_blocks", err)
	}
	if _, _, err := c.PostMessage(ctx, Message{Channel: testChannel, Text: "x", Blocks: []Block{{Type: "header", Text: &Text{Type: "mrkdwn", Text: "x"}}}}); code(err) != "invalid_blocks" {
		t.Fatalf("mrkdwn header: %v, want invalid_blocks", err)
	}
	if len(fake.Messages()) != 0 {
		t.Fatalf("refused posts left messages: %+v", fake.Messages())
	}
}

func code(err error) string {
	if e, ok := AsAPIError(err); ok {
		return e.Code
	}
	return ""
}

// TestMessagesAreValidBlockKit posts every message Causeway builds, in every
// state, to the fake, which validates Block Kit like Slack.
func TestMessagesAreValidBlockKit(t *testing.T) {
	fake := slackfake.New(t, testChannel)
	c := NewClient(fake.URL, http.DefaultClient, fake.Token)
	huge := ""
	for range 400 {
		huge += "a <b> & c "
	}
	inc := IncidentView{ID: "inc_1", Title: huge, Severity: "critical", Status: "investigated", Service: "checkout", Culprit: huge,
		Category: "db_connection_exhaustion", Confidence: 0.82, RootCause: huge, Evidence: huge, EvidenceRole: "logs",
		EvidenceSource: "datasource loki: {app=\"checkout\"}", DashboardURL: "http://localhost/ui/incidents/inc_1"}
	var msgs [][]Block
	_, b := IncidentMessage(inc)
	msgs = append(msgs, b)
	_, b = IncidentMessage(IncidentView{ID: "inc_2", Title: "t", Severity: "low", Status: "triaging", Progress: "1 of 3"})
	msgs = append(msgs, b)
	for _, st := range []string{"awaiting_approval", "approved", "rejected", "executing", "completed", "failed"} {
		_, b = RemediationMessage(ProposalView{ID: "rem_1", Description: huge, Status: st, PlanHash: "abc123",
			Steps: []StepView{{Type: "http", Description: huge, Status: "pending"}}, ApprovedBy: "a@x", RejectedBy: "b@x", RejectReason: huge})
		msgs = append(msgs, b)
	}
	_, b = TimelineMessage("triaged", huge, "system")
	msgs = append(msgs, b)
	_, b = TestMessage("http://localhost")
	msgs = append(msgs, b)
	for i, blocks := range msgs {
		if _, _, err := c.PostMessage(context.Background(), Message{Channel: testChannel, Text: "fallback", Blocks: blocks}); err != nil {
			t.Fatalf("message %d refused: %v", i, err)
		}
	}
}

func TestRemediationButtonsCarryIDAndPlanHash(t *testing.T) {
	_, blocks := RemediationMessage(ProposalView{ID: "rem_9", Status: "awaiting_approval", PlanHash: "feedbeef",
		Steps: []StepView{{Type: "wait", Description: "pause"}}})
	var seen []string
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.Type == "button" {
				seen = append(seen, e.ActionID+"="+e.Value)
			}
		}
	}
	if len(seen) != 2 || seen[0] != "approve=rem_9:feedbeef" || seen[1] != "reject=rem_9:feedbeef" {
		t.Fatalf("buttons = %v", seen)
	}
	_, decided := RemediationMessage(ProposalView{ID: "rem_9", Status: "approved", ApprovedBy: "owner@example.com", PlanHash: "feedbeef"})
	for _, b := range decided {
		if b.Type == "actions" {
			t.Fatal("a decided proposal still shows buttons")
		}
	}
}

// TestFakeSpeaksFormAndJSON: Slack takes chat.postMessage as a form (blocks as
// a JSON string) or as JSON, and refuses blocks missing required fields.
func TestFakeSpeaksFormAndJSON(t *testing.T) {
	fake := slackfake.New(t, testChannel)
	post := func(contentType, body string) map[string]any {
		req, _ := http.NewRequest("POST", fake.URL+"/chat.postMessage", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+fake.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	form := url.Values{"channel": {testChannel}, "text": {"hi"}, "blocks": {`[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]`}}
	if out := post("application/x-www-form-urlencoded", form.Encode()); out["ok"] != true {
		t.Fatalf("form post: %v", out)
	}
	if out := post("application/json", `{"channel":"`+testChannel+`","text":"hi","blocks":[{"type":"divider"}]}`); out["ok"] != true {
		t.Fatalf("JSON post: %v", out)
	}
	for name, blocks := range map[string]string{
		"section without text or fields": `[{"type":"section"}]`,
		"button without action_id":       `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Go"}}]}]`,
		"context without elements":       `[{"type":"context","elements":[]}]`,
		"empty text":                     `[{"type":"section","text":{"type":"mrkdwn","text":""}}]`,
		"eleven fields":                  `[{"type":"section","fields":[` + strings.Repeat(`{"type":"mrkdwn","text":"x"},`, 10) + `{"type":"mrkdwn","text":"x"}]}]`,
	} {
		form.Set("blocks", blocks)
		if out := post("application/x-www-form-urlencoded", form.Encode()); out["error"] != "invalid_blocks" {
			t.Errorf("%s: %v, want invalid_blocks", name, out)
		}
	}
	if out := post("application/json", `{"channel":"`+testChannel+`","text":"hi"}`+" "); out["ok"] != true {
		t.Fatalf("text-only JSON post: %v", out)
	}
	req, _ := http.NewRequest("POST", fake.URL+"/auth.test", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if out["error"] != "not_authed" {
		t.Fatalf("no token: %v", out)
	}
}

// TestRootMessageLeadsWithTheCulprit: the culprit, the object to fix with
// its mechanism, comes before the narrative; an answer without one shows
// none.
func TestRootMessageLeadsWithTheCulprit(t *testing.T) {
	_, blocks := IncidentMessage(IncidentView{ID: "inc_1", Title: "Partial Service Unreachability", Severity: "high", Status: "investigated",
		Culprit: "resourcequota shop/compute — quota_exceeded", Category: "admission_rejected", Confidence: 0.88, RootCause: "the quota refuses checkout's pods"})
	culprit, narrative := -1, -1
	for i, b := range blocks {
		if b.Text == nil {
			continue
		}
		switch {
		case strings.HasPrefix(b.Text.Text, "*Culprit*") && strings.Contains(b.Text.Text, "`resourcequota shop/compute — quota_exceeded`"):
			culprit = i
		case strings.HasPrefix(b.Text.Text, "*Root cause*"):
			narrative = i
		}
	}
	if culprit < 0 || narrative < culprit {
		t.Fatalf("blocks: %+v", blocks)
	}
	_, blocks = IncidentMessage(IncidentView{ID: "inc_2", Title: "t", Severity: "low", Status: "investigated", Category: "unknown"})
	for _, b := range blocks {
		if b.Text != nil && strings.Contains(b.Text.Text, "Culprit") {
			t.Fatalf("an unknown answer shows a culprit: %+v", b)
		}
	}
}
