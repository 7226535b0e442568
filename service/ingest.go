package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
	"github.com/causeway/causeway/ratelimit"
)

// Outcomes of one ingested alert, as the webhook response reports them.
const (
	IngestIgnored   = "ignored"
	IngestConfirmed = "subscription_confirmed"
)

const (
	// webhookAuthMessage is the single answer to every authentication failure of a
	// webhook, so a caller cannot learn whether the key, its tenant, its status or
	// the signature was wrong.
	webhookAuthMessage = "a valid API key for this tenant and a valid webhook signature are required"
	keyTouchInterval   = time.Minute
	confirmTimeout     = 10 * time.Second
	// keyLookupTimeout bounds a key lookup, which runs detached from the request
	// because concurrent requests share it; without it a stuck database would hold
	// every waiter forever.
	keyLookupTimeout = 5 * time.Second
	// resolveTimeout bounds a provider's resolved notification, which waits on a
	// Temporal update: PagerDuty abandons a delivery after 5 s, so answering 503
	// before then makes it retry (the update id "resolve" keeps that idempotent).
	resolveTimeout = 4 * time.Second
)

// Reasons a presented key is refused after it passed the checksum; they reach
// the server log only, never the client.
var (
	errKeyUnknown = errors.New("unknown")
	errKeyRevoked = errors.New("revoked")
)

// Ingest turns authenticated webhook deliveries into incidents. It answers as soon
// as an incident is committed; the dispatcher, kicked after each commit, starts the
// IncidentWorkflow, so a slow or unreachable Temporal does not delay a new alert
// (and never loses one: the row is the queue). A provider's resolved notification
// is the exception: it waits on the workflow's resolve update, at most
// resolveTimeout, and is answered 503 when Temporal is slower, so the tool retries.
type Ingest struct {
	store      *models.Store
	keys       *identity.Store
	incidents  *investigation.Incidents
	dispatcher *investigation.Dispatcher
	registry   *providers.Registry
	sealer     *auth.Sealer
	confirm    *http.Client
	log        *slog.Logger
	now        func() time.Time
	writer     *incidentWriter
	recent     *recentAlerts
	marks      ratelimit.Marks
	grouping   *groupingCache
	// resolveWait is resolveTimeout; a test shortens it to tell the bound
	// apart from the Temporal client's own, longer deadline.
	resolveWait time.Duration
}

// NewIngest wires the ingestion service. confirm is the SSRF-guarded client that
// confirms SNS subscriptions; incidents provides the shared resolve path; marks
// is the store every API replica shares (the limiter's backend) for the
// negative key cache and the replay cache.
func NewIngest(store *models.Store, incidents *investigation.Incidents, d *investigation.Dispatcher, reg *providers.Registry, sealer *auth.Sealer, confirm *http.Client, marks ratelimit.Marks, log *slog.Logger) *Ingest {
	return &Ingest{store: store, keys: identity.NewStore(store.DB()), incidents: incidents, dispatcher: d, registry: reg, sealer: sealer, confirm: confirm, log: log, now: time.Now,
		writer: newIncidentWriter(store), recent: &recentAlerts{}, marks: marks, grouping: newGroupingCache(store, time.Now), resolveWait: resolveTimeout}
}

// unknownKeyTTL is how long every replica answers a refused key without a
// lookup. Keys are random, so an unknown one cannot become valid, and a
// revoked one is never valid again; the bound only keeps the cache small.
const unknownKeyTTL = 30 * time.Second

// WebhookKey is an API key that passed every check, with its decrypted secret.
type WebhookKey struct {
	ID       string
	TenantID string
	// Routes are the webhook routes the key may post to; empty is all.
	Routes []string
	secret []byte
}

// Allows reports whether the key may post to route (a provider's name,
// "change" or "github").
func (k *WebhookKey) Allows(route string) bool {
	return len(k.Routes) == 0 || slices.Contains(k.Routes, route)
}

