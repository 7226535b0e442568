package slack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/models"
)

// Error types of the send activity, for the retry policy.
const (
	// ErrTypeRejected is Slack refusing the message itself (invalid_blocks,
	// msg_too_long): the same send fails the same way, so it is not retried.
	ErrTypeRejected = "SlackRejected"
	// ErrTypeRateLimited is a 429; the retry waits Slack's Retry-After.
	ErrTypeRateLimited = "SlackRateLimited"
	// ErrTypeUnavailable is a 5xx or a network failure, retried with backoff.
	ErrTypeUnavailable = "SlackUnavailable"
	// ErrTypeRootPending is a thread reply whose root message is not posted
	// yet; the retry finds it posted.
	ErrTypeRootPending = "SlackRootPending"
)

// MetadataEventType stamps the messages Causeway posts; the payload's key is
// the message's ID, by which a retried send finds a message it already posted.
const MetadataEventType = "causeway_message"

// Activities sends messages. It loads the token and every text itself, so
// workflow history only ever holds message keys.
type Activities struct {
	Store  *Store
	Models *models.Store
	Sealer *auth.Sealer
	// HTTP is the egress client; APIURL is CAUSEWAY_SLACK_API_URL.
	HTTP   *http.Client
	APIURL string
	// IncidentURL links an incident in the dashboard; nil leaves links out.
	IncidentURL func(incidentID string) string
	// Remediations reads proposals for their messages.
	Remediations Remediations

	now func() time.Time
	// afterPost runs between a post and its record; tests crash there.
	afterPost func() error
}

func (a *Activities) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// rendered is a message's content and where it goes.
type rendered struct {
	text   string
	blocks []Block
	thread bool // a reply in the root message's thread
	final  bool // the message will not change again
}

// SyncMessage brings one message up to date: it posts it the first time,
// updates it in place when its content changed, and does nothing otherwise.
func (a *Activities) SyncMessage(ctx context.Context, in MessageInput) (SyncOutput, error) {
	integ, err := a.Store.Integration(ctx, in.TenantID)
	if errors.Is(err, ErrNotFound) {
		return SyncOutput{Done: true, Stopped: "not_connected"}, nil
	}
	if err != nil {
		return SyncOutput{}, err
	}
	if integ.Status != StatusActive {
		return SyncOutput{Done: true, Stopped: integ.LastError}, nil
	}
	r, err := a.render(ctx, in)
	if errors.Is(err, ErrNotFound) {
		return SyncOutput{Done: true}, nil
	}
	if err != nil {
		return SyncOutput{}, err
	}
	client, err := openClient(a.Sealer, a.APIURL, a.HTTP, integ)
	if err != nil {
		return SyncOutput{}, temporal.NewNonRetryableApplicationError("open the bot token", ErrTypeRejected, err)
	}
	err = a.deliver(ctx, client, integ, in, r)
	if err == nil {
		return SyncOutput{Done: r.final}, nil
	}
	return a.classify(ctx, integ.TenantID, err)
}

// classify turns a send's failure into the retry policy's terms, and records
// Slack's refusals on the integration so the dashboard shows them.
func (a *Activities) classify(ctx context.Context, tenantID string, err error) (SyncOutput, error) {
	apiErr, ok := AsAPIError(err)
	switch {
	case ok && apiErr.Permanent():
		if rerr := a.Store.RecordError(ctx, tenantID, apiErr.Code, true, a.clock()); rerr != nil {
			return SyncOutput{}, rerr
		}
		return SyncOutput{Done: true, Stopped: apiErr.Code}, nil
	case ok && apiErr.Status == http.StatusTooManyRequests:
		return SyncOutput{}, temporal.NewApplicationErrorWithOptions(apiErr.Error(), ErrTypeRateLimited,
			temporal.ApplicationErrorOptions{NextRetryDelay: apiErr.RetryAfter})
	case ok && apiErr.Retryable():
		return SyncOutput{}, temporal.NewApplicationError(apiErr.Error(), ErrTypeUnavailable)
	case ok:
		_ = a.Store.RecordError(ctx, tenantID, apiErr.Code, false, a.clock())
		return SyncOutput{}, temporal.NewNonRetryableApplicationError(apiErr.Error(), ErrTypeRejected, nil)
	case egress.IsBlocked(err):
		return SyncOutput{}, temporal.NewNonRetryableApplicationError("the Slack API address is refused by the egress policy", ErrTypeRejected, nil)
	}
	return SyncOutput{}, err
}

