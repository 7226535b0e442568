package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
	"github.com/causeway/causeway/ratelimit"
)

// Change sources: where a recorded change came from.
const (
	ChangeSourceCustom = "custom"
	ChangeSourceGitHub = "github"
)

// GitHub's webhook headers (docs/changes.md).
const (
	HeaderGitHubEvent     = "X-GitHub-Event"
	HeaderGitHubSignature = "X-Hub-Signature-256"
)

// Field bounds of a change body. They match the columns, so nothing stored is
// ever cut short.
const (
	maxChangeDescription = 4000
	maxChangeShort       = 200
	maxChangeURL         = 2000
	maxSourceChangeID    = 300
	// maxChangeFuture is how far ahead of the server clock a change may say it
	// started: clocks drift, but a change from next week is a mistake.
	maxChangeFuture = time.Hour
)

// Changes records what changed in a tenant's systems (deploys, config pushes,
// flag flips) and lists it. Changes count against no quota and start nothing:
// investigations read them when an incident needs them.
type Changes struct {
	store   *models.Store
	cursors *auth.Signer
	marks   ratelimit.Marks
	log     *slog.Logger
	now     func() time.Time
}

// NewChanges wires the change service. cursors signs list cursors; marks is
// the shared store that remembers signed deliveries within their replay window.
func NewChanges(store *models.Store, cursors *auth.Signer, marks ratelimit.Marks, log *slog.Logger) *Changes {
	return &Changes{store: store, cursors: cursors, marks: marks, log: log, now: time.Now}
}

// ChangeReceipt is the outcome of one change delivery. Created is false when
// the sender's id was already recorded (ChangeID is then the first one's), and
// Ignored when the delivery carried no change to record (Reason says why).
type ChangeReceipt struct {
	ChangeID string
	Created  bool
	Ignored  bool
	Reason   string
}

// changeBody is the custom change payload. Every field is a pointer or raw
// so the validator can tell "absent" from "empty" and name the bad field.
type changeBody struct {
	Service        *string `json:"service"`
	Environment    *string `json:"environment"`
	Kind           *string `json:"kind"`
	Version        *string `json:"version"`
	Description    *string `json:"description"`
	StartedAt      *string `json:"startedAt"`
	FinishedAt     *string `json:"finishedAt"`
	Author         *string `json:"author"`
	URL            *string `json:"url"`
	RevertOf       *string `json:"revertOf"`
	SourceChangeID *string `json:"sourceChangeId"`
}

// RecordCustom verifies a change delivery signed like a custom alert
// (X-Webhook-Signature with the key's webhook secret, optional
// X-Webhook-Timestamp) and records it.
func (s *Changes) RecordCustom(ctx context.Context, k *WebhookKey, h http.Header, body []byte) (*ChangeReceipt, error) {
	if len(h.Values(providers.HeaderSignature)) == 0 {
		s.logRejected(k, ChangeSourceCustom, "missing signature")
		return nil, denyWebhook()
	}
	ts, sig := h.Get(providers.HeaderTimestamp), h.Get(providers.HeaderSignature)
	if err := providers.VerifyHMAC(k.secret, body, sig, ts, s.now()); err != nil {
		s.logRejected(k, ChangeSourceCustom, err.Error())
		return nil, denyWebhook()
	}
	c, err := s.parseCustom(k.TenantID, body)
	if err != nil {
		return nil, err
	}
	if c.SourceChangeID == "" && strings.TrimSpace(ts) != "" {
		// Without its own id a change cannot be deduplicated, so the same signed
		// request sent again within its timestamp's window is refused as a replay.
		// One that names its id is idempotent instead, and answers 200.
		first, err := s.marks.Mark(ctx, "replay:"+k.ID+":"+auth.SHA256Hex("change:"+strings.TrimSpace(ts)+":"+strings.ToLower(strings.TrimSpace(sig))), providers.ReplayWindow)
		if err == nil && !first {
			s.logRejected(k, ChangeSourceCustom, "replay")
			return nil, denyWebhook()
		}
	}
	return s.record(ctx, c)
}

func (s *Changes) logRejected(k *WebhookKey, source, reason string) {
	s.log.Info("change delivery rejected", slog.String("tenant_id", k.TenantID), slog.String("key_id", k.ID),
		slog.String("source", source), slog.String("reason", reason))
}

// record stores c, or finds the change its sender already recorded.
func (s *Changes) record(ctx context.Context, c *models.Change) (*ChangeReceipt, error) {
	stored, created, err := s.store.RecordChange(ctx, c)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	if !created && stored.FinishedAt == nil && c.FinishedAt != nil {
		// The sender reported the start first and now the end of the same change.
		if err := s.store.FinishChange(ctx, c.TenantID, stored.ID, *c.FinishedAt); err != nil {
			return nil, errcode.Down("the database", err)
		}
	}
	return &ChangeReceipt{ChangeID: stored.ID, Created: created}, nil
}

