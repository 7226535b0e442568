package providers

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Alertmanager reads Prometheus Alertmanager webhook_config payloads (version "4"). It cannot sign.
//
// Each element of alerts[] becomes one alert whose source id is fingerprint + ":" + startsAt: the
// fingerprint alone is the same for every firing episode of a label set, and a new episode must open a
// new incident once the previous one resolved. Tags are the labels not mapped onto a field.
type Alertmanager struct {
	keyOnly
	n normalizer
}

// Name implements Provider.
func (*Alertmanager) Name() string { return "alertmanager" }

// Normalize implements Provider.
func (a *Alertmanager) Normalize(r Request) (Batch, error) {
	return normalizeGroup("alertmanager", a.n, r.Body, false)
}

// Grafana reads Grafana Alerting webhook contact point payloads (version "1", the Alertmanager shape plus
// per-alert values and URLs). Signing is opt-in in Grafana but required here: either our
// X-Webhook-Signature (Grafana's header name set to it) or Grafana's default X-Grafana-Alerting-Signature,
// signed over ts + ":" + body when X-Grafana-Alerting-Timestamp is configured.
type Grafana struct{ n normalizer }

// Grafana's own signature headers; the timestamp header has no default name in Grafana, so tenants set
// it to this one.
const (
	HeaderGrafanaSignature = "X-Grafana-Alerting-Signature"
	HeaderGrafanaTimestamp = "X-Grafana-Alerting-Timestamp"
)

// Name implements Provider.
func (*Grafana) Name() string { return "grafana" }

// Mode implements Provider.
func (*Grafana) Mode() Mode { return ModeNative }

// Verify implements Provider.
func (*Grafana) Verify(_ context.Context, r Request, secret []byte, now time.Time) error {
	if headerPresent(r.Header, HeaderSignature) {
		return verifyOurs(r, secret, now)
	}
	if !headerPresent(r.Header, HeaderGrafanaSignature) {
		return unauthenticated("missing signature header")
	}
	msg := r.Body
	if ts := strings.TrimSpace(r.Header.Get(HeaderGrafanaTimestamp)); ts != "" {
		if err := checkTimestamp(ts, now); err != nil {
			return err
		}
		msg = prefixed(ts, ":", r.Body)
	}
	return checkHexMAC(secret, msg, []string{r.Header.Get(HeaderGrafanaSignature)})
}

// Normalize implements Provider.
func (g *Grafana) Normalize(r Request) (Batch, error) {
	return normalizeGroup("grafana", g.n, r.Body, true)
}

type groupPayload struct {
	GroupKey    flexString      `json:"groupKey"`
	Receiver    flexString      `json:"receiver"`
	ExternalURL flexString      `json:"externalURL"`
	OrgID       flexString      `json:"orgId"`
	Alerts      *[]groupAlert   `json:"alerts"`
	Truncated   json.RawMessage `json:"truncatedAlerts"`
}

type groupAlert struct {
	Status       flexString     `json:"status"`
	Labels       stringMap      `json:"labels"`
	Annotations  stringMap      `json:"annotations"`
	StartsAt     flexString     `json:"startsAt"`
	EndsAt       flexString     `json:"endsAt"`
	GeneratorURL flexString     `json:"generatorURL"`
	Fingerprint  flexString     `json:"fingerprint"`
	Values       map[string]any `json:"values"`
	SilenceURL   flexString     `json:"silenceURL"`
	DashboardURL flexString     `json:"dashboardURL"`
	PanelURL     flexString     `json:"panelURL"`
	ImageURL     flexString     `json:"imageURL"`
}

// normalizeGroup maps both Alertmanager and Grafana; grafana adds its per-alert extras to metadata.
func normalizeGroup(provider string, n normalizer, body []byte, grafana bool) (Batch, error) {
	var p groupPayload
	if err := decodeObject(provider, body, &p); err != nil {
		return Batch{}, err
	}
	if p.Alerts == nil || len(*p.Alerts) == 0 {
		return Batch{}, invalid("%s: alerts must contain at least one alert", provider)
	}
	out := make([]Alert, 0, len(*p.Alerts))
	for i, ga := range *p.Alerts {
		fp := ga.Fingerprint.String()
		if fp == "" {
			return Batch{}, invalid("%s: alerts[%d].fingerprint is required", provider, i)
		}
		labels := ga.Labels.copyMap()
		ann := ga.Annotations.copyMap()
		a := Alert{
			Title:         firstNonEmpty(ann["summary"], labels["alertname"]),
			Description:   ann["description"],
			SourceAlertID: joinNonEmpty(":", fp, ga.StartsAt.String()),
			Severity:      labelSeverity(labels["severity"]),
			Environment:   firstNonEmpty(labels["env"], labels["environment"]),
			Metadata:      map[string]any{},
			Resolved:      strings.EqualFold(ga.Status.String(), "resolved"),
		}
		if s := labels["service"]; strings.TrimSpace(s) != "" {
			a.Service = s
			delete(labels, "service")
		} else if j := labels["job"]; strings.TrimSpace(j) != "" {
			a.Service = j
			delete(labels, "job")
		}
		for _, k := range []string{"severity", "env", "environment"} {
			delete(labels, k)
		}
		if grafana {
			putIf(a.Metadata, "grafana_folder", labels["grafana_folder"])
			delete(labels, "grafana_folder")
			if len(ga.Values) > 0 {
				a.Metadata["values"] = ga.Values
			}
			putIf(a.Metadata, "silenceURL", ga.SilenceURL.String())
			putIf(a.Metadata, "dashboardURL", ga.DashboardURL.String())
			putIf(a.Metadata, "panelURL", ga.PanelURL.String())
			putIf(a.Metadata, "imageURL", ga.ImageURL.String())
			putIf(a.Metadata, "orgId", p.OrgID.String())
		}
		a.Tags = labels
		if len(ann) > 0 {
			annotations := make(map[string]any, len(ann))
			for k, v := range ann {
				annotations[k] = v
			}
			a.Metadata["annotations"] = annotations
		}
		putIf(a.Metadata, "generatorURL", ga.GeneratorURL.String())
		putIf(a.Metadata, "groupKey", p.GroupKey.String())
		putIf(a.Metadata, "receiver", p.Receiver.String())
		putIf(a.Metadata, "externalURL", p.ExternalURL.String())
		putIf(a.Metadata, "startsAt", ga.StartsAt.String())
		putIf(a.Metadata, "fingerprint", fp)
		if ends := ga.EndsAt.String(); ends != "" && !strings.HasPrefix(ends, "0001-") {
			a.Metadata["endsAt"] = ends
		}
		if t, err := strconv.Atoi(strings.TrimSpace(string(p.Truncated))); err == nil && t > 0 {
			a.Metadata["truncatedAlerts"] = float64(t)
		}
		if err := n.finish(&a, provider+": alerts["+strconv.Itoa(i)+"]", true); err != nil {
			return Batch{}, err
		}
		out = append(out, a)
	}
	return Batch{Alerts: out}, nil
}

// labelSeverity maps the conventional Prometheus severity label; unknown values fall back to the default.
func labelSeverity(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical", "page":
		return SeverityCritical
	case "error", "high":
		return SeverityHigh
	case "warning", "warn", "medium":
		return SeverityMedium
	case "low":
		return SeverityLow
	case "info", "informational", "none":
		return SeverityInfo
	}
	return ""
}
