// Package errcode holds the errors a client is allowed to see: one table of
// stable codes and the Error that carries one. Every domain returns these;
// the api package alone turns a code into an HTTP status.
package errcode

import (
	"errors"
	"fmt"
)

// Error codes shared with clients: API values, never renamed. The api package
// maps each to an HTTP status in one table.
const (
	Validation              = "validation_error"
	Unauthorized            = "unauthorized"
	InvalidCredentials      = "invalid_credentials"
	Forbidden               = "forbidden"
	NotFound                = "not_found"
	IncidentNotFound        = "incident_not_found"
	EmailTaken              = "email_taken"
	SignupDisabled          = "signup_disabled"
	EventQuotaExceeded      = "event_quota_exceeded"
	InvestigationQuota      = "investigation_quota_exceeded"
	InvalidStatus           = "invalid_status"
	DuplicateAlert          = "duplicate_alert"
	RateLimited             = "rate_limited"
	PayloadTooLarge         = "payload_too_large"
	MethodNotAllowed        = "method_not_allowed"
	Unavailable             = "unavailable"
	Internal                = "internal_error"
	OAuthProviderDisabled   = "oauth_provider_disabled"
	InvestigationInProgress = "investigation_in_progress"
	RemediationNotFound     = "remediation_not_found"
	PlanChanged             = "plan_changed"
	IdentityLinked          = "identity_already_linked"
	PlanRequired            = "plan_required"
	LastOwner               = "last_owner"
)

// Error is a failure a client is allowed to see: a stable code, a sentence for a
// human, and optional extra fields (duplicate_alert carries incidentId).
type Error struct {
	Code    string
	Message string
	Extra   map[string]any
}

// Error includes the code so logs show which contract was broken.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New builds an Error with a formatted message.
func New(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Invalid is a validation_error: the request itself is wrong and retrying it
// unchanged cannot help.
func Invalid(format string, a ...any) *Error { return New(Validation, format, a...) }

// Down is an unavailable error about what (a dependency such as "the
// database") that keeps err for the logs while the client sees only that it
// may retry.
func Down(what string, err error) error {
	return fmt.Errorf("%w: %w", &Error{Code: Unavailable, Message: what + " is temporarily unavailable; retry with backoff"}, err)
}

// As finds the client-facing Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