// deliver posts or updates the message. A post is preceded by a durable
// "posting" mark; a send that finds the mark without a ts looks the message up
// by its metadata key and updates it, so a crash between post and record
// never leaves two messages.
func (a *Activities) deliver(ctx context.Context, c *Client, integ *Integration, in MessageInput, r rendered) error {
	id := MessageID(in.TenantID, in.IncidentID, in.Key)
	msg := Message{Channel: integ.Channel, Text: r.text, Blocks: r.blocks,
		Metadata: &Metadata{EventType: MetadataEventType, EventPayload: map[string]string{"key": id}}}
	hash := contentHash(msg)
	if r.thread {
		root, err := a.Store.Message(ctx, MessageID(in.TenantID, in.IncidentID, KeyRoot))
		if err != nil || root.TS == "" {
			return temporal.NewApplicationError("the root message is not posted yet", ErrTypeRootPending)
		}
		msg.ThreadTS = root.TS
		// A proposal is also shown in the channel, where approvers look.
		msg.Broadcast = isRemediation(in.Key)
	}
	row, err := a.Store.Message(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		now := a.clock().UTC()
		row = &SentMessage{ID: id, TenantID: in.TenantID, IncidentID: in.IncidentID, Key: in.Key, Channel: integ.Channel, PostingAt: &now, UpdatedAt: now}
		if err := a.Store.BeginPosting(ctx, row); err != nil {
			return err
		}
	case err != nil:
		return err
	case row.TS != "":
		return a.update(ctx, c, row, msg, hash)
	default:
		// A previous attempt marked the post and may have made it.
		ts, err := c.FindMessage(ctx, row.Channel, msg.ThreadTS, id)
		if err != nil {
			return err
		}
		if ts != "" {
			row.TS = ts
			return a.update(ctx, c, row, msg, hash)
		}
	}
	channel, ts, err := c.PostMessage(ctx, msg)
	if err != nil {
		return err
	}
	if a.afterPost != nil {
		if err := a.afterPost(); err != nil {
			return err
		}
	}
	return a.Store.RecordPosted(ctx, id, channel, ts, hash, a.clock())
}

// update edits the posted message when its content changed.
func (a *Activities) update(ctx context.Context, c *Client, row *SentMessage, msg Message, hash string) error {
	if row.ContentHash == hash {
		return nil
	}
	msg.Channel, msg.TS = row.Channel, row.TS
	if err := c.UpdateMessage(ctx, msg); err != nil {
		return err
	}
	return a.Store.RecordPosted(ctx, row.ID, row.Channel, row.TS, hash, a.clock())
}

func isRemediation(key string) bool { kind, _ := keyKind(key); return kind == keyRemediationPrefix }