// AlertOutcome is what became of one alert of a delivery.
type AlertOutcome struct {
	IncidentID string
	Status     string // the incident's status, or IngestIgnored
	Duplicate  bool
	// Grouped means the alert joined the running incident IncidentID instead
	// of opening one (README, "Alert grouping").
	Grouped bool
	Reason  string // why it was ignored
}

// IngestResult is the outcome of one delivery: a confirmation, an ignored
// delivery, or one outcome per alert.
type IngestResult struct {
	Confirmed bool
	Ignored   bool
	Reason    string
	Alerts    []AlertOutcome
}

// Provider finds the provider named in the path.
func (s *Ingest) Provider(name string) (providers.Provider, error) {
	p, ok := s.registry.Lookup(name)
	if !ok {
		return nil, errcode.New(errcode.NotFound, "unknown webhook provider %q", name)
	}
	return p, nil
}

func denyWebhook() *errcode.Error { return errcode.New(errcode.Unauthorized, webhookAuthMessage) }

// Authenticate checks raw as an active API key of tenantID. The checksum test comes
// first so garbage never reaches the database; a key verified in the last
// keyCacheTTL is not looked up again (its last-use time is written on the lookups,
// well within keyTouchInterval), and concurrent requests with a key not cached
// share one lookup, so a burst after a restart does not open a connection each.
func (s *Ingest) Authenticate(ctx context.Context, tenantID, raw string) (*WebhookKey, error) {
	if !auth.ValidKeyChecksum(raw) {
		return nil, denyWebhook()
	}
	hash := auth.SHA256Hex(raw)
	if known, err := s.marks.Marked(ctx, "badkey:"+hash); err == nil && known {
		s.logKeyDenied(tenantID, raw, "refused_recently")
		return nil, denyWebhook()
	}
	k, err := verifiedKeys.load(hash, s.now(), func() (*WebhookKey, error) {
		// Shared by every request waiting on this key, so one hanging up must
		// not fail the others; the timeout still bounds it for all of them.
		vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyLookupTimeout)
		defer cancel()
		return s.verifyKey(vctx, hash)
	})
	switch {
	case errors.Is(err, errKeyUnknown), errors.Is(err, errKeyRevoked):
		s.logKeyDenied(tenantID, raw, err.Error())
		if _, merr := s.marks.Mark(ctx, "badkey:"+hash, unknownKeyTTL); merr != nil {
			s.log.Warn("could not remember a refused API key", slog.Any("error", merr))
		}
		return nil, denyWebhook()
	case err != nil:
		return nil, err
	case k.TenantID != tenantID:
		s.logKeyDenied(tenantID, raw, "tenant_mismatch")
		return nil, denyWebhook()
	}
	return k, nil
}

// logKeyDenied records why a well-formed key was refused, which the 401 hides.
// Only the key's display prefix is logged, the part its owner sees in the UI.
func (s *Ingest) logKeyDenied(tenantID, raw, reason string) {
	s.log.Info("webhook API key rejected", slog.String("tenant_id", tenantID),
		slog.String("key_prefix", auth.KeyDisplayPrefix(raw)), slog.String("reason", reason))
}

// verifyKey looks a key up by hash and decrypts its secret; anything but an
// active key is errKeyUnknown or errKeyRevoked, which Authenticate turns into
// the single 401.
func (s *Ingest) verifyKey(ctx context.Context, hash string) (*WebhookKey, error) {
	k, err := s.keys.APIKeyByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errKeyUnknown
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	if k.Status != identity.APIKeyActive {
		return nil, errKeyRevoked
	}
	secret, err := s.sealer.Decrypt(k.SecretEnc, []byte(k.ID))
	if err != nil {
		return nil, fmt.Errorf("webhook secret of API key %s cannot be decrypted (was SECRETS_KEY changed?): %w", k.ID, err)
	}
	now := s.now().UTC()
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > keyTouchInterval {
		if err := s.keys.TouchAPIKey(ctx, k.ID, now, keyTouchInterval); err != nil {
			s.log.Warn("could not record API key use", slog.String("key_id", k.ID), slog.Any("error", err))
		}
	}
	return &WebhookKey{ID: k.ID, TenantID: k.TenantID, Routes: k.Routes, secret: secret}, nil
}

