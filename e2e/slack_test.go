package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/slack"
	"github.com/causeway/causeway/slack/slackfake"
)

const (
	slackChannel = "C0INCIDENTS"
	slackSecret  = "8f742231b10e8888abcd99aaabbbcc11"
)

// slackPost sends a signed form post as Slack does and returns the status and
// the decoded JSON answer.
func slackPost(t *testing.T, e *env, tenantID, kind, secret string, at time.Time, body string) (int, map[string]any) {
	t.Helper()
	ts := strconv.FormatInt(at.Unix(), 10)
	req, _ := http.NewRequest("POST", e.URL+"/v1/integrations/slack/"+tenantID+"/"+kind, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", slackfake.Sign(secret, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// clicks numbers the clicks, as Slack gives each its own trigger_id and
// action_ts: two clicks are never the same signed request.
var clicks atomic.Int64

// clickBody is a block_actions payload as Slack posts it for a button click.
func clickBody(fake *slackfake.Server, user, action, value string) string {
	n := strconv.FormatInt(clicks.Add(1), 10)
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "api_app_id": "A0APP", "token": "legacy-verification-token", "trigger_id": "1.2." + n,
		"user": map[string]any{"id": user, "username": user, "team_id": fake.TeamID},
		"team": map[string]any{"id": fake.TeamID, "domain": "test"}, "container": map[string]any{"type": "message", "channel_id": slackChannel},
		"channel": map[string]any{"id": slackChannel}, "response_url": fake.ResponseURL(),
		"actions": []map[string]any{{"type": "button", "action_id": action, "block_id": "decide", "value": value,
			"text": map[string]any{"type": "plain_text", "text": action}, "action_ts": "1700000000." + n}},
	})
	return "payload=" + url.QueryEscape(string(payload))
}

// buttonValue finds the value of the button with actionID on a posted message.
func buttonValue(m slackfake.Message, actionID string) string {
	for _, b := range m.Blocks {
		els, _ := b["elements"].([]any)
		for _, el := range els {
			if e, _ := el.(map[string]any); e["type"] == "button" && e["action_id"] == actionID {
				v, _ := e["value"].(string)
				return v
			}
		}
	}
	return ""
}

func blocksText(m slackfake.Message) string {
	raw, _ := json.Marshal(m.Blocks)
	return string(raw)
}

