package slack

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/slack/slackfake"
)

const testSecretsKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// rig is the activities on a real database against the fake workspace.
type rig struct {
	acts  *Activities
	fake  *slackfake.Server
	store *Store
	db    *models.Store
	in    MessageInput
}

func newRig(t *testing.T) *rig {
	t.Helper()
	db := testdb.Open(t)
	sealer, err := auth.NewSealer(testSecretsKey)
	if err != nil {
		t.Fatal(err)
	}
	fake := slackfake.New(t, testChannel)
	ctx := context.Background()
	now := time.Now().UTC()
	must(t, db.DB().Create(&models.Tenant{ID: "ten_a", Name: "A", QuotaEvents: 10, QuotaInvestigations: 10, CreatedAt: now}).Error)
	must(t, db.DB().Create(&models.Incident{ID: "inc_a", TenantID: "ten_a", Title: "Checkout down", Description: "d", Severity: "high",
		Status: models.StatusTriaging, Source: "manual", Service: "checkout", CreatedAt: now, UpdatedAt: now}).Error)
	store := NewStore(db.DB())
	must(t, store.SaveIntegration(ctx, &Integration{TenantID: "ten_a", Channel: testChannel, MinSeverity: "info", Status: StatusActive,
		BotTokenEnc:      sealer.Encrypt([]byte(fake.Token), []byte(aadBotToken+"ten_a")),
		SigningSecretEnc: sealer.Encrypt([]byte("sign"), []byte(aadSigningSecret+"ten_a")), CreatedAt: now, UpdatedAt: now}, false))
	acts := &Activities{Store: store, Models: db, Sealer: sealer, HTTP: http.DefaultClient, APIURL: fake.URL,
		IncidentURL: func(id string) string { return "http://causeway.test/ui/incidents/" + id }}
	return &rig{acts: acts, fake: fake, store: store, db: db, in: MessageInput{TenantID: "ten_a", IncidentID: "inc_a", Key: KeyRoot}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRootMessagePostedOnceThenUpdatedInPlace(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for range 2 {
		if out, err := r.acts.SyncMessage(ctx, r.in); err != nil || out.Done {
			t.Fatalf("sync = %+v, %v", out, err)
		}
	}
	msgs := r.fake.Messages()
	if len(msgs) != 1 || msgs[0].Updates != 0 || !strings.Contains(msgs[0].Text, "Checkout down") {
		t.Fatalf("after two syncs of the same state: %+v", msgs)
	}
	must(t, r.db.DB().Model(&models.Incident{}).Where("id = ?", "inc_a").Update("status", models.StatusResolved).Error)
	out, err := r.acts.SyncMessage(ctx, r.in)
	if err != nil || !out.Done {
		t.Fatalf("sync of the resolved incident = %+v, %v", out, err)
	}
	msgs = r.fake.Messages()
	if len(msgs) != 1 || msgs[0].Updates != 1 || !strings.Contains(msgs[0].Text, "resolved") {
		t.Fatalf("the resolution should edit the one message: %+v", msgs)
	}
	if msgs[0].Metadata["event_type"] != "causeway_message" {
		t.Fatalf("message not stamped with its key: %+v", msgs[0].Metadata)
	}
}

// TestCrashBetweenPostAndRecordPostsOnce simulates a worker dying after Slack
// accepted the post and before the ts was recorded: the retried activity
// finds the message by its metadata key and edits it instead of posting.
func TestCrashBetweenPostAndRecordPostsOnce(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.acts.afterPost = func() error { return errors.New("worker killed") }
	if _, err := r.acts.SyncMessage(ctx, r.in); err == nil {
		t.Fatal("the crashed attempt reported success")
	}
	r.acts.afterPost = nil
	must(t, r.db.DB().Model(&models.Incident{}).Where("id = ?", "inc_a").Update("status", models.StatusInvestigating).Error)
	if _, err := r.acts.SyncMessage(ctx, r.in); err != nil {
		t.Fatalf("retry: %v", err)
	}
	msgs := r.fake.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages after a crash and a retry, want exactly 1", len(msgs))
	}
	if msgs[0].Updates != 1 || !strings.Contains(msgs[0].Text, "investigating") {
		t.Fatalf("the retry should have edited the message to the new state: %+v", msgs[0])
	}
	if r.fake.Calls("chat.postMessage") != 1 || r.fake.Calls("conversations.history") != 1 {
		t.Fatalf("calls: post %d, history %d", r.fake.Calls("chat.postMessage"), r.fake.Calls("conversations.history"))
	}
}

func TestSendFailuresAreClassified(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()

	r.fake.Fail("chat.postMessage", slackfake.Fault{Status: 429, RetryAfter: 30})
	_, err := r.acts.SyncMessage(ctx, r.in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeRateLimited || app.NonRetryable() || app.NextRetryDelay() != 30*time.Second {
		t.Fatalf("429: %v, want a retry after Retry-After", err)
	}
	r.fake.Fail("chat.postMessage", slackfake.Fault{Status: 502})
	_, err = r.acts.SyncMessage(ctx, r.in)
	if !errors.As(err, &app) || app.Type() != ErrTypeUnavailable || app.NonRetryable() {
		t.Fatalf("502: %v, want retryable", err)
	}
	if len(r.fake.Messages()) != 0 {
		t.Fatal("a failed post left a message")
	}
	r.fake.Fail("chat.postMessage", slackfake.Fault{Error: "not_in_channel"})
	out, err := r.acts.SyncMessage(ctx, r.in)
	if err != nil || !out.Done || out.Stopped != "not_in_channel" {
		t.Fatalf("not_in_channel: %+v, %v; want a clean stop", out, err)
	}
	integ, err := r.store.Integration(ctx, "ten_a")
	if err != nil || integ.Status != StatusStopped || integ.LastError != "not_in_channel" || integ.LastErrorAt == nil {
		t.Fatalf("integration after a permanent error: %+v, %v", integ, err)
	}
	// A stopped integration sends nothing more.
	posts := r.fake.Calls("chat.postMessage")
	if out, err := r.acts.SyncMessage(ctx, r.in); err != nil || !out.Done || r.fake.Calls("chat.postMessage") != posts {
		t.Fatalf("stopped integration still sent: %+v, %v", out, err)
	}
}

func TestThreadReplyWaitsForTheRootMessage(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	e := &models.TimelineEntry{TenantID: "ten_a", IncidentID: "inc_a", At: time.Now().UTC(), Kind: "triaged", Message: "severity high", Actor: "system", DedupKey: "k1"}
	must(t, r.db.AddTimeline(ctx, e))
	reply := MessageInput{TenantID: "ten_a", IncidentID: "inc_a", Key: TimelineKey(e.ID)}
	_, err := r.acts.SyncMessage(ctx, reply)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeRootPending {
		t.Fatalf("reply before the root: %v", err)
	}
	pending, err := r.acts.PendingTimeline(ctx, r.in)
	if err != nil || len(pending.EntryIDs) != 1 || pending.EntryIDs[0] != e.ID {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	_, err = r.acts.SyncMessage(ctx, r.in)
	must(t, err)
	if out, err := r.acts.SyncMessage(ctx, reply); err != nil || !out.Done {
		t.Fatalf("reply: %+v, %v", out, err)
	}
	msgs := r.fake.Messages()
	if len(msgs) != 2 || msgs[1].ThreadTS != msgs[0].TS || !strings.Contains(msgs[1].Text, "severity high") {
		t.Fatalf("thread: %+v", msgs)
	}
	if pending, _ := r.acts.PendingTimeline(ctx, r.in); len(pending.EntryIDs) != 0 {
		t.Fatalf("posted entry still pending: %+v", pending)
	}
}

// TestCrashBetweenPostAndRecordOfAReplyPostsOnce is the crash test for a
// thread reply, which is found again among the thread's replies.
func TestCrashBetweenPostAndRecordOfAReplyPostsOnce(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	_, err := r.acts.SyncMessage(ctx, r.in)
	must(t, err)
	e := &models.TimelineEntry{TenantID: "ten_a", IncidentID: "inc_a", At: time.Now().UTC(), Kind: "triaged", Message: "severity high", Actor: "system", DedupKey: "k2"}
	must(t, r.db.AddTimeline(ctx, e))
	reply := MessageInput{TenantID: "ten_a", IncidentID: "inc_a", Key: TimelineKey(e.ID)}
	r.acts.afterPost = func() error { return errors.New("worker killed") }
	if _, err := r.acts.SyncMessage(ctx, reply); err == nil {
		t.Fatal("the crashed attempt reported success")
	}
	r.acts.afterPost = nil
	if _, err := r.acts.SyncMessage(ctx, reply); err != nil {
		t.Fatalf("retry: %v", err)
	}
	msgs := r.fake.Messages()
	if len(msgs) != 2 || msgs[1].ThreadTS != msgs[0].TS || r.fake.Calls("conversations.replies") != 1 {
		t.Fatalf("want the root and one reply, found again among the replies: %+v (replies calls %d)", msgs, r.fake.Calls("conversations.replies"))
	}
	if pending, _ := r.acts.PendingTimeline(ctx, r.in); len(pending.EntryIDs) != 0 {
		t.Fatalf("the reply is still pending: %+v", pending)
	}
}