// Receive verifies the delivery's signature with the key's secret, normalizes it
// and ingests each alert. A delivery whose every alert is a duplicate is the
// duplicate_alert error naming the first original incident.
func (s *Ingest) Receive(ctx context.Context, k *WebhookKey, p providers.Provider, r providers.Request) (*IngestResult, error) {
	if err := p.Verify(ctx, r, k.secret, s.now()); err != nil {
		var ae *providers.AuthError
		if errors.As(err, &ae) {
			s.log.Info("webhook signature rejected", slog.String("tenant_id", k.TenantID), slog.String("key_id", k.ID),
				slog.String("provider", p.Name()), slog.String("reason", ae.Reason))
		}
		return nil, denyWebhook()
	}
	replay, err := s.claimDelivery(ctx, k, p, r)
	if err != nil {
		return nil, err
	}
	res, err := s.receive(ctx, k, p, r)
	if err != nil && replay != "" {
		// Refused or failed: the sender may retry the same signed request.
		if e, ok := errcode.As(err); !ok || (e.Code != errcode.DuplicateAlert && e.Code != errcode.Unauthorized) {
			_ = s.marks.Forget(context.WithoutCancel(ctx), replay)
		}
	}
	return res, err
}

// claimDelivery refuses a signed delivery already accepted within its
// timestamp's window, by any replica, and claims it otherwise. It returns the
// claim's key ("" when the delivery carries no timestamped signature). When
// the shared store is down the delivery goes through, as with rate limits.
func (s *Ingest) claimDelivery(ctx context.Context, k *WebhookKey, p providers.Provider, r providers.Request) (string, error) {
	token, ok := providers.ReplayToken(p, r)
	if !ok {
		return "", nil
	}
	key := "replay:" + k.ID + ":" + auth.SHA256Hex(token)
	first, err := s.marks.Mark(ctx, key, providers.ReplayWindow)
	if err != nil {
		s.log.Warn("replay cache unavailable; accepting delivery", slog.Any("error", err))
		return "", nil
	}
	if !first {
		s.log.Info("webhook replay refused", slog.String("tenant_id", k.TenantID), slog.String("key_id", k.ID), slog.String("provider", p.Name()))
		return "", denyWebhook()
	}
	return key, nil
}

// receive normalizes an authenticated delivery and ingests its alerts.
func (s *Ingest) receive(ctx context.Context, k *WebhookKey, p providers.Provider, r providers.Request) (*IngestResult, error) {
	batch, err := p.Normalize(r)
	if err != nil {
		var pe *providers.PayloadError
		if errors.As(err, &pe) {
			return nil, errcode.Invalid("%s", pe.Msg)
		}
		return nil, err
	}
	if n := len(batch.Alerts); n > providers.MaxAlertsPerDelivery {
		return nil, errcode.Invalid("%s: %d alerts exceed the limit of %d per delivery; lower max_alerts", p.Name(), n, providers.MaxAlertsPerDelivery)
	}
	if batch.Topic != "" && batch.Confirm == nil {
		allowed, err := s.store.SNSTopicAllowed(ctx, k.TenantID, batch.Topic)
		if err != nil {
			return nil, errcode.Down("the database", err)
		}
		if !allowed {
			s.log.Info("sns notification from an unconfirmed topic refused", slog.String("tenant_id", k.TenantID),
				slog.String("topic_arn", batch.Topic))
			return nil, denyWebhook()
		}
	}
	switch {
	case batch.Ignored:
		s.log.Info("webhook delivery ignored", slog.String("tenant_id", k.TenantID), slog.String("provider", p.Name()),
			slog.String("reason", batch.Reason), slog.String("delivery_id", batch.DeliveryID))
		return &IngestResult{Ignored: true, Reason: batch.Reason}, nil
	case batch.Confirm != nil:
		return s.confirmSubscription(ctx, k, batch.Confirm)
	}
	res := &IngestResult{Alerts: make([]AlertOutcome, 0, len(batch.Alerts))}
	for _, a := range batch.Alerts {
		out, err := s.ingestOne(ctx, k.TenantID, p.Name(), a, len(batch.Alerts) == 1)
		if err != nil {
			return nil, err
		}
		res.Alerts = append(res.Alerts, out)
	}
	return res, allDuplicates(res.Alerts)
}