// TestSlackIncidentAndApprovalByButton drives the integration end to end on
// the real Temporal server: connect, the incident's root message and thread,
// the proposal's buttons, every refused click changing nothing, one approval
// running the step once, and a permanent error showing on the status.
func TestSlackIncidentAndApprovalByButton(t *testing.T) {
	fake := slackfake.New(t, slackChannel)
	cfg := testConfig(t)
	cfg.SlackAPIURL = fake.URL
	e := newEnvWith(t, cfg)
	notifier := e.App.SlackNotifier()
	notifier.Settle = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { notifier.Run(ctx, 200*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	owner, tenantID := e.signup(t, "Acme")
	admin, adminEmail := e.userToken(t, owner, models.RoleAdmin)
	viewer, viewerEmail := e.userToken(t, owner, models.RoleViewer)
	otherOwner, otherTenant := e.signup(t, "Other")
	_, otherAdminEmail := e.userToken(t, otherOwner, models.RoleAdmin)
	fake.AddUser(slackfake.User{ID: "U0ADMIN", Email: adminEmail, Confirmed: true})
	fake.AddUser(slackfake.User{ID: "U0VIEWER", Email: viewerEmail, Confirmed: true})
	fake.AddUser(slackfake.User{ID: "U0NOBODY", Email: "nobody@example.com", Confirmed: true})
	fake.AddUser(slackfake.User{ID: "U0OTHER", Email: otherAdminEmail, Confirmed: true})
	fake.AddUser(slackfake.User{ID: "U0UNCONFIRMED", Email: adminEmail, Confirmed: false})

	// Connect: a bad token is refused by name, the settings never show secrets.
	put := map[string]any{"botToken": "xoxb-wrong", "signingSecret": slackSecret, "channel": slackChannel}
	var refused struct{ Error, Message string }
	if st := e.call(t, "PUT", "/v1/integrations/slack", owner, put, &refused); st != http.StatusBadRequest ||
		refused.Error != "validation_error" || !strings.Contains(refused.Message, "botToken") || !strings.Contains(refused.Message, "invalid_auth") {
		t.Fatalf("bad token: %d %+v", st, refused)
	}
	put["botToken"] = fake.Token
	expectCall(t, e, "viewer connects", "PUT", "/v1/integrations/slack", viewer, put, http.StatusForbidden, "forbidden")
	if st := e.call(t, "PUT", "/v1/integrations/slack", owner, put, nil); st != http.StatusOK {
		t.Fatalf("connect: %d", st)
	}
	// Slack is busy at first: the first post meets a 429 asking for 5 s (more
	// than the first backoff), the second a 503; the send is retried until it
	// gets through, waiting out the Retry-After.
	fake.Fail("chat.postMessage", slackfake.Fault{Status: http.StatusTooManyRequests, RetryAfter: 5}, slackfake.Fault{Status: http.StatusServiceUnavailable})
	var view map[string]any
	if st := e.call(t, "GET", "/v1/integrations/slack", admin, nil, &view); st != http.StatusOK || view["status"] != "active" || view["teamId"] != fake.TeamID {
		t.Fatalf("GET: %d %v", st, view)
	}
	if raw, _ := json.Marshal(view); strings.Contains(string(raw), fake.Token) || strings.Contains(string(raw), slackSecret) {
		t.Fatalf("GET shows a credential: %s", raw)
	}
	// The other tenant connects its own app with its own signing secret.
	otherPut := map[string]any{"botToken": fake.Token, "signingSecret": "another-tenants-signing-secret", "channel": slackChannel}
	if st := e.call(t, "PUT", "/v1/integrations/slack", otherOwner, otherPut, nil); st != http.StatusOK {
		t.Fatalf("connect other tenant: %d", st)
	}

	// A remediation whose one step is an HTTP call we count.
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(target.Close)
	step := map[string]any{"type": "http", "description": "restart the pool", "params": map[string]any{"method": "POST", "url": target.URL + "/restart", "expectStatus": 200}}
	e.createRunbook(t, owner, "restart", step)
	incID, rems := e.investigatedIncident(t, owner, 1)
	rem := rems[0]
	want := rem.RemediationID + ":" + rem.PlanHash

	var proposal slackfake.Message
	eventually(t, 60*time.Second, "the proposal with its buttons in Slack", func() bool {
		for _, m := range fake.Messages() {
			if buttonValue(m, "approve") == want && buttonValue(m, "reject") == want {
				proposal = m
				return true
			}
		}
		return false
	})
	root := fake.Messages()[0]
	if root.ThreadTS != "" || !strings.Contains(blocksText(root), "Checkout errors") || proposal.ThreadTS != root.TS {
		t.Fatalf("root %+v\nproposal %+v", root, proposal)
	}
	eventually(t, 30*time.Second, "the root message shows the answer", func() bool {
		return strings.Contains(blocksText(fake.Messages()[0]), "Root cause")
	})

	unchanged := func(what string) {
		t.Helper()
		if got := e.remediation(t, owner, incID, rem.RemediationID); got.Status != "awaiting_approval" || got.Steps[0].Status != "pending" {
			t.Fatalf("%s changed the remediation: %+v", what, got)
		}
		if hits.Load() != 0 {
			t.Fatalf("%s ran a step", what)
		}
	}
	now := time.Now()
	approve := clickBody(fake, "U0ADMIN", "approve", want)
	for _, c := range []struct {
		name, tenant, secret string
		at                   time.Time
	}{
		{"forged signature", tenantID, "not-the-signing-secret", now},
		{"timestamp six minutes old", tenantID, slackSecret, now.Add(-6 * time.Minute)},
		{"another tenant's path", otherTenant, slackSecret, now},
		{"unknown tenant", "ten_missing", slackSecret, now},
	} {
		if st, _ := slackPost(t, e, c.tenant, "interactions", c.secret, c.at, approve); st != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, want 401", c.name, st)
		}
		unchanged(c.name)
	}
	for _, c := range []struct{ name, user, value, says string }{
		{"viewer click", "U0VIEWER", want, "may not approve"},
		{"unmapped user", "U0NOBODY", want, "No Causeway user"},
		{"another tenant's user", "U0OTHER", want, "No Causeway user"},
		{"unconfirmed e-mail", "U0UNCONFIRMED", want, "no confirmed e-mail"},
		{"stale plan hash", "U0ADMIN", rem.RemediationID + ":" + strings.Repeat("0", 64), "no longer the one"},
	} {
		st, reply := slackPost(t, e, tenantID, "interactions", slackSecret, time.Now(), clickBody(fake, c.user, "approve", c.value))
		text, _ := reply["text"].(string)
		if st != http.StatusOK || reply["response_type"] != "ephemeral" || !strings.Contains(text, c.says) {
			t.Fatalf("%s: %d %v", c.name, st, reply)
		}
		unchanged(c.name)
	}

	// The approval, clicked five times at once (two approvers' double
	// clicks): one decides, the others are told it is decided, and the step
	// runs once.
	replies := make(chan string, 5)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, reply := slackPost(t, e, tenantID, "interactions", slackSecret, time.Now(), clickBody(fake, "U0ADMIN", "approve", want))
			text, _ := reply["text"].(string)
			replies <- text
		}()
	}
	wg.Wait()
	close(replies)
	approved, decided := 0, 0
	for text := range replies {
		switch {
		case strings.HasPrefix(text, "Approved remediation"):
			approved++
		case strings.Contains(text, "already decided"):
			decided++
		default:
			t.Errorf("concurrent click answered %q", text)
		}
	}
	if approved != 1 || decided != 4 {
		t.Fatalf("five concurrent clicks: %d approved, %d told it was decided; want 1 and 4", approved, decided)
	}
	eventually(t, 30*time.Second, "the remediation completes", func() bool {
		return e.remediation(t, owner, incID, rem.RemediationID).Status == "completed"
	})
	got := e.remediation(t, owner, incID, rem.RemediationID)
	if got.ApprovedBy != adminEmail || hits.Load() != 1 {
		t.Fatalf("after the click: %+v, %d step calls", got, hits.Load())
	}
	st, reply := slackPost(t, e, tenantID, "interactions", slackSecret, time.Now(), clickBody(fake, "U0ADMIN", "approve", want))
	if st != http.StatusOK || !strings.Contains(reply["text"].(string), "already decided") {
		t.Fatalf("second click: %d %v", st, reply)
	}
	eventually(t, 30*time.Second, "the proposal message shows the decision", func() bool {
		for _, m := range fake.Messages() {
			if m.TS == proposal.TS {
				return buttonValue(m, "approve") == "" && strings.Contains(blocksText(m), "Approved* by "+adminEmail)
			}
		}
		return false
	})
	if hits.Load() != 1 {
		t.Fatalf("the step ran %d times", hits.Load())
	}
	if len(fake.Responses()) < 7 {
		t.Fatalf("ephemeral replies via response_url: %d", len(fake.Responses()))
	}
	tops := 0
	for _, m := range fake.Messages() {
		if m.ThreadTS == "" {
			tops++
		}
	}
	if tops != 1 {
		t.Fatalf("%d top-level messages, want the one root message", tops)
	}

	if times := fake.CallTimes("chat.postMessage"); len(times) < 3 || times[1].Sub(times[0]) < 5*time.Second {
		t.Fatalf("chat.postMessage calls at %v: the retry after the 429 came before its Retry-After", times)
	}

	// The credentials never reach a log line or any message workflow's history.
	if logs := e.Logs.String(); strings.Contains(logs, fake.Token) || strings.Contains(logs, slackSecret) {
		t.Fatal("a Slack credential was logged")
	}
	for _, key := range []string{slack.KeyRoot, slack.KeyThread, slack.RemediationKey(rem.RemediationID)} {
		it := e.Temporal.GetWorkflowHistory(context.Background(), slack.MessageWorkflowID(tenantID, incID, key), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", key, err)
			}
			events++
			if text := ev.String(); strings.Contains(text, fake.Token) || strings.Contains(text, slackSecret) || strings.Contains(text, "Checkout errors") {
				t.Fatalf("history of %s holds a credential or incident text: %s", key, text)
			}
		}
		if events == 0 {
			t.Fatalf("no history for %s", key)
		}
	}

	// /causeway status answers any mapped user.
	cmd := url.Values{"command": {"/causeway"}, "text": {"status " + incID}, "user_id": {"U0VIEWER"}, "team_id": {fake.TeamID},
		"response_url": {fake.ResponseURL()}}.Encode()
	if st, reply := slackPost(t, e, tenantID, "commands", slackSecret, time.Now(), cmd); st != http.StatusOK ||
		!strings.Contains(reply["text"].(string), "Checkout errors") {
		t.Fatalf("/causeway status: %d %v", st, reply)
	}

	// The bot is removed from the channel: sending stops and the status says why.
	fake.AddChannel(slackChannel, false)
	if st := e.call(t, "POST", "/v1/incidents/"+incID+"/resolve", owner, map[string]string{"note": "fixed"}, nil); st != http.StatusOK {
		t.Fatalf("resolve: %d", st)
	}
	eventually(t, 30*time.Second, "the permanent error on the status", func() bool {
		view = nil
		return e.call(t, "GET", "/v1/integrations/slack", owner, nil, &view) == http.StatusOK &&
			view["status"] == "stopped" && view["lastError"] == "not_in_channel"
	})
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		for key, name := range map[string]string{slack.KeyRoot: "slack-root.json", slack.KeyThread: "slack-thread.json",
			slack.RemediationKey(rem.RemediationID): "slack-remediation.json"} {
			e.writeSlackHistory(t, slack.MessageWorkflowID(tenantID, incID, key), name)
		}
	}
}

