package providers

import "strings"

// Azure reads Azure Monitor action group webhooks in the common alert schema, the only shape accepted
// because legacy schemas differ per signal type. It cannot sign (and cannot send headers), so the API key
// arrives as ?apiKey=.
type Azure struct {
	keyOnly
	n normalizer
}

// Name implements Provider.
func (*Azure) Name() string { return "azure" }

const azureCommonSchema = "azureMonitorCommonAlertSchema"

type azurePayload struct {
	SchemaID flexString `json:"schemaId"`
	Data     *struct {
		Essentials *struct {
			AlertID            flexString   `json:"alertId"`
			AlertRule          flexString   `json:"alertRule"`
			Severity           flexString   `json:"severity"`
			SignalType         flexString   `json:"signalType"`
			MonitorCondition   flexString   `json:"monitorCondition"`
			MonitoringService  flexString   `json:"monitoringService"`
			AlertTargetIDs     []flexString `json:"alertTargetIDs"`
			ConfigurationItems []flexString `json:"configurationItems"`
			FiredDateTime      flexString   `json:"firedDateTime"`
			ResolvedDateTime   flexString   `json:"resolvedDateTime"`
			Description        flexString   `json:"description"`
		} `json:"essentials"`
		AlertContext     map[string]any `json:"alertContext"`
		CustomProperties stringMap      `json:"customProperties"`
	} `json:"data"`
}

// Normalize implements Provider.
func (az *Azure) Normalize(r Request) (Batch, error) {
	var p azurePayload
	if err := decodeObject("azure", r.Body, &p); err != nil {
		return Batch{}, err
	}
	if p.SchemaID.String() != azureCommonSchema {
		return Batch{}, invalid("azure: schemaId must be %s; enable the common alert schema on the action group", azureCommonSchema)
	}
	if p.Data == nil || p.Data.Essentials == nil {
		return Batch{}, invalid("azure: data.essentials is required")
	}
	e := p.Data.Essentials
	if e.AlertID.String() == "" {
		return Batch{}, invalid("azure: data.essentials.alertId is required")
	}
	props := p.Data.CustomProperties.copyMap()
	var firstItem string
	if len(e.ConfigurationItems) > 0 {
		firstItem = e.ConfigurationItems[0].String()
	}
	a := Alert{
		Title:         e.AlertRule.String(),
		Description:   e.Description.String(),
		SourceAlertID: e.AlertID.String(),
		Service:       firstNonEmpty(props["service"], firstItem),
		Environment:   firstNonEmpty(props["env"], props["environment"]),
		Tags:          props,
		Metadata:      map[string]any{},
		Resolved:      strings.EqualFold(e.MonitorCondition.String(), "Resolved"),
	}
	switch strings.ToLower(e.Severity.String()) {
	case "sev0":
		a.Severity = SeverityCritical
	case "sev1":
		a.Severity = SeverityHigh
	case "sev2":
		a.Severity = SeverityMedium
	case "sev3":
		a.Severity = SeverityLow
	case "sev4":
		a.Severity = SeverityInfo
	}
	if len(e.AlertTargetIDs) > 0 {
		ids := make([]any, 0, len(e.AlertTargetIDs))
		for _, id := range e.AlertTargetIDs {
			ids = append(ids, id.String())
		}
		a.Metadata["alertTargetIDs"] = ids
	}
	putIf(a.Metadata, "signalType", e.SignalType.String())
	putIf(a.Metadata, "monitoringService", e.MonitoringService.String())
	putIf(a.Metadata, "monitorCondition", e.MonitorCondition.String())
	putIf(a.Metadata, "severity", e.Severity.String())
	putIf(a.Metadata, "firedDateTime", e.FiredDateTime.String())
	putIf(a.Metadata, "resolvedDateTime", e.ResolvedDateTime.String())
	if len(p.Data.AlertContext) > 0 {
		a.Metadata["alertContext"] = p.Data.AlertContext
	}
	if err := az.n.finish(&a, "azure", true); err != nil {
		return Batch{}, err
	}
	return Batch{Alerts: []Alert{a}}, nil
}
