package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/ratelimit"
	"github.com/causeway/causeway/slack/slackfake"
)

// triggers numbers the clicks: Slack gives each click its own trigger_id, so
// two clicks are never the same signed request, and runs of this test
// against one Redis do not meet.
var triggers atomic.Int64

// clickIn is a block_actions payload from workspace team with a response_url.
func clickIn(team, user, action, value, responseURL string) []byte {
	body := map[string]any{"type": "block_actions", "user": map[string]any{"id": user},
		"trigger_id": strconv.FormatInt(time.Now().UnixNano(), 10) + "." + strconv.FormatInt(triggers.Add(1), 10),
		"actions":    []map[string]any{{"action_id": action, "value": value}}}
	if team != "" {
		body["team"] = map[string]any{"id": team}
	}
	if responseURL != "" {
		body["response_url"] = responseURL
	}
	payload, _ := json.Marshal(body)
	return []byte("payload=" + url.QueryEscape(string(payload)))
}

// TestSignedRequestIsAcceptedOnce: the same signed click or command again
// within its window is refused and decides nothing; the same body signed
// afresh (a new timestamp) is a new request.
func TestSignedRequestIsAcceptedOnce(t *testing.T) {
	svc, rems, _ := newServiceRig(t)
	ctx := context.Background()
	now := time.Now()
	req := signed("sign", now, clickIn("T0TEST", "U1", ActionReject, "rem_1:h1", ""))
	if reply, err := svc.Interaction(ctx, "ten_a", req); err != nil || !strings.Contains(reply.Text, "Rejected") {
		t.Fatalf("first click: %+v, %v", reply, err)
	}
	if _, err := svc.Interaction(ctx, "ten_a", req); !errors.Is(err, errUnsigned) {
		t.Fatalf("the same signed click again: %v, want unauthorized", err)
	}
	if len(rems.calls) != 1 {
		t.Fatalf("a replay decided: %v", rems.calls)
	}
	if _, err := svc.Interaction(ctx, "ten_a", signed("sign", now.Add(-time.Second), req.Body)); err != nil {
		t.Fatalf("the same body signed at another time: %v", err)
	}

	cmd := signed("sign", now, command("U1", "status inc_a"))
	if reply, err := svc.Command(ctx, "ten_a", cmd); err != nil || !strings.Contains(reply.Text, "Checkout down") {
		t.Fatalf("first command: %+v, %v", reply, err)
	}
	if _, err := svc.Command(ctx, "ten_a", cmd); !errors.Is(err, errUnsigned) {
		t.Fatalf("the same signed command again: %v, want unauthorized", err)
	}
}

// TestReplayIsRefusedByAnotherProcess: two API processes, each with its own
// Redis connection, share what was accepted, so a request replayed to the
// other process is refused there too.
func TestReplayIsRefusedByAnotherProcess(t *testing.T) {
	svc, rems, _ := newServiceRig(t)
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	processes := make([]*Service, 2)
	for i := range processes {
		c := redis.NewClient(opts)
		t.Cleanup(func() { _ = c.Close() })
		p := *svc
		p.marks = ratelimit.NewRedis(c)
		processes[i] = &p
	}
	ctx := context.Background()
	req := signed("sign", time.Now(), clickIn("T0TEST", "U1", ActionReject, "rem_1:h1", ""))
	if _, err := processes[0].Interaction(ctx, "ten_a", req); err != nil {
		t.Fatalf("first process: %v", err)
	}
	if _, err := processes[1].Interaction(ctx, "ten_a", req); !errors.Is(err, errUnsigned) {
		t.Fatalf("the replay at the second process: %v, want unauthorized", err)
	}
	if len(rems.calls) != 1 {
		t.Fatalf("decisions: %v, want the first only", rems.calls)
	}
}

