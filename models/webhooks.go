package models

// Outbound event kinds a webhook endpoint can subscribe to (API values).
const (
	EventRemediationCompleted = "remediation.completed"
	EventRemediationFailed    = "remediation.failed"
	// EventRemediationVerified carries the remediation and what its
	// verification found after the steps.
	EventRemediationVerified = "remediation.verified"
)

// EventKinds lists every subscribable kind, in the order the API documents them.
var EventKinds = []string{EventInvestigationCompleted, EventRemediationCompleted, EventRemediationFailed, EventRemediationVerified}
