package models

// Outbound event kinds a webhook endpoint can subscribe to (API values).
const (
	EventRemediationCompleted = "remediation.completed"
	EventRemediationFailed    = "remediation.failed"
)

// EventKinds lists every subscribable kind, in the order the API documents them.
var EventKinds = []string{EventInvestigationCompleted, EventRemediationCompleted, EventRemediationFailed}
