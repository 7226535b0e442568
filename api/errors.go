package api

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/errcode"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	errcode.Validation:              http.StatusBadRequest,
	errcode.Unauthorized:            http.StatusUnauthorized,
	errcode.InvalidCredentials:      http.StatusUnauthorized,
	errcode.Forbidden:               http.StatusForbidden,
	errcode.NotFound:                http.StatusNotFound,
	errcode.IncidentNotFound:        http.StatusNotFound,
	errcode.RemediationNotFound:     http.StatusNotFound,
	errcode.PlanChanged:             http.StatusConflict,
	errcode.LastOwner:               http.StatusConflict,
	errcode.OAuthProviderDisabled:   http.StatusNotFound,
	errcode.MethodNotAllowed:        http.StatusMethodNotAllowed,
	errcode.EmailTaken:              http.StatusConflict,
	errcode.IdentityLinked:          http.StatusConflict,
	errcode.InvalidStatus:           http.StatusConflict,
	errcode.DuplicateAlert:          http.StatusConflict,
	errcode.InvestigationInProgress: http.StatusConflict,
	errcode.SignupDisabled:          http.StatusForbidden,
	errcode.PlanRequired:            http.StatusForbidden,
	errcode.PayloadTooLarge:         http.StatusRequestEntityTooLarge,
	errcode.EventQuotaExceeded:      http.StatusTooManyRequests,
	errcode.InvestigationQuota:      http.StatusTooManyRequests,
	errcode.RateLimited:             http.StatusTooManyRequests,
	errcode.Internal:                http.StatusInternalServerError,
	errcode.Unavailable:             http.StatusServiceUnavailable,
}

// fail answers with the {error, message} body for err and stops the chain.
func fail(c *gin.Context, err error) {
	status, e := Describe(c, err)
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "5")
	}
	body := gin.H{"error": e.Code, "message": e.Message}
	for k, v := range e.Extra {
		body[k] = v
	}
	c.AbortWithStatusJSON(status, body)
}

// Describe is what a client may be told about err: its HTTP status from the one
// table and its code and message. Errors that are not client-facing are logged
// with the request id and described as a generic 500, so internal details never
// reach the caller. The dashboard describes its failures with it too.
func Describe(c *gin.Context, err error) (int, *errcode.Error) {
	e, ok := errcode.As(err)
	if !ok {
		slog.ErrorContext(c.Request.Context(), "request failed", slog.String("request_id", requestID(c)), slog.Any("error", err))
		e = &errcode.Error{Code: errcode.Internal, Message: "an unexpected error occurred; quote request id " + requestID(c)}
	} else if e.Code == errcode.Unavailable {
		slog.WarnContext(c.Request.Context(), "dependency unavailable", slog.String("request_id", requestID(c)), slog.Any("error", err))
	}
	status, known := statusOf[e.Code]
	if !known {
		status = http.StatusInternalServerError
	}
	return status, e
}

// failCode is fail for errors raised in this package.
func failCode(c *gin.Context, code, format string, a ...any) {
	fail(c, errcode.New(code, format, a...))
}
