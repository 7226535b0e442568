// Package service is the only code that serves a request by talking to the store
// and to Temporal. Handlers bind input, call one method here and map its error.
package service

import (
	"errors"
	"fmt"
)

// Error codes shared with clients: API values, never renamed. The api package maps
// each to an HTTP status in one table.
const (
	CodeValidation              = "validation_error"
	CodeUnauthorized            = "unauthorized"
	CodeInvalidCredentials      = "invalid_credentials"
	CodeForbidden               = "forbidden"
	CodeNotFound                = "not_found"
	CodeIncidentNotFound        = "incident_not_found"
	CodeEmailTaken              = "email_taken"
	CodeSignupDisabled          = "signup_disabled"
	CodeEventQuotaExceeded      = "event_quota_exceeded"
	CodeInvestigationQuota      = "investigation_quota_exceeded"
	CodeInvalidStatus           = "invalid_status"
	CodeDuplicateAlert          = "duplicate_alert"
	CodeRateLimited             = "rate_limited"
	CodePayloadTooLarge         = "payload_too_large"
	CodeMethodNotAllowed        = "method_not_allowed"
	CodeUnavailable             = "unavailable"
	CodeInternal                = "internal_error"
	CodeOAuthProviderDisabled   = "oauth_provider_disabled"
	CodeInvestigationInProgress = "investigation_in_progress"
	CodeRemediationNotFound     = "remediation_not_found"
	CodePlanChanged             = "plan_changed"
	CodeIdentityLinked          = "identity_already_linked"
	CodePlanRequired            = "plan_required"
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

// Errorf builds an Error with a formatted message.
func Errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// AsError finds the client-facing Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func validation(format string, a ...any) *Error { return Errorf(CodeValidation, format, a...) }

func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %w", &Error{Code: CodeUnavailable, Message: what + " is temporarily unavailable; retry with backoff"}, err)
}