// allDuplicates is the 409 for a delivery that added nothing new.
func allDuplicates(alerts []AlertOutcome) error {
	for _, a := range alerts {
		if !a.Duplicate {
			return nil
		}
	}
	if len(alerts) == 0 {
		return nil
	}
	e := errcode.New(errcode.DuplicateAlert, "an alert with this sourceAlertId was already received; see incident %s", alerts[0].IncidentID)
	e.Extra = map[string]any{"incidentId": alerts[0].IncidentID}
	return e
}

// ingestOne records one alert of a delivery; alone says the delivery carried
// only this one, so a duplicate's answer is the bare 409.
func (s *Ingest) ingestOne(ctx context.Context, tenantID, provider string, a providers.Alert, alone bool) (AlertOutcome, error) {
	if a.Resolved {
		return s.resolveAlert(ctx, tenantID, provider, a)
	}
	// A retry of an alert this process saw is most likely a duplicate: a read
	// answers it without queueing for a write. Any other alert goes straight to
	// the writer, where the unique index decides.
	inc := newAlertIncident(tenantID, provider, a, s.now().UTC())
	window, err := s.groupingFor(ctx, tenantID)
	if err != nil {
		return AlertOutcome{}, errcode.Down("the database", err)
	}
	if window > 0 {
		return s.ingestGrouped(ctx, inc, window)
	}
	key := dedupKey(inc)
	if id, seen := s.recent.lookup(key); seen {
		if id != "" && alone {
			// The answer is the 409 naming the incident, which needs nothing
			// else; a delivery of several alerts reports each one's status, read
			// below.
			return AlertOutcome{IncidentID: id, Duplicate: true}, nil
		}
		out, found, err := s.original(ctx, tenantID, provider, a.SourceAlertID)
		if found {
			s.recent.remember(key, out.IncidentID)
		}
		if found || err != nil {
			return out, err
		}
	}
	defer s.recent.add(key)
	err = s.writer.create(inc, models.TimelineEntry{
		At: inc.CreatedAt, Kind: "alert_received", Message: "Alert received from " + provider,
		Actor: provider, DedupKey: inc.ID + "/alert_received",
	})
	switch {
	case errors.Is(err, models.ErrConflict):
		// Another delivery of the same alert won, and its transaction committed
		// before ours skipped the row, so read the winner.
		out, found, err := s.original(ctx, tenantID, provider, a.SourceAlertID)
		if err == nil && !found {
			err = fmt.Errorf("alert %q conflicted but its incident is not found", a.SourceAlertID)
		}
		if found {
			s.recent.remember(key, out.IncidentID)
		}
		return out, err
	case errors.Is(err, models.ErrQuotaExceeded):
		return AlertOutcome{}, errcode.New(errcode.EventQuotaExceeded, "the monthly event quota of this tenant is used up; it resets on the 1st (UTC)")
	case errors.Is(err, errWriterBacklog):
		return AlertOutcome{}, errcode.Down("alert ingestion", err)
	case err != nil:
		return AlertOutcome{}, errcode.Down("the database", err)
	}
	s.recent.remember(key, inc.ID)
	s.dispatcher.Kick()
	s.log.Info("alert ingested", slog.String("tenant_id", tenantID), slog.String("provider", provider), slog.String("incident_id", inc.ID))
	return AlertOutcome{IncidentID: inc.ID, Status: inc.Status}, nil
}

