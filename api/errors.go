package api

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/service"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	service.CodeValidation:              http.StatusBadRequest,
	service.CodeUnauthorized:            http.StatusUnauthorized,
	service.CodeInvalidCredentials:      http.StatusUnauthorized,
	service.CodeForbidden:               http.StatusForbidden,
	service.CodeNotFound:                http.StatusNotFound,
	service.CodeIncidentNotFound:        http.StatusNotFound,
	service.CodeRemediationNotFound:     http.StatusNotFound,
	service.CodePlanChanged:             http.StatusConflict,
	service.CodeOAuthProviderDisabled:   http.StatusNotFound,
	service.CodeMethodNotAllowed:        http.StatusMethodNotAllowed,
	service.CodeEmailTaken:              http.StatusConflict,
	service.CodeIdentityLinked:          http.StatusConflict,
	service.CodeInvalidStatus:           http.StatusConflict,
	service.CodeDuplicateAlert:          http.StatusConflict,
	service.CodeInvestigationInProgress: http.StatusConflict,
	service.CodeSignupDisabled:          http.StatusForbidden,
	service.CodePlanRequired:            http.StatusForbidden,
	service.CodePayloadTooLarge:         http.StatusRequestEntityTooLarge,
	service.CodeEventQuotaExceeded:      http.StatusTooManyRequests,
	service.CodeInvestigationQuota:      http.StatusTooManyRequests,
	service.CodeRateLimited:             http.StatusTooManyRequests,
	service.CodeInternal:                http.StatusInternalServerError,
	service.CodeUnavailable:             http.StatusServiceUnavailable,
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
func Describe(c *gin.Context, err error) (int, *service.Error) {
	e, ok := service.AsError(err)
	if !ok {
		slog.ErrorContext(c.Request.Context(), "request failed", slog.String("request_id", requestID(c)), slog.Any("error", err))
		e = &service.Error{Code: service.CodeInternal, Message: "an unexpected error occurred; quote request id " + requestID(c)}
	} else if e.Code == service.CodeUnavailable {
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
	fail(c, service.Errorf(code, format, a...))
}