// TestWorkspaceMustBeTheIntegrations: a request signed with the tenant's
// signing secret but naming another workspace, or none, is refused. The rig's
// integration was saved without a workspace, as integrations were before it
// was recorded: the first request learns it from auth.test, records it and
// is checked against it.
func TestWorkspaceMustBeTheIntegrations(t *testing.T) {
	svc, rems, r := newServiceRig(t)
	ctx := context.Background()
	now := time.Now()

	if _, err := svc.Interaction(ctx, "ten_a", signed("sign", now, clickIn("T0OTHER", "U1", ActionApprove, "rem_1:h1", ""))); !errors.Is(err, errUnsigned) {
		t.Fatalf("click from another workspace: %v, want unauthorized", err)
	}
	integ, err := svc.store.Integration(ctx, "ten_a")
	if err != nil || integ.TeamID != r.TeamID || integ.TeamName != "Test Workspace" {
		t.Fatalf("the workspace was not recorded from auth.test: %+v, %v", integ, err)
	}
	for name, body := range map[string][]byte{
		"click without a workspace":      clickIn("", "U1", ActionApprove, "rem_1:h1", ""),
		"click from another workspace":   clickIn("T0OTHER", "U1", ActionApprove, "rem_1:h1", ""),
		"unparsable payload":             []byte("payload=%7Bnot-json"),
		"command from another workspace": []byte(url.Values{"text": {"status inc_a"}, "user_id": {"U1"}, "team_id": {"T0OTHER"}}.Encode()),
		"command without a workspace":    []byte(url.Values{"text": {"status inc_a"}, "user_id": {"U1"}}.Encode()),
	} {
		handle := svc.Interaction
		if strings.HasPrefix(name, "command") {
			handle = svc.Command
		}
		if _, err := handle(ctx, "ten_a", signed("sign", now, body)); !errors.Is(err, errUnsigned) {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
	}
	if len(rems.calls) != 0 {
		t.Fatalf("refused requests decided: %v", rems.calls)
	}
	if _, err := svc.Interaction(ctx, "ten_a", signed("sign", now, clickIn(r.TeamID, "U1", ActionReject, "rem_1:h1", ""))); err != nil {
		t.Fatalf("click from the integration's workspace: %v", err)
	}
	if n := r.Calls("auth.test"); n != 1 {
		t.Fatalf("auth.test called %d times; the recorded workspace should be read, not asked again", n)
	}
}

// TestUnconfirmedWorkspaceRefuses: an integration saved before the workspace
// was recorded, whose token Slack will not confirm right now, decides
// nothing: its requests are refused until auth.test answers.
func TestUnconfirmedWorkspaceRefuses(t *testing.T) {
	svc, rems, r := newServiceRig(t)
	r.Fail("auth.test", slackfake.Fault{Status: http.StatusServiceUnavailable})
	_, err := svc.Interaction(context.Background(), "ten_a", signed("sign", time.Now(), clickIn(r.TeamID, "U1", ActionApprove, "rem_1:h1", "")))
	if e, ok := errcode.As(err); !ok || e.Code != errcode.Unavailable {
		t.Fatalf("click while auth.test fails: %v, want unavailable", err)
	}
	if len(rems.calls) != 0 {
		t.Fatalf("decided without a confirmed workspace: %v", rems.calls)
	}
}

// TestResponseURLOnlySlack: the reply goes to a response_url only when it is
// https on hooks.slack.com, or on the stand-in the operator configured as the
// Web API; a payload naming any other address makes Causeway post nothing
// there.
func TestResponseURLOnlySlack(t *testing.T) {
	for _, c := range []struct {
		apiURL, responseURL string
		want                bool
	}{
		{"", "https://hooks.slack.com/actions/T1DC2JH3J/1234/abcd", true},
		{"", "https://hooks.slack.com/commands/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN", true},
		{DefaultAPIURL, "https://hooks.slack.com/app/T111/123/xyz", true},
		{"", "http://hooks.slack.com/actions/T1/2/abcd", false},
		{"", "https://hooks.slack.com:8443/actions/T1/2/abcd", false},
		{"", "https://hooks.slack.com.evil.example/actions/T1/2/abcd", false},
		{"", "https://evil.example/hooks.slack.com/actions", false},
		{"", "https://user@hooks.slack.com/actions/T1/2/abcd", false},
		{"", "https://slack.com/api/chat.postMessage", false},
		{"", "https://evil.slack.com.example/actions", false},
		{"", "hooks.slack.com/actions/T1/2/abcd", false},
		{DefaultAPIURL, "https://slack.com/response/1", false},
		{"", "http://127.0.0.1:8080/response/1", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/response/1", true},
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8080/response/1", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:9090/response/1", false},
		{"http://127.0.0.1:8080", "https://127.0.0.1:8080/response/1", false},
	} {
		s := &Service{apiURL: c.apiURL}
		if got := s.slackURL(c.responseURL); got != c.want {
			t.Errorf("API %q, response_url %q: allowed = %v, want %v", c.apiURL, c.responseURL, got, c.want)
		}
	}

	svc, _, r := newServiceRig(t)
	var elsewhere atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(evil.Close)
	ctx := context.Background()
	for _, u := range []string{evil.URL + "/response/1", "http://hooks.slack.com/actions/T0TEST/1/abc"} {
		if _, err := svc.Interaction(ctx, "ten_a", signed("sign", time.Now(), clickIn(r.TeamID, "U2", ActionApprove, "rem_1:h1", u))); err != nil {
			t.Fatalf("click with response_url %s: %v", u, err)
		}
	}
	if elsewhere.Load() != 0 || len(r.Responses()) != 0 {
		t.Fatalf("replies posted: %d to the other server, %d to the workspace", elsewhere.Load(), len(r.Responses()))
	}
	if _, err := svc.Interaction(ctx, "ten_a", signed("sign", time.Now(), clickIn(r.TeamID, "U2", ActionApprove, "rem_1:h1", r.ResponseURL()))); err != nil {
		t.Fatal(err)
	}
	if got := r.Responses(); len(got) != 1 || !strings.Contains(got[0]["text"].(string), "may not approve") {
		t.Fatalf("the reply to the workspace's own response_url: %v", got)
	}
}

// failingResponses is an egress client whose posts to response URLs fail
// the way a refused connection does, and whose Web API calls go through.
type failingResponses struct{}

func (failingResponses) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/response/") {
		return nil, errors.New("connection refused")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestResponseURLIsNeverLogged: the response_url is a credential for the
// conversation; neither a refused one nor a failed post puts it in the log.
func TestResponseURLIsNeverLogged(t *testing.T) {
	svc, _, r := newServiceRig(t)
	var logs bytes.Buffer
	svc.log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc.http = &http.Client{Transport: failingResponses{}}
	ctx := context.Background()
	const secretPath = "/response/T0TEST/8817/Zq3secretHookToken"
	for _, u := range []string{r.URL + secretPath, "https://evil.example" + secretPath} {
		if _, err := svc.Interaction(ctx, "ten_a", signed("sign", time.Now(), clickIn(r.TeamID, "U2", ActionApprove, "rem_1:h1", u))); err != nil {
			t.Fatal(err)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "response_url post failed") || !strings.Contains(out, "connection refused") || !strings.Contains(out, "not a Slack address") {
		t.Fatalf("the log does not show both refusals: %s", out)
	}
	if strings.Contains(out, "Zq3secretHookToken") || strings.Contains(out, "evil.example") {
		t.Fatalf("a response_url reached the log: %s", out)
	}
}

// TestAlertTextIsInertInSlack: an alert whose title or text holds Slack's
// control sequences (<!channel>, a <url|label> link, an &entity) shows them
// as text in the fallback of chat.postMessage and chat.update and in every
// mrkdwn block; the header, plain_text, shows the title as it is.
func TestAlertTextIsInertInSlack(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	const title = "<!channel> <https://evil.example|click> & co"
	must(t, r.db.DB().Model(&models.Incident{}).Where("id = ?", "inc_a").Updates(map[string]any{"title": title, "service": "<!here>"}).Error)
	if _, err := r.acts.SyncMessage(ctx, r.in); err != nil {
		t.Fatal(err)
	}
	must(t, r.db.DB().Model(&models.Incident{}).Where("id = ?", "inc_a").Update("status", models.StatusInvestigating).Error)
	if _, err := r.acts.SyncMessage(ctx, r.in); err != nil {
		t.Fatal(err)
	}
	msgs := r.fake.Messages()
	if len(msgs) != 1 || msgs[0].Updates != 1 {
		t.Fatalf("want one message posted then updated: %+v", msgs)
	}
	const want = "[high] &lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; co — investigating"
	if msgs[0].Text != want {
		t.Fatalf("fallback text after chat.update = %q, want %q", msgs[0].Text, want)
	}
	header, mrkdwn := "", []string{}
	for _, b := range msgs[0].Blocks {
		collectTexts(b, &header, &mrkdwn)
	}
	if header != title {
		t.Fatalf("header = %q, want the title as plain text", header)
	}
	for _, m := range mrkdwn {
		if strings.Contains(m, "<!") || strings.Contains(m, "<https://evil") {
			t.Fatalf("a mrkdwn block can ping or link: %q", m)
		}
	}
	if !strings.Contains(strings.Join(mrkdwn, "\n"), "&lt;!here&gt;") {
		t.Fatalf("the service field is not shown escaped: %v", mrkdwn)
	}

	for name, c := range map[string]struct{ got, want string }{
		"timeline": {first(TimelineMessage("note", "<!here> see <https://evil.example|this>", "")), "note: &lt;!here&gt; see &lt;https://evil.example|this&gt;"},
		"proposal": {first(RemediationMessage(ProposalView{ID: "rem_1", Status: statusAwaitingApproval, Description: "restart <!channel> & wait"})), "Remediation proposed: restart &lt;!channel&gt; &amp; wait"},
		"decided":  {first(RemediationMessage(ProposalView{ID: "rem_1", Status: statusRejected, Description: "<@U0BOSS>"})), "Remediation rejected: &lt;@U0BOSS&gt;"},
	} {
		if c.got != c.want {
			t.Errorf("%s fallback text = %q, want %q", name, c.got, c.want)
		}
	}
}

func first(text string, _ []Block) string { return text }

// collectTexts gathers a posted block's header text and its mrkdwn texts.
func collectTexts(v any, header *string, mrkdwn *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "header" {
			*header = x["text"].(map[string]any)["text"].(string)
			return
		}
		if x["type"] == "mrkdwn" {
			*mrkdwn = append(*mrkdwn, x["text"].(string))
		}
		for _, vv := range x {
			collectTexts(vv, header, mrkdwn)
		}
	case []any:
		for _, vv := range x {
			collectTexts(vv, header, mrkdwn)
		}
	}
}

// TestReplayCacheDownRefuses: while the shared backend cannot be reached, a
// signed click is answered unavailable and decides nothing, rather than
// going through unchecked.
func TestReplayCacheDownRefuses(t *testing.T) {
	svc, rems, r := newServiceRig(t)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	svc.marks = ratelimit.NewRedis(c)
	_, err := svc.Interaction(context.Background(), "ten_a", signed("sign", time.Now(), clickIn(r.TeamID, "U1", ActionReject, "rem_1:h1", "")))
	if e, ok := errcode.As(err); !ok || e.Code != errcode.Unavailable {
		t.Fatalf("click while the replay cache is down: %v, want unavailable", err)
	}
	if len(rems.calls) != 0 {
		t.Fatalf("decided without the replay check: %v", rems.calls)
	}
}
