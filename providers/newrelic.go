package providers

import "strings"

// NewRelic reads the default Workflows webhook template, plus the optional "description"
// ({{json annotations.description}}, a string or an array) and "environment" fields a tenant may add. It
// cannot sign.
//
// ACTIVATED and CREATED fire, CLOSED resolves, ACKNOWLEDGED is ignored because it changes no alert state.
// Policy and condition names become the "policy" and "condition" tags, comma-joined.
type NewRelic struct {
	keyOnly
	n normalizer
}

// Name implements Provider.
func (*NewRelic) Name() string { return "newrelic" }

type newrelicPayload struct {
	ID                  flexString `json:"id"`
	IssueURL            flexString `json:"issueUrl"`
	Title               flexText   `json:"title"`
	Description         flexText   `json:"description"`
	Priority            flexString `json:"priority"`
	ImpactedEntities    stringList `json:"impactedEntities"`
	TotalIncidents      flexString `json:"totalIncidents"`
	State               flexString `json:"state"`
	Trigger             flexString `json:"trigger"`
	CreatedAt           flexString `json:"createdAt"`
	AlertPolicyNames    stringList `json:"alertPolicyNames"`
	AlertConditionNames stringList `json:"alertConditionNames"`
	WorkflowName        flexString `json:"workflowName"`
	Environment         flexString `json:"environment"`
}

// Normalize implements Provider.
func (nr *NewRelic) Normalize(r Request) (Batch, error) {
	var p newrelicPayload
	if err := decodeObject("newrelic", r.Body, &p); err != nil {
		return Batch{}, err
	}
	state := strings.ToUpper(p.State.String())
	if state == "ACKNOWLEDGED" {
		return Batch{Ignored: true, Reason: "newrelic issue acknowledged does not open or resolve an alert"}, nil
	}
	if p.ID.String() == "" {
		return Batch{}, invalid("newrelic: id is required")
	}
	a := Alert{
		Title:         string(p.Title),
		Description:   string(p.Description),
		SourceAlertID: p.ID.String(),
		Environment:   p.Environment.String(),
		Tags:          map[string]string{},
		Metadata:      map[string]any{},
		Resolved:      state == "CLOSED",
	}
	switch strings.ToUpper(p.Priority.String()) {
	case "CRITICAL":
		a.Severity = SeverityCritical
	case "HIGH":
		a.Severity = SeverityHigh
	case "MEDIUM":
		a.Severity = SeverityMedium
	case "LOW":
		a.Severity = SeverityLow
	case "INFO":
		a.Severity = SeverityInfo
	}
	for _, e := range p.ImpactedEntities {
		if e = strings.TrimSpace(e); e != "" {
			a.Service = e
			break
		}
	}
	if s := joinNonEmpty(",", p.AlertPolicyNames...); s != "" {
		a.Tags["policy"] = s
	}
	if s := joinNonEmpty(",", p.AlertConditionNames...); s != "" {
		a.Tags["condition"] = s
	}
	putIf(a.Metadata, "issueUrl", p.IssueURL.String())
	putIf(a.Metadata, "trigger", p.Trigger.String())
	putIf(a.Metadata, "state", p.State.String())
	putIf(a.Metadata, "priority", p.Priority.String())
	putIf(a.Metadata, "createdAt", p.CreatedAt.String())
	putIf(a.Metadata, "totalIncidents", p.TotalIncidents.String())
	putIf(a.Metadata, "workflowName", p.WorkflowName.String())
	if err := nr.n.finish(&a, "newrelic", true); err != nil {
		return Batch{}, err
	}
	return Batch{Alerts: []Alert{a}}, nil
}
