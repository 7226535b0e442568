package providers

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Sentry reads Integration Platform webhooks, always signed with Sentry-Hook-Signature.
//
// metric_alert (critical, warning, resolved) and event_alert (triggered) open alerts; the issue resource
// with action "resolved" resolves the event alert opened for that issue (same source id, the issue id).
// Every other resource or action (installation, comment, issue created/assigned, ...) is ignored. When
// Sentry-Hook-Resource is absent the resource is inferred from which data key is present.
type Sentry struct{ n normalizer }

// HeaderSentrySignature carries hex HMAC-SHA256(client secret, raw body); Sentry does not sign its
// timestamp header.
const HeaderSentrySignature = "Sentry-Hook-Signature"

// Name implements Provider.
func (*Sentry) Name() string { return "sentry" }

// Mode implements Provider.
func (*Sentry) Mode() Mode { return ModeNative }

// Verify implements Provider.
func (*Sentry) Verify(_ context.Context, r Request, secret []byte, _ time.Time) error {
	if !headerPresent(r.Header, HeaderSentrySignature) {
		return unauthenticated("missing %s", HeaderSentrySignature)
	}
	return checkHexMAC(secret, r.Body, []string{r.Header.Get(HeaderSentrySignature)})
}

type sentryPayload struct {
	Action       flexString `json:"action"`
	Installation *struct {
		UUID flexString `json:"uuid"`
	} `json:"installation"`
	Data *struct {
		DescriptionTitle flexString `json:"description_title"`
		DescriptionText  flexString `json:"description_text"`
		WebURL           flexString `json:"web_url"`
		TriggeredRule    flexString `json:"triggered_rule"`
		MetricAlert      *struct {
			ID        flexString `json:"id"`
			AlertRule *struct {
				ID          flexString   `json:"id"`
				Name        flexString   `json:"name"`
				Environment flexString   `json:"environment"`
				Projects    []flexString `json:"projects"`
			} `json:"alert_rule"`
		} `json:"metric_alert"`
		Event *struct {
			IssueID  flexString        `json:"issue_id"`
			EventID  flexString        `json:"event_id"`
			Title    flexString        `json:"title"`
			Culprit  flexString        `json:"culprit"`
			Level    flexString        `json:"level"`
			Project  flexString        `json:"project"`
			WebURL   flexString        `json:"web_url"`
			IssueURL flexString        `json:"issue_url"`
			Tags     []json.RawMessage `json:"tags"`
		} `json:"event"`
		Issue *struct {
			ID        flexString `json:"id"`
			Title     flexString `json:"title"`
			Culprit   flexString `json:"culprit"`
			Level     flexString `json:"level"`
			Permalink flexString `json:"permalink"`
			WebURL    flexString `json:"web_url"`
			Project   *struct {
				Slug flexString `json:"slug"`
			} `json:"project"`
		} `json:"issue"`
	} `json:"data"`
}

// Normalize implements Provider.
func (s *Sentry) Normalize(r Request) (Batch, error) {
	var p sentryPayload
	if err := decodeObject("sentry", r.Body, &p); err != nil {
		return Batch{}, err
	}
	b := Batch{DeliveryID: strings.TrimSpace(r.Header.Get("Request-ID"))}
	if p.Data == nil {
		return Batch{}, invalid("sentry: data is required")
	}
	d := p.Data
	resource := strings.ToLower(strings.TrimSpace(r.Header.Get("Sentry-Hook-Resource")))
	if resource == "" {
		switch {
		case d.MetricAlert != nil:
			resource = "metric_alert"
		case d.Event != nil:
			resource = "event_alert"
		case d.Issue != nil:
			resource = "issue"
		}
	}
	action := strings.ToLower(p.Action.String())
	a := Alert{Tags: map[string]string{}, Metadata: map[string]any{}}
	putIf(a.Metadata, "resource", resource)
	putIf(a.Metadata, "action", action)
	if p.Installation != nil {
		putIf(a.Metadata, "installation", p.Installation.UUID.String())
	}
	switch {
	case resource == "metric_alert" && (action == "critical" || action == "warning" || action == "resolved"):
		if d.MetricAlert == nil {
			return Batch{}, invalid("sentry: data.metric_alert is required")
		}
		a.SourceAlertID = d.MetricAlert.ID.String()
		a.Title = d.DescriptionTitle.String()
		a.Description = d.DescriptionText.String()
		switch action {
		case "critical":
			a.Severity = SeverityCritical
		case "warning":
			a.Severity = SeverityMedium
		case "resolved":
			a.Resolved = true
		}
		if rule := d.MetricAlert.AlertRule; rule != nil {
			if len(rule.Projects) > 0 {
				a.Service = rule.Projects[0].String()
			}
			a.Environment = rule.Environment.String()
			putIf(a.Metadata, "alert_rule_id", rule.ID.String())
			putIf(a.Metadata, "alert_rule_name", rule.Name.String())
			if a.Title == "" {
				a.Title = rule.Name.String()
			}
		}
		putIf(a.Metadata, "web_url", d.WebURL.String())
	case resource == "event_alert" && action == "triggered":
		if d.Event == nil {
			return Batch{}, invalid("sentry: data.event is required")
		}
		e := d.Event
		a.SourceAlertID = e.IssueID.String()
		a.Title = e.Title.String()
		a.Description = joinNonEmpty("\n", e.Culprit.String(), triggeredBy(d.TriggeredRule.String()))
		a.Severity = sentryLevel(e.Level.String())
		a.Service = e.Project.String()
		for _, raw := range e.Tags {
			var kv []flexString
			if json.Unmarshal(raw, &kv) != nil || len(kv) != 2 || kv[0].String() == "" {
				continue
			}
			a.Tags[kv[0].String()] = kv[1].String()
		}
		a.Environment = a.Tags["environment"]
		putIf(a.Metadata, "web_url", e.WebURL.String())
		putIf(a.Metadata, "issue_url", e.IssueURL.String())
		putIf(a.Metadata, "event_id", e.EventID.String())
		putIf(a.Metadata, "culprit", e.Culprit.String())
		putIf(a.Metadata, "level", e.Level.String())
		putIf(a.Metadata, "triggered_rule", d.TriggeredRule.String())
	case resource == "issue" && action == "resolved":
		if d.Issue == nil {
			return Batch{}, invalid("sentry: data.issue is required")
		}
		is := d.Issue
		a.SourceAlertID = is.ID.String()
		a.Title = is.Title.String()
		a.Description = is.Culprit.String()
		a.Severity = sentryLevel(is.Level.String())
		if is.Project != nil {
			a.Service = is.Project.Slug.String()
		}
		a.Resolved = true
		putIf(a.Metadata, "web_url", firstNonEmpty(is.WebURL.String(), is.Permalink.String()))
	default:
		b.Ignored = true
		b.Reason = "sentry " + resource + " " + action + " does not open or resolve an alert"
		return b, nil
	}
	if err := s.n.finish(&a, "sentry", true); err != nil {
		return Batch{}, err
	}
	b.Alerts = []Alert{a}
	return b, nil
}

func triggeredBy(rule string) string {
	if rule == "" {
		return ""
	}
	return "Triggered by rule: " + rule
}

// sentryLevel maps Sentry event levels; "" lets the default apply.
func sentryLevel(level string) string {
	switch strings.ToLower(level) {
	case "fatal":
		return SeverityCritical
	case "error":
		return SeverityHigh
	case "warning":
		return SeverityMedium
	case "info":
		return SeverityInfo
	case "debug":
		return SeverityLow
	}
	return ""
}
