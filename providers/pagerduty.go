package providers

import (
	"context"
	"strings"
	"time"
)

// PagerDuty reads Generic Webhooks v3 deliveries, always signed with X-PagerDuty-Signature.
//
// Only incident.triggered and incident.reopened open (or re-fire) an alert and incident.resolved resolves
// it; pagey.ping, service.* and every other incident.* event (acknowledged, annotated, ...) are answered
// 2xx and ignored, since PagerDuty disables a webhook that keeps getting 4xx. occurred_at is kept in
// metadata rather than enforced: retries legitimately arrive late, and replays are deduped on DeliveryID.
// Team names become the "team" tag, comma-joined when there are several.
type PagerDuty struct{ n normalizer }

// HeaderPagerDutySignature carries one or more comma-separated "v1=<hex>" values (several while the
// secret rotates).
const HeaderPagerDutySignature = "X-PagerDuty-Signature"

// Name implements Provider.
func (*PagerDuty) Name() string { return "pagerduty" }

// Mode implements Provider.
func (*PagerDuty) Mode() Mode { return ModeNative }

// Verify accepts when any v1 value matches HMAC-SHA256(secret, body).
func (*PagerDuty) Verify(_ context.Context, r Request, secret []byte, _ time.Time) error {
	if !headerPresent(r.Header, HeaderPagerDutySignature) {
		return unauthenticated("missing %s", HeaderPagerDutySignature)
	}
	var candidates []string
	for _, h := range r.Header.Values(HeaderPagerDutySignature) {
		for _, part := range strings.Split(h, ",") {
			part = strings.TrimSpace(part)
			if v, ok := strings.CutPrefix(part, "v1="); ok {
				candidates = append(candidates, v)
			}
		}
	}
	if len(candidates) == 0 {
		return unauthenticated("no v1 signature")
	}
	return checkHexMAC(secret, r.Body, candidates)
}

type pagerdutyPayload struct {
	Event *struct {
		ID           flexString `json:"id"`
		EventType    flexString `json:"event_type"`
		ResourceType flexString `json:"resource_type"`
		OccurredAt   flexString `json:"occurred_at"`
		Data         *struct {
			ID          flexString `json:"id"`
			Number      flexString `json:"number"`
			Status      flexString `json:"status"`
			IncidentKey flexString `json:"incident_key"`
			Title       flexString `json:"title"`
			Description flexString `json:"description"`
			HTMLURL     flexString `json:"html_url"`
			Urgency     flexString `json:"urgency"`
			Service     *struct {
				Summary flexString `json:"summary"`
			} `json:"service"`
			Priority *struct {
				Summary flexString `json:"summary"`
			} `json:"priority"`
			Teams []struct {
				Summary flexString `json:"summary"`
			} `json:"teams"`
		} `json:"data"`
	} `json:"event"`
}

// Normalize implements Provider.
func (p *PagerDuty) Normalize(r Request) (Batch, error) {
	var pl pagerdutyPayload
	if err := decodeObject("pagerduty", r.Body, &pl); err != nil {
		return Batch{}, err
	}
	if pl.Event == nil {
		return Batch{}, invalid("pagerduty: event is required")
	}
	ev := pl.Event
	b := Batch{DeliveryID: firstNonEmpty(r.Header.Get("X-Webhook-Id"), ev.ID.String())}
	typ := ev.EventType.String()
	var resolved bool
	switch {
	case typ == "":
		return Batch{}, invalid("pagerduty: event.event_type is required")
	case typ == "incident.triggered", typ == "incident.reopened":
	case typ == "incident.resolved":
		resolved = true
	default:
		b.Ignored = true
		b.Reason = "pagerduty event " + typ + " does not open or resolve an alert"
		return b, nil
	}
	d := ev.Data
	if d == nil {
		return Batch{}, invalid("pagerduty: event.data is required")
	}
	if d.ID.String() == "" {
		return Batch{}, invalid("pagerduty: event.data.id is required")
	}
	a := Alert{
		Title:         d.Title.String(),
		Description:   d.Description.String(),
		SourceAlertID: d.ID.String(),
		Tags:          map[string]string{},
		Metadata:      map[string]any{},
		Resolved:      resolved,
	}
	if d.Priority != nil {
		a.Severity = pScale(d.Priority.Summary.String())
		putIf(a.Metadata, "priority", d.Priority.Summary.String())
	}
	if a.Severity == "" {
		switch strings.ToLower(d.Urgency.String()) {
		case "high":
			a.Severity = SeverityHigh
		case "low":
			a.Severity = SeverityLow
		}
	}
	if d.Service != nil {
		a.Service = d.Service.Summary.String()
	}
	var teams []string
	for _, t := range d.Teams {
		if s := t.Summary.String(); s != "" {
			teams = append(teams, s)
		}
	}
	if len(teams) > 0 {
		a.Tags["team"] = strings.Join(teams, ",")
	}
	putIf(a.Metadata, "html_url", d.HTMLURL.String())
	putIf(a.Metadata, "number", d.Number.String())
	putIf(a.Metadata, "incident_key", d.IncidentKey.String())
	putIf(a.Metadata, "event_type", typ)
	putIf(a.Metadata, "event_id", ev.ID.String())
	putIf(a.Metadata, "occurred_at", ev.OccurredAt.String())
	putIf(a.Metadata, "status", d.Status.String())
	putIf(a.Metadata, "urgency", d.Urgency.String())
	if err := p.n.finish(&a, "pagerduty", true); err != nil {
		return Batch{}, err
	}
	b.Alerts = []Alert{a}
	return b, nil
}
