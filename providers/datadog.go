package providers

import "strings"

// Datadog reads the custom Payload template of docs/providers.md. It cannot sign, so the API key alone
// authenticates it.
//
// The source id is alert_cycle_key (stable from trigger to recovery) or, for templates without it,
// alert_id + ":" + scope, because alert_id alone is shared by every group of a multi-alert monitor.
type Datadog struct {
	keyOnly
	n normalizer
}

// Name implements Provider.
func (*Datadog) Name() string { return "datadog" }

type datadogPayload struct {
	AlertID         flexString `json:"alert_id"`
	AlertCycleKey   flexString `json:"alert_cycle_key"`
	Title           flexString `json:"title"`
	Text            flexString `json:"text"`
	AlertType       flexString `json:"alert_type"`
	AlertTransition flexString `json:"alert_transition"`
	Priority        flexString `json:"priority"`
	Tags            stringList `json:"tags"`
	Scope           flexString `json:"scope"`
	Link            flexString `json:"link"`
	// Date ($DATE, epoch milliseconds) is when the monitor triggered; a
	// template that carries it gives investigations their onset.
	Date        flexString `json:"date"`
	LastUpdated flexString `json:"last_updated"`
}

// Normalize implements Provider.
func (d *Datadog) Normalize(r Request) (Batch, error) {
	var p datadogPayload
	if err := decodeObject("datadog", r.Body, &p); err != nil {
		return Batch{}, err
	}
	tags := map[string]string{}
	addTags(tags, p.Tags)
	id := p.AlertCycleKey.String()
	if id == "" && p.AlertID.String() != "" {
		id = joinNonEmpty(":", p.AlertID.String(), p.Scope.String())
	}
	alertType := strings.ToLower(p.AlertType.String())
	a := Alert{
		Title:         p.Title.String(),
		Description:   p.Text.String(),
		SourceAlertID: id,
		Severity:      datadogSeverity(p.Priority.String(), alertType),
		Service:       tags["service"],
		Environment:   tags["env"],
		Tags:          tags,
		Metadata:      map[string]any{},
		Resolved:      strings.EqualFold(p.AlertTransition.String(), "Recovered") || alertType == "success",
	}
	putIf(a.Metadata, "alert_id", p.AlertID.String())
	putIf(a.Metadata, "link", p.Link.String())
	putIf(a.Metadata, "scope", p.Scope.String())
	putIf(a.Metadata, "alert_transition", p.AlertTransition.String())
	putIf(a.Metadata, "date", p.Date.String())
	putIf(a.Metadata, "last_updated", p.LastUpdated.String())
	if id == "" {
		return Batch{}, invalid("datadog: alert_cycle_key or alert_id is required")
	}
	if err := d.n.finish(&a, "datadog", true); err != nil {
		return Batch{}, err
	}
	return Batch{Alerts: []Alert{a}}, nil
}

// datadogSeverity uses the monitor priority ($ALERT_PRIORITY) and falls back to alert_type when the
// template carried the event priority ("normal"/"low") or nothing; "" lets the default apply.
func datadogSeverity(priority, alertType string) string {
	if s := pScale(priority); s != "" {
		return s
	}
	switch alertType {
	case "error":
		return SeverityHigh
	case "warning":
		return SeverityMedium
	case "info":
		return SeverityInfo
	}
	return ""
}