func contentHash(m Message) string {
	raw, _ := json.Marshal(struct {
		Text   string
		Blocks []Block
	}{m.Text, m.Blocks})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// render loads what the message shows now.
func (a *Activities) render(ctx context.Context, in MessageInput) (rendered, error) {
	kind, ref := keyKind(in.Key)
	switch kind {
	case KeyRoot:
		return a.renderRoot(ctx, in)
	case keyRemediationPrefix:
		p, err := a.Remediations.Proposal(ctx, in.TenantID, ref)
		if err != nil {
			return rendered{}, err
		}
		if p.IncidentID != in.IncidentID {
			return rendered{}, ErrNotFound
		}
		text, blocks := RemediationMessage(p)
		final := p.Status == statusRejected || p.Status == statusCompleted || p.Status == statusFailed
		return rendered{text: text, blocks: blocks, thread: true, final: final}, nil
	case keyTimelinePrefix:
		n, err := strconv.ParseUint(ref, 10, 64)
		if err != nil {
			return rendered{}, ErrNotFound
		}
		e, err := a.Store.TimelineEntry(ctx, in.TenantID, in.IncidentID, n)
		if err != nil {
			return rendered{}, err
		}
		text, blocks := TimelineMessage(e.Kind, e.Message, e.Actor)
		return rendered{text: text, blocks: blocks, thread: true, final: true}, nil
	}
	return rendered{}, ErrNotFound
}

func (a *Activities) renderRoot(ctx context.Context, in MessageInput) (rendered, error) {
	inc, err := a.Models.GetIncident(ctx, in.TenantID, in.IncidentID)
	if errors.Is(err, models.ErrNotFound) {
		return rendered{}, ErrNotFound
	}
	if err != nil {
		return rendered{}, err
	}
	v := IncidentView{ID: inc.ID, Title: inc.Title, Severity: inc.Severity, Status: inc.Status,
		Service: inc.Service, Environment: inc.Environment}
	if a.IncidentURL != nil {
		v.DashboardURL = a.IncidentURL(inc.ID)
	}
	inv, err := a.Models.LatestInvestigation(ctx, in.TenantID, in.IncidentID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return rendered{}, err
	}
	if inv != nil {
		if err := a.describePass(ctx, inv, &v); err != nil {
			return rendered{}, err
		}
	}
	text, blocks := IncidentMessage(v)
	return rendered{text: text, blocks: blocks, final: inc.Status == models.StatusResolved}, nil
}

// describePass adds the latest pass to the view: per-agent progress while it
// runs, its answer once it completed.
func (a *Activities) describePass(ctx context.Context, inv *models.Investigation, v *IncidentView) error {
	if inv.Status == "running" {
		runs, err := a.Models.AgentRuns(ctx, inv.ID)
		if err != nil {
			return err
		}
		done := 0
		for _, r := range runs {
			if r.Status != "running" && r.Status != "" {
				done++
			}
		}
		v.Progress = fmt.Sprintf("Investigating: %d of %d agents reported (%s)", done, len(inv.Agents), joinSorted(inv.Agents))
		return nil
	}
	v.Category, v.Confidence, v.RootCause = inv.Category, inv.Confidence, inv.RootCause
	if inv.Culprit != nil {
		v.Culprit = inv.Culprit.String()
		if inv.Mechanism != "" {
			v.Culprit += " — " + inv.Mechanism
		}
	}
	if len(inv.Evidence) > 0 {
		ev := inv.Evidence[0]
		v.Evidence, v.EvidenceRole = clip(ev.Content, 600), ev.AgentRole
		if ev.Source != nil {
			v.EvidenceSource = sourceLabel(ev.Source.Kind, ev.Source.Type, ev.Source.Query)
		}
	}
	return nil
}

func sourceLabel(kind, typ, query string) string {
	out := kind
	if typ != "" {
		out += " " + typ
	}
	if query != "" {
		out += ": " + clip(query, 120)
	}
	return out
}

func joinSorted(s []string) string {
	c := slices.Clone(s)
	slices.Sort(c)
	return strings.Join(c, ", ")
}

// PendingOutput lists timeline entries still to be posted in the thread, in
// order; Final says the incident is resolved, so the thread is complete.
type PendingOutput struct {
	EntryIDs []uint64
	Final    bool
}

// PendingTimeline lists up to threadPage entries of the incident's timeline
// that have no reply in the thread yet.
func (a *Activities) PendingTimeline(ctx context.Context, in MessageInput) (PendingOutput, error) {
	inc, err := a.Models.GetIncident(ctx, in.TenantID, in.IncidentID)
	if errors.Is(err, models.ErrNotFound) {
		return PendingOutput{Final: true}, nil
	}
	if err != nil {
		return PendingOutput{}, err
	}
	entries, err := a.Models.Timeline(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return PendingOutput{}, err
	}
	posted, err := a.Store.PostedKeys(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return PendingOutput{}, err
	}
	var out PendingOutput
	for _, e := range entries {
		if !posted[TimelineKey(e.ID)] && len(out.EntryIDs) < threadPage {
			out.EntryIDs = append(out.EntryIDs, e.ID)
		}
	}
	out.Final = inc.Status == models.StatusResolved && len(out.EntryIDs) < threadPage
	return out, nil
}

// openClient unseals the integration's bot token into a Web API client.
func openClient(sealer *auth.Sealer, apiURL string, hc *http.Client, integ *Integration) (*Client, error) {
	token, err := sealer.Decrypt(integ.BotTokenEnc, []byte(aadBotToken+integ.TenantID))
	if err != nil {
		return nil, err
	}
	return NewClient(apiURL, hc, string(token)), nil
}

// Associated data of the sealed credentials: purpose and tenant.
const (
	aadBotToken      = "slack-bot-token|"
	aadSigningSecret = "slack-signing-secret|"
)