// writeSlackHistory exports a message workflow's history for the replay
// tests, once it has closed.
func (e *env) writeSlackHistory(t *testing.T, workflowID, name string) {
	t.Helper()
	// A message still waiting for a change ends at its next refresh, which
	// finds sending stopped.
	_ = e.Temporal.SignalWorkflow(context.Background(), workflowID, "", slack.SignalRefresh, nil)
	e.writeHistory(t, workflowID, name)
}

// TestSlackWorkerKilledWhilePostingPostsOnce SIGKILLs the worker process
// while Slack holds back its answer to the root message's chat.postMessage:
// Slack has the message, Causeway never recorded its ts. The next worker's
// retry finds the message by its metadata key and edits it, so the channel
// holds exactly one root message.
func TestSlackWorkerKilledWhilePostingPostsOnce(t *testing.T) {
	fake := slackfake.New(t, slackChannel)
	arrived, release := fake.HoldNextPost()
	t.Cleanup(release)
	cfg := testConfig(t)
	cfg.SlackAPIURL = fake.URL
	t.Setenv("CAUSEWAY_SLACK_API_URL", fake.URL) // the worker processes read it
	e := startEnv(t, cfg, false)
	bin := buildWorker(t)
	first := workerProcess(t, bin, e, "worker-1.log")

	owner, tenantID := e.signup(t, "Acme")
	put := map[string]any{"botToken": fake.Token, "signingSecret": slackSecret, "channel": slackChannel}
	if st := e.call(t, "PUT", "/v1/integrations/slack", owner, put, nil); st != http.StatusOK {
		t.Fatalf("connect: %d", st)
	}
	incID := e.openIncident(t, owner, "Payments down", "Payments API answers 502 for every request since 03:12")
	select {
	case <-arrived:
	case <-time.After(90 * time.Second):
		t.Fatal("the root message was never posted")
	}
	_ = first.Process.Signal(os.Kill)
	_ = first.Wait()
	release()
	workerProcess(t, bin, e, "worker-2.log")

	var root slackfake.Message
	eventually(t, 2*time.Minute, "the retried send to edit the posted message and the thread to follow", func() bool {
		var tops []slackfake.Message
		replies := 0
		for _, m := range fake.Messages() {
			if m.ThreadTS == "" {
				tops = append(tops, m)
			} else {
				replies++
			}
		}
		if len(tops) > 1 {
			t.Fatalf("%d root messages after the crash, want exactly 1", len(tops))
		}
		if len(tops) == 1 {
			root = tops[0]
		}
		return len(tops) == 1 && root.Updates >= 1 && replies >= 1
	})
	row, err := slack.NewStore(e.Store.DB()).Message(context.Background(), slack.MessageID(tenantID, incID, slack.KeyRoot))
	if err != nil || row.TS != root.TS {
		t.Fatalf("recorded root message %+v, %v; Slack has ts %s", row, err, root.TS)
	}
	if n := fake.Calls("conversations.history"); n < 1 {
		t.Fatalf("the retry never looked for the posted message")
	}
}
