package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Bounds and default of a tenant's grouping window, in seconds (README, "Alert
// grouping").
const (
	MinGroupingWindowSeconds     = 30
	MaxGroupingWindowSeconds     = 3600
	DefaultGroupingWindowSeconds = 300
)

// groupingCacheTTL is how long a replica trusts the grouping setting it read.
// Every alert needs it, and the default (off) must cost the ingest path no
// round trip; the replica that saves a change forgets its copy at once, the
// others follow within this bound.
const groupingCacheTTL = 5 * time.Second

// groupedContextBytes bounds what one grouped alert adds to the investigation
// context of the incident it joins.
const groupedContextBytes = 2000

// GroupingSettings is the body of GET and PUT /v1/settings/grouping.
type GroupingSettings struct {
	Enabled       bool `json:"enabled"`
	WindowSeconds int  `json:"windowSeconds"`
}

// GroupingInput is the body of PUT /v1/settings/grouping; both fields are
// required, so a client never switches grouping on with a window it did not
// choose.
type GroupingInput struct {
	Enabled       *bool `json:"enabled"`
	WindowSeconds *int  `json:"windowSeconds"`
}

// groupingCache keeps each tenant's grouping setting for groupingCacheTTL.
type groupingCache struct {
	store *models.Store
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]groupingEntry
}

type groupingEntry struct {
	settings GroupingSettings
	readAt   time.Time
}

func newGroupingCache(store *models.Store, now func() time.Time) *groupingCache {
	return &groupingCache{store: store, now: now, entries: map[string]groupingEntry{}}
}

// get returns the tenant's setting: cached when fresh, else read.
func (g *groupingCache) get(ctx context.Context, tenantID string) (GroupingSettings, error) {
	now := g.now()
	g.mu.Lock()
	e, ok := g.entries[tenantID]
	g.mu.Unlock()
	if ok && now.Sub(e.readAt) < groupingCacheTTL {
		return e.settings, nil
	}
	out := GroupingSettings{WindowSeconds: DefaultGroupingWindowSeconds}
	row, err := g.store.GroupingSettingFor(ctx, tenantID)
	switch {
	case err == nil:
		out = GroupingSettings{Enabled: row.Enabled, WindowSeconds: row.WindowSeconds}
	case !errors.Is(err, models.ErrNotFound):
		return out, err
	}
	g.mu.Lock()
	g.entries[tenantID] = groupingEntry{settings: out, readAt: now}
	g.mu.Unlock()
	return out, nil
}

func (g *groupingCache) forget(tenantID string) {
	g.mu.Lock()
	delete(g.entries, tenantID)
	g.mu.Unlock()
}

// Grouping answers GET /v1/settings/grouping.
func (s *Ingest) Grouping(ctx context.Context, p auth.Principal) (GroupingSettings, error) {
	s.grouping.forget(p.TenantID)
	out, err := s.grouping.get(ctx, p.TenantID)
	if err != nil {
		return out, errcode.Down("the database", err)
	}
	return out, nil
}

// SetGrouping answers PUT /v1/settings/grouping (owner, admin).
func (s *Ingest) SetGrouping(ctx context.Context, p auth.Principal, in GroupingInput) (GroupingSettings, error) {
	switch {
	case in.Enabled == nil:
		return GroupingSettings{}, errcode.Invalid("enabled is required (true or false)")
	case in.WindowSeconds == nil:
		return GroupingSettings{}, errcode.Invalid("windowSeconds is required (%d to %d)", MinGroupingWindowSeconds, MaxGroupingWindowSeconds)
	case *in.WindowSeconds < MinGroupingWindowSeconds || *in.WindowSeconds > MaxGroupingWindowSeconds:
		return GroupingSettings{}, errcode.Invalid("windowSeconds must be %d to %d, got %d", MinGroupingWindowSeconds, MaxGroupingWindowSeconds, *in.WindowSeconds)
	}
	out := GroupingSettings{Enabled: *in.Enabled, WindowSeconds: *in.WindowSeconds}
	err := s.store.SetGroupingSetting(ctx, &models.GroupingSetting{TenantID: p.TenantID, Enabled: out.Enabled,
		WindowSeconds: out.WindowSeconds, UpdatedAt: s.now().UTC()})
	if err != nil {
		return GroupingSettings{}, errcode.Down("the database", err)
	}
	s.grouping.forget(p.TenantID)
	s.log.Info("alert grouping changed", slog.String("tenant_id", p.TenantID), slog.String("actor", p.Email),
		slog.Bool("enabled", out.Enabled), slog.Int("window_seconds", out.WindowSeconds))
	return out, nil
}

