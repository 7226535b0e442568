package providers

import (
	"encoding/json"
	"strings"
)

// GCP reads Google Cloud Monitoring webhook notification channels (schema version 1.2). It cannot sign or
// send headers, so the API key arrives as ?apiKey=.
//
// The title is policy_name with condition_name appended after " - " when present; the description is the
// summary followed by the documentation content. State "closed" resolves.
type GCP struct {
	keyOnly
	n normalizer
}

// Name implements Provider.
func (*GCP) Name() string { return "gcp" }

type gcpPayload struct {
	Incident *struct {
		IncidentID       flexString      `json:"incident_id"`
		ScopingProjectID flexString      `json:"scoping_project_id"`
		URL              flexString      `json:"url"`
		StartedAt        flexString      `json:"started_at"`
		EndedAt          flexString      `json:"ended_at"`
		State            flexString      `json:"state"`
		Summary          flexString      `json:"summary"`
		PolicyName       flexString      `json:"policy_name"`
		ConditionName    flexString      `json:"condition_name"`
		Severity         flexString      `json:"severity"`
		ThresholdValue   flexString      `json:"threshold_value"`
		ObservedValue    flexString      `json:"observed_value"`
		Resource         json.RawMessage `json:"resource"`
		PolicyUserLabels stringMap       `json:"policy_user_labels"`
		Metric           *struct {
			Type   flexString `json:"type"`
			Labels stringMap  `json:"labels"`
		} `json:"metric"`
		Documentation *struct {
			Content flexString `json:"content"`
		} `json:"documentation"`
	} `json:"incident"`
}

type gcpResource struct {
	Type   flexString `json:"type"`
	Labels stringMap  `json:"labels"`
}

// Normalize implements Provider.
func (g *GCP) Normalize(r Request) (Batch, error) {
	var p gcpPayload
	if err := decodeObject("gcp", r.Body, &p); err != nil {
		return Batch{}, err
	}
	inc := p.Incident
	if inc == nil {
		return Batch{}, invalid("gcp: incident is required")
	}
	if inc.IncidentID.String() == "" {
		return Batch{}, invalid("gcp: incident.incident_id is required")
	}
	var res gcpResource
	var resAny map[string]any
	if len(inc.Resource) > 0 && string(inc.Resource) != "null" {
		if json.Unmarshal(inc.Resource, &res) != nil || json.Unmarshal(inc.Resource, &resAny) != nil {
			return Batch{}, invalid("gcp: field \"incident.resource\" must be an object")
		}
	}
	labels := inc.PolicyUserLabels.copyMap()
	tags := make(map[string]string, len(labels))
	for k, v := range labels {
		tags[k] = v
	}
	if inc.Metric != nil {
		for k, v := range inc.Metric.Labels.copyMap() {
			tags[k] = v
		}
	}
	var doc string
	if inc.Documentation != nil {
		doc = inc.Documentation.Content.String()
	}
	a := Alert{
		Title:         joinNonEmpty(" - ", inc.PolicyName.String(), inc.ConditionName.String()),
		Description:   joinNonEmpty("\n\n", inc.Summary.String(), doc),
		SourceAlertID: inc.IncidentID.String(),
		Service:       firstNonEmpty(res.Labels["service_name"], labels["service"]),
		Environment:   firstNonEmpty(labels["env"], labels["environment"]),
		Tags:          tags,
		Metadata:      map[string]any{},
		Resolved:      strings.EqualFold(inc.State.String(), "closed"),
	}
	switch strings.ToLower(inc.Severity.String()) {
	case "critical":
		a.Severity = SeverityCritical
	case "error":
		a.Severity = SeverityHigh
	case "warning":
		a.Severity = SeverityMedium
	}
	putIf(a.Metadata, "url", inc.URL.String())
	if len(resAny) > 0 {
		a.Metadata["resource"] = resAny
	}
	putIf(a.Metadata, "observed_value", inc.ObservedValue.String())
	putIf(a.Metadata, "threshold_value", inc.ThresholdValue.String())
	putIf(a.Metadata, "state", inc.State.String())
	putIf(a.Metadata, "started_at", inc.StartedAt.String())
	putIf(a.Metadata, "ended_at", inc.EndedAt.String())
	putIf(a.Metadata, "scoping_project_id", inc.ScopingProjectID.String())
	putIf(a.Metadata, "condition_name", inc.ConditionName.String())
	if inc.Metric != nil {
		putIf(a.Metadata, "metric_type", inc.Metric.Type.String())
	}
	if err := g.n.finish(&a, "gcp", true); err != nil {
		return Batch{}, err
	}
	return Batch{Alerts: []Alert{a}}, nil
}
