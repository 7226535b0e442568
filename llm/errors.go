package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ErrMalformedOutput means the model's reply failed validation twice (the
// original and the one repair attempt). Retrying the same prompt is unlikely to
// help, so it is non-retryable: the agent fails into coverage instead.
var ErrMalformedOutput = errors.New("llm: model output failed validation after one repair attempt")

// ErrRefused means the model declined to answer (a refusal message or a
// content-filter stop). The same input would be refused again, so it is
// non-retryable.
var ErrRefused = errors.New("llm: model refused to answer")

// ErrInvalidConfig means the client or the call is misconfigured (no base URL
// or model, an unknown agent role, a parameter the model rejects locally).
// Nothing a retry can fix, so it is non-retryable.
var ErrInvalidConfig = errors.New("llm: invalid configuration")

// maxErrorMessage bounds the endpoint's error text kept in APIError: proxies
// answer with whole HTML pages, which do not belong in logs or workflow history.
const maxErrorMessage = 512

// APIError is an HTTP failure reported by the endpoint. It is a distinct type so
// the activity can decide retryability from the status code and honour the
// server's Retry-After instead of guessing a backoff.
type APIError struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Message is the endpoint's error message (or the start of the body when it
	// is not an OpenAI error object), with the API key removed.
	Message string
	// RetryAfter is the delay the server asked for (Retry-After or
	// retry-after-ms); zero when it gave none.
	RetryAfter time.Duration
}

// Error describes the failure without any credential.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("llm: endpoint returned HTTP %d", e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return msg
}

// Retryable reports whether the status is transient: request timeout (408),
// conflict (409), too early (425), rate limiting (429) and server errors (5xx)
// may succeed later; other 4xx (bad request, auth, not found) will not.
func (e *APIError) Retryable() bool {
	switch {
	case e.StatusCode == http.StatusRequestTimeout, e.StatusCode == http.StatusConflict,
		e.StatusCode == http.StatusTooEarly, e.StatusCode == http.StatusTooManyRequests:
		return true
	case e.StatusCode >= 500 && e.StatusCode <= 599:
		return true
	}
	return false
}

// Retryable reports whether err is worth retrying, so the Temporal activity can
// map it to a retryable or non-retryable application error. HTTP failures
// follow APIError.Retryable; network errors, truncated responses and timeouts
// are transient; malformed output, refusals, cancellation, bad configuration,
// TLS certificate failures and anything unrecognised are not.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrMalformedOutput) || errors.Is(err, ErrRefused) ||
		errors.Is(err, ErrInvalidConfig) || errors.Is(err, context.Canceled) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Retryable()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// A certificate the client does not trust will not become trusted on retry.
	var (
		certInvalid   x509.CertificateInvalidError
		unknownAuth   x509.UnknownAuthorityError
		hostname      x509.HostnameError
		verifyFailure *tls.CertificateVerificationError
	)
	if errors.As(err, &certInvalid) || errors.As(err, &unknownAuth) ||
		errors.As(err, &hostname) || errors.As(err, &verifyFailure) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// classify turns what go-openai returned into this package's error types. ctx
// is the caller's context, used to tell the caller's cancellation apart from
// the per-call timeout.
func (c *Client) classify(ctx context.Context, st *callState, err error) error {
	var oe *openai.APIError
	if errors.As(err, &oe) && oe.HTTPStatusCode > 0 {
		if code, _ := oe.Code.(string); code == "content_filter" {
			// Azure-style endpoints refuse filtered prompts with an HTTP
			// error rather than a finish_reason; it is the same refusal.
			return fmt.Errorf("%w: %s", ErrRefused, c.clean(oe.Message))
		}
		return &APIError{StatusCode: oe.HTTPStatusCode, Message: c.clean(oe.Message), RetryAfter: st.retryAfter}
	}
	var re *openai.RequestError
	if errors.As(err, &re) && re.HTTPStatusCode > 0 {
		msg := strings.TrimSpace(string(re.Body))
		if msg == "" {
			msg = http.StatusText(re.HTTPStatusCode)
		}
		return &APIError{StatusCode: re.HTTPStatusCode, Message: c.clean(msg), RetryAfter: st.retryAfter}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("llm: call canceled: %w", context.Canceled)
	}
	if errors.Is(err, openai.ErrChatCompletionInvalidModel) ||
		errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated) ||
		errors.Is(err, openai.ErrReasoningModelLimitationsOther) ||
		errors.Is(err, openai.ErrReasoningModelLimitationsLogprobs) ||
		errors.Is(err, openai.ErrReasoningSamplingUnsupported) ||
		errors.Is(err, openai.ErrReasoningEffortUnsupported) ||
		errors.Is(err, openai.ErrReasoningToolsRequireResponses) {
		return fmt.Errorf("%w: model %q: %s", ErrInvalidConfig, c.model, err.Error())
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("llm: call timed out after %s: %w", c.timeout, err)
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	if errors.As(err, &syn) || errors.As(err, &typ) {
		// A 2xx answer that is not a chat completion: the base URL most
		// likely points at something that is not an OpenAI-compatible API.
		return fmt.Errorf("%w: the endpoint's response is not a chat completion (%s)", ErrInvalidConfig, c.clean(err.Error()))
	}
	return fmt.Errorf("llm: request failed: %w", &cleanError{msg: c.clean(err.Error()), err: err})
}

// cleanError carries a foreign error with its message scrubbed of the API key
// while keeping it inspectable with errors.Is / errors.As.
type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }

// clean removes the API key from text that came from outside (an endpoint that
// echoes request headers must not leak it into logs) and bounds its length.
func (c *Client) clean(s string) string {
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	}
	s = strings.TrimSpace(s)
	if len(s) > maxErrorMessage {
		s = truncateText(s, maxErrorMessage)
	}
	return s
}

// retryAfter reads the server's requested delay: retry-after-ms (OpenAI and
// Azure send it with millisecond precision), then Retry-After as seconds or as
// an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