// groupingFor is the tenant's grouping window, 0 when it does not group. A
// process built without a store (unit tests of the writer) never groups.
func (s *Ingest) groupingFor(ctx context.Context, tenantID string) (time.Duration, error) {
	if s.grouping == nil {
		return 0, nil
	}
	g, err := s.grouping.get(ctx, tenantID)
	if err != nil || !g.Enabled {
		return 0, err
	}
	return time.Duration(g.WindowSeconds) * time.Second, nil
}

// ingestGrouped ingests a firing alert of a tenant that groups alerts. An alert
// without a service has nothing to be grouped by and opens its own incident,
// through the same locked transaction so it is deduplicated the same way.
func (s *Ingest) ingestGrouped(ctx context.Context, inc *models.Incident, window time.Duration) (AlertOutcome, error) {
	provider := inc.Source
	if inc.Service == "" {
		window = 0
	}
	alertKey := models.NewID("alert")
	if k := dedupKey(inc); k != "" {
		alertKey = auth.SHA256Hex(k)
	}
	text := fmt.Sprintf("Grouped alert from %s at %s (%s): %s", provider, inc.CreatedAt.Format(time.RFC3339), inc.Severity, inc.Title)
	if inc.Description != "" && inc.Description != inc.Title {
		text += "\n" + inc.Description
	}
	out, err := s.store.GroupAlert(ctx, models.GroupSpec{
		Incident: inc, Window: window,
		First: models.TimelineEntry{At: inc.CreatedAt, Kind: "alert_received", Message: "Alert received from " + provider,
			Actor: provider, DedupKey: inc.ID + "/alert_received"},
		Grouped: models.TimelineEntry{At: inc.CreatedAt, Kind: models.TimelineAlertGrouped,
			Message: clip.To(fmt.Sprintf("Alert grouped from %s: %s", provider, inc.Title), 1000),
			Actor:   provider, DedupKey: "grouped/" + alertKey},
		Context: clip.To(text, groupedContextBytes), Limits: models.IncidentContextLimits,
	})
	switch {
	case errors.Is(err, models.ErrConflict):
		o, found, err := s.original(ctx, inc.TenantID, provider, inc.SourceAlertID)
		if err == nil && !found {
			err = fmt.Errorf("alert %q conflicted but its incident is not found", inc.SourceAlertID)
		}
		return o, err
	case errors.Is(err, models.ErrQuotaExceeded):
		return AlertOutcome{}, errcode.New(errcode.EventQuotaExceeded, "the monthly event quota of this tenant is used up; it resets on the 1st (UTC)")
	case err != nil:
		return AlertOutcome{}, errcode.Down("the database", err)
	}
	o := AlertOutcome{IncidentID: out.Incident.ID, Status: out.Incident.Status, Duplicate: out.Duplicate, Grouped: out.Joined}
	switch {
	case out.Joined:
		s.log.Info("alert grouped", slog.String("tenant_id", inc.TenantID), slog.String("provider", provider),
			slog.String("incident_id", out.Incident.ID), slog.Int("alert_count", out.Incident.AlertCount))
	case !out.Duplicate:
		s.dispatcher.Kick()
		s.log.Info("alert ingested", slog.String("tenant_id", inc.TenantID), slog.String("provider", provider), slog.String("incident_id", inc.ID))
	}
	return o, nil
}