// original finds the incident an earlier delivery of the alert created.
func (s *Ingest) original(ctx context.Context, tenantID, provider, sourceAlertID string) (AlertOutcome, bool, error) {
	if sourceAlertID == "" {
		return AlertOutcome{}, false, nil
	}
	inc, err := s.store.IncidentBySourceAlert(ctx, tenantID, provider, sourceAlertID)
	if errors.Is(err, models.ErrNotFound) {
		return AlertOutcome{}, false, nil
	}
	if err != nil {
		return AlertOutcome{}, false, errcode.Down("the database", err)
	}
	return AlertOutcome{IncidentID: inc.ID, Status: inc.Status, Duplicate: true}, true, nil
}

func newAlertIncident(tenantID, provider string, a providers.Alert, now time.Time) *models.Incident {
	desc := a.Description
	if desc == "" {
		desc = a.Title
	}
	return &models.Incident{
		ID: models.NewID("inc"), TenantID: tenantID, Title: a.Title, Description: desc,
		Severity: a.Severity, Status: models.StatusTriaging, Source: provider, SourceAlertID: a.SourceAlertID,
		Service: a.Service, Environment: a.Environment, Tags: a.Tags, Metadata: a.Metadata,
		CreatedAt: now, UpdatedAt: now, AlertCount: 1,
	}
}

// resolveAlert resolves the incident of a known alert through the same workflow
// update as POST /v1/incidents/{id}/resolve, with the provider as the actor. An
// incident already resolved answers the same, because providers retry; an update
// slower than resolveTimeout is 503, so the provider retries before giving up.
func (s *Ingest) resolveAlert(ctx context.Context, tenantID, provider string, a providers.Alert) (AlertOutcome, error) {
	ignored := AlertOutcome{Status: IngestIgnored, Reason: "resolved notification for an alert that opened no incident"}
	if a.SourceAlertID == "" {
		return ignored, nil
	}
	inc, err := s.store.IncidentBySourceAlert(ctx, tenantID, provider, a.SourceAlertID)
	if errors.Is(err, models.ErrNotFound) {
		return ignored, nil
	}
	if err != nil {
		return AlertOutcome{}, errcode.Down("the database", err)
	}
	// ResolveAs answers a timed-out update as unavailable (503).
	rctx, cancel := context.WithTimeout(ctx, s.resolveWait)
	defer cancel()
	err = s.incidents.ResolveAs(rctx, inc, provider, "resolved notification from "+provider)
	if e, ok := errcode.As(err); err != nil && (!ok || e.Code != errcode.InvalidStatus) {
		return AlertOutcome{}, err
	}
	return AlertOutcome{IncidentID: inc.ID, Status: models.StatusResolved}, nil
}

// confirmSubscription GETs the SNS SubscribeURL (already checked to be an SNS host)
// through the SSRF-guarded client. A failure is 503 so SNS retries the delivery.
func (s *Ingest) confirmSubscription(ctx context.Context, k *WebhookKey, c *providers.Confirmation) (*IngestResult, error) {
	cctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return nil, errcode.Invalid("SubscribeURL is not a valid URL")
	}
	resp, err := s.confirm.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			err = fmt.Errorf("SubscribeURL answered %d", resp.StatusCode)
		}
	}
	if err != nil {
		return nil, errcode.Down("confirming the SNS subscription", err)
	}
	// From now on this tenant accepts notifications from the topic.
	if err := s.store.AllowSNSTopic(ctx, &models.SNSTopic{TenantID: k.TenantID, TopicArn: c.TopicArn, APIKeyID: k.ID,
		ConfirmedAt: s.now().UTC()}); err != nil {
		return nil, errcode.Down("the database", err)
	}
	s.log.Info("sns subscription confirmed", slog.String("tenant_id", k.TenantID), slog.String("topic_arn", c.TopicArn))
	return &IngestResult{Confirmed: true}, nil
}
