// Package remediation is one slice: remediations proposed from runbooks,
// decided by a person and run exactly once.
//
// A pass's ProposeRemediations (activities.go) matches the answer's category
// against the tenant's runbooks (template.go) and starts one
// RemediationWorkflow (workflow.go) per proposal. The workflow waits for the
// approve or reject update (service.go serves the routes; Slack reaches the
// same Service), then for execute, then runs each step through its executor
// (step_*.go, listed in steps.go): a completed step is never run again, and
// one that called out without knowing the answer fails for a person to
// check rather than sending twice. After a durable timer it verifies the
// fix (verify.go). The reconciler starts the workflow of any proposal left
// without one. Runbooks, remediations and steps are its own rows (store.go).
package remediation