// parseCustom validates a custom change body strictly: the sender wrote it and
// can fix it on a 400 that names the field.
func (s *Changes) parseCustom(tenantID string, body []byte) (*models.Change, error) {
	var b changeBody
	if err := decodeChange(body, &b); err != nil {
		return nil, err
	}
	c := &models.Change{TenantID: tenantID, Source: ChangeSourceCustom}
	var err error
	if c.Service, err = changeRequired("service", b.Service, maxChangeShort); err != nil {
		return nil, err
	}
	if c.Description, err = changeRequired("description", b.Description, maxChangeDescription); err != nil {
		return nil, err
	}
	kind, err := changeRequired("kind", b.Kind, maxChangeShort)
	if err != nil {
		return nil, err
	}
	c.Kind = strings.ToLower(kind)
	if !models.ValidChangeKind(c.Kind) {
		return nil, errcode.Invalid("kind must be one of %s", strings.Join(models.ChangeKinds, ", "))
	}
	for _, f := range []struct {
		name string
		in   *string
		out  *string
		max  int
	}{
		{"environment", b.Environment, &c.Environment, 100},
		{"version", b.Version, &c.Version, maxChangeShort},
		{"author", b.Author, &c.Author, maxChangeShort},
		{"revertOf", b.RevertOf, &c.RevertOf, maxChangeShort},
		{"sourceChangeId", b.SourceChangeID, &c.SourceChangeID, maxSourceChangeID},
		{"url", b.URL, &c.URL, maxChangeURL},
	} {
		if *f.out, err = changeOptional(f.name, f.in, f.max); err != nil {
			return nil, err
		}
	}
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errcode.Invalid("url must be an absolute http or https URL")
		}
	}
	if err := s.times(c, b.StartedAt, b.FinishedAt); err != nil {
		return nil, err
	}
	return c, nil
}

// times sets StartedAt (default: now) and FinishedAt and checks their order.
func (s *Changes) times(c *models.Change, started, finished *string) error {
	now := s.now().UTC()
	c.StartedAt = now
	if started != nil {
		t, err := changeTime("startedAt", *started)
		if err != nil {
			return err
		}
		c.StartedAt = t
	}
	if c.StartedAt.After(now.Add(maxChangeFuture)) {
		return errcode.Invalid("startedAt must not be more than %s in the future", maxChangeFuture)
	}
	if finished != nil {
		t, err := changeTime("finishedAt", *finished)
		if err != nil {
			return err
		}
		if t.Before(c.StartedAt) {
			return errcode.Invalid("finishedAt must not be before startedAt")
		}
		c.FinishedAt = &t
	}
	return nil
}

func changeTime(field, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, errcode.Invalid("%s must be an RFC 3339 time such as 2025-01-31T14:05:00Z", field)
	}
	return t.UTC(), nil
}

// decodeChange decodes one JSON object, naming the field whose type is wrong.
func decodeChange(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errcode.Invalid("%s must be a string", te.Field)
		}
		return errcode.Invalid("body must be a JSON object")
	}
	if dec.More() {
		return errcode.Invalid("body must be a single JSON object")
	}
	return nil
}

func changeRequired(field string, v *string, max int) (string, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return "", errcode.Invalid("%s is required", field)
	}
	return changeOptional(field, v, max)
}

func changeOptional(field string, v *string, max int) (string, error) {
	if v == nil {
		return "", nil
	}
	s := strings.TrimSpace(*v)
	if !utf8.ValidString(s) {
		return "", errcode.Invalid("%s must be valid UTF-8", field)
	}
	if utf8.RuneCountInString(s) > max {
		return "", errcode.Invalid("%s must be at most %d characters", field, max)
	}
	if strings.ContainsRune(s, 0) {
		return "", errcode.Invalid("%s must not contain NUL characters", field)
	}
	return s, nil
}

// ChangeListInput holds the raw query parameters of a change listing.
type ChangeListInput struct {
	Service string
	Since   string
	Limit   string
	Cursor  string
}

// ChangePage is one page of the pagination envelope.
type ChangePage struct {
	Items  []models.Change
	Cursor string // "" when there are no more pages
	Count  int64
}

// List returns one page of the tenant's changes, most recently recorded first.
func (s *Changes) List(ctx context.Context, p auth.Principal, in ChangeListInput) (ChangePage, error) {
	f := models.ChangeFilter{Service: strings.TrimSpace(in.Service)}
	if in.Since != "" {
		t, err := changeTime("since", in.Since)
		if err != nil {
			return ChangePage{}, err
		}
		f.Since = t
	}
	query := "changes|" + f.Service + "|" + in.Since
	limit, after, err := s.cursors.OpenPage(p.TenantID, query, in.Limit, in.Cursor)
	if err != nil {
		return ChangePage{}, err
	}
	items, total, err := s.store.ListChanges(ctx, p.TenantID, f, after, limit+1)
	if err != nil {
		return ChangePage{}, errcode.Down("the database", err)
	}
	items, next, err := auth.CutPage(s.cursors, p.TenantID, query, limit, items, func(c models.Change) string { return c.ID })
	if err != nil {
		return ChangePage{}, err
	}
	return ChangePage{Items: items, Cursor: next, Count: total}, nil
}
