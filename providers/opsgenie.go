package providers

import "strings"

// Opsgenie reads the outgoing Webhook integration payload (legacy: end of sale 2025). It cannot sign.
//
// Create fires and Close resolves; Acknowledge, AddNote and every other action are ignored because they
// change no alert state. The service comes from entity, else the "service:" tag; the environment from
// the "env:" or "environment:" tag.
type Opsgenie struct {
	keyOnly
	n normalizer
}

// Name implements Provider.
func (*Opsgenie) Name() string { return "opsgenie" }

type opsgeniePayload struct {
	Action flexString `json:"action"`
	Source *struct {
		Name flexString `json:"name"`
		Type flexString `json:"type"`
	} `json:"source"`
	Alert *struct {
		AlertID     flexString `json:"alertId"`
		Alias       flexString `json:"alias"`
		TinyID      flexString `json:"tinyId"`
		Message     flexString `json:"message"`
		Description flexString `json:"description"`
		Priority    flexString `json:"priority"`
		Tags        stringList `json:"tags"`
		Entity      flexString `json:"entity"`
		Source      flexString `json:"source"`
		Username    flexString `json:"username"`
	} `json:"alert"`
}

// Normalize implements Provider.
func (o *Opsgenie) Normalize(r Request) (Batch, error) {
	var p opsgeniePayload
	if err := decodeObject("opsgenie", r.Body, &p); err != nil {
		return Batch{}, err
	}
	action := p.Action.String()
	var resolved bool
	switch strings.ToLower(action) {
	case "create":
	case "close":
		resolved = true
	case "":
		return Batch{}, invalid("opsgenie: action is required")
	default:
		return Batch{Ignored: true, Reason: "opsgenie action " + action + " does not open or resolve an alert"}, nil
	}
	if p.Alert == nil {
		return Batch{}, invalid("opsgenie: alert is required")
	}
	al := p.Alert
	id := firstNonEmpty(al.Alias.String(), al.AlertID.String())
	if id == "" {
		return Batch{}, invalid("opsgenie: alert.alias or alert.alertId is required")
	}
	tags := map[string]string{}
	addTags(tags, al.Tags)
	a := Alert{
		Title:         al.Message.String(),
		Description:   al.Description.String(),
		SourceAlertID: id,
		Severity:      pScale(al.Priority.String()),
		Service:       firstNonEmpty(al.Entity.String(), tags["service"]),
		Environment:   firstNonEmpty(tags["env"], tags["environment"]),
		Tags:          tags,
		Metadata:      map[string]any{},
		Resolved:      resolved,
	}
	putIf(a.Metadata, "action", action)
	putIf(a.Metadata, "alertId", al.AlertID.String())
	putIf(a.Metadata, "alias", al.Alias.String())
	putIf(a.Metadata, "tinyId", al.TinyID.String())
	putIf(a.Metadata, "entity", al.Entity.String())
	putIf(a.Metadata, "priority", al.Priority.String())
	putIf(a.Metadata, "source", al.Source.String())
	putIf(a.Metadata, "username", al.Username.String())
	if err := o.n.finish(&a, "opsgenie", true); err != nil {
		return Batch{}, err
	}
	return Batch{Alerts: []Alert{a}}, nil
}
