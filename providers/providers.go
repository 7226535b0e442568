// Package providers turns each monitoring tool's raw webhook delivery into normalized alerts and
// authenticates the delivery the way that tool can sign it. It does no I/O except fetching SNS
// signing certificates, so the HTTP handler stays thin and every mapping is fuzzable.
//
// The field mappings are described in docs/providers.md; where a provider's documentation leaves a choice open the
// choice is documented on the provider's type.
package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Severity values an Alert may carry after normalization; anything a provider sends is mapped onto these.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
	SeverityInfo     = "info"
)

// Limits applied to every normalized alert so one noisy provider cannot bloat incidents; longer text is
// truncated rather than rejected because the monitoring tool cannot fix its payload on a 4xx. Service and
// environment match their database columns, so an over-long value cannot fail the insert of a whole group.
const (
	MaxTitleRunes       = 500
	MaxDescriptionRunes = 20000
	MaxServiceRunes     = 200
	MaxEnvironmentRunes = 100
)

// MaxSourceAlertIDRunes is the size of the source id column. A longer id is rejected rather than
// truncated: two ids sharing a prefix would otherwise dedup into one incident.
const MaxSourceAlertIDRunes = 500

// MaxAlertsPerDelivery bounds one delivery's alerts so a single request cannot hold the ingest writer (and
// the tenant's quota row) for thousands of inserts; Alertmanager's max_alerts keeps groups under it.
const MaxAlertsPerDelivery = 1000

// Alert is one normalized alert, shaped like our inbound custom payload so
// every provider feeds the same ingestion path.
type Alert struct {
	Title         string            `json:"title"`
	Description   string            `json:"description"`
	SourceAlertID string            `json:"sourceAlertId"`
	Severity      string            `json:"severity"`
	Service       string            `json:"service"`
	Environment   string            `json:"environment"`
	Tags          map[string]string `json:"tags"`
	Metadata      map[string]any    `json:"metadata"`
	// Resolved is set when the provider reports recovery, so the caller resolves the matching incident
	// instead of opening a new one.
	Resolved bool `json:"resolved"`
}

// Request is the raw inbound HTTP request as the handler read it. Keeping it free of *http.Request lets
// normalizers and verifiers be called from tests and fuzzers without a server; the caller caps Body.
type Request struct {
	Header http.Header
	Query  url.Values
	Body   []byte
}

// Batch is what one delivery yields: zero or more alerts, or an instruction to acknowledge and do nothing.
type Batch struct {
	Alerts []Alert
	// DeliveryID is the provider's own id for this delivery (X-Webhook-Id or event.id for PagerDuty, SNS
	// MessageId, Sentry Request-ID); it stays the same on retries, so the caller can dedup replays.
	DeliveryID string
	// Ignored tells the caller to answer 2xx without ingesting, because a non-2xx would make the
	// provider retry or disable the webhook (pings, acknowledgements, unsubscribe notices).
	Ignored bool
	// Reason explains Ignored for logs.
	Reason string
	// Confirm is set for an SNS SubscriptionConfirmation; its URL has already passed the SNS host check.
	Confirm *Confirmation
	// Topic is the SNS topic the delivery came from (empty for other providers); the caller accepts
	// notifications only from topics whose subscription the tenant confirmed.
	Topic string
}

// Confirmation asks the caller to confirm an SNS subscription by GETting URL, which SNS requires before it
// delivers any notification.
type Confirmation struct {
	TopicArn string
	URL      string
}

// Mode says how a provider authenticates a delivery on top of the API key, which is always required.
type Mode string

// The three authentication modes (docs/providers.md).
const (
	// ModeHMAC is our X-Webhook-Signature scheme.
	ModeHMAC Mode = "hmac"
	// ModeNative is the provider's own signature (PagerDuty v1=, Sentry, Grafana header, SNS RSA).
	ModeNative Mode = "native"
	// ModeKeyOnly is for tools that cannot sign: the API key alone authenticates.
	ModeKeyOnly Mode = "key_only"
)

// Provider authenticates and normalizes one monitoring tool's webhook deliveries.
type Provider interface {
	// Name is the lowercase path segment of POST /v1/webhooks/{tenantId}/{provider}.
	Name() string
	// Mode reports how Verify authenticates, so the caller can document and meter it.
	Mode() Mode
	// Verify authenticates r. secret is the webhook secret tied to the caller's API key (for native HMAC
	// schemes the tenant stores the provider-generated secret there). Every failure wraps
	// ErrUnauthenticated and its text never says which part failed.
	Verify(ctx context.Context, r Request, secret []byte, now time.Time) error
	// Normalize parses r.Body, never trusting Content-Type (SNS sends text/plain), into a Batch. Bad input
	// wraps ErrInvalidPayload with a message fit to show the client.
	Normalize(r Request) (Batch, error)
}

var (
	// ErrUnauthenticated marks a delivery whose signature or envelope could not be authenticated; the
	// caller answers 401.
	ErrUnauthenticated = errors.New("webhook authentication failed")
	// ErrInvalidPayload marks a body that cannot become an alert; the caller answers 400 with the message.
	ErrInvalidPayload = errors.New("invalid webhook payload")
)

// AuthError is the error Verify returns. Its text is always that of ErrUnauthenticated so a handler that
// echoes it cannot tell an attacker which check failed; Reason carries the detail for server logs only.
type AuthError struct {
	Reason string
}

// Error deliberately hides Reason.
func (e *AuthError) Error() string { return ErrUnauthenticated.Error() }

// Is lets errors.Is(err, ErrUnauthenticated) hold without exposing Reason through Unwrap chains.
func (e *AuthError) Is(target error) bool { return target == ErrUnauthenticated }

func unauthenticated(format string, args ...any) error {
	return &AuthError{Reason: fmt.Sprintf(format, args...)}
}

// PayloadError is the error Normalize returns for bad input. Its text is only the human message (for
// example "title is required") so the caller can send it to the client unchanged.
type PayloadError struct {
	Msg string
}

// Error returns the message meant for the client.
func (e *PayloadError) Error() string { return e.Msg }

// Is lets errors.Is(err, ErrInvalidPayload) hold.
func (e *PayloadError) Is(target error) bool { return target == ErrInvalidPayload }

func invalid(format string, args ...any) error {
	return &PayloadError{Msg: fmt.Sprintf(format, args...)}
}

// Options configures a Registry.
type Options struct {
	// HTTPClient fetches SNS signing certificates; the caller passes its SSRF-guarded client. Nil means a
	// plain client with a short timeout.
	HTTPClient *http.Client
	// DefaultSeverity is used when a provider sends no usable severity; "" (or an unknown value) means
	// "high", the fallback for firing alerts (docs/providers.md).
	DefaultSeverity string
	// SNSCertHostAllowed decides which host (the URL's host, with port if any) may serve SNS signing
	// certificates and subscription confirmations. Nil allows only sns.<region>.amazonaws.com and
	// sns.<region>.amazonaws.com.cn on the default https port; tests override it to reach httptest.
	SNSCertHostAllowed func(host string) bool
	// SNSTopicAllowed restricts which SNS topics are accepted; nil accepts all.
	SNSTopicAllowed func(topicArn string) bool
}

// Registry holds one configured instance of every provider.
type Registry struct {
	byName map[string]Provider
}

// New builds every provider with the shared options.
func New(o Options) *Registry {
	def := strings.ToLower(strings.TrimSpace(o.DefaultSeverity))
	if !validSeverity(def) {
		def = SeverityHigh
	}
	n := normalizer{defaultSeverity: def}
	list := []Provider{
		&Custom{n: n},
		&Datadog{n: n},
		&Alertmanager{n: n},
		&Grafana{n: n},
		&PagerDuty{n: n},
		newSNS(o, n),
		&Sentry{n: n},
		&NewRelic{n: n},
		&Opsgenie{n: n},
		&Azure{n: n},
		&GCP{n: n},
	}
	r := &Registry{byName: make(map[string]Provider, len(list))}
	for _, p := range list {
		r.byName[p.Name()] = p
	}
	return r
}

// Lookup finds a provider by its path name.
func (r *Registry) Lookup(name string) (Provider, bool) {
	p, ok := r.byName[name]
	return p, ok
}

// Names lists the supported provider names, sorted, for routing, docs and metrics labels.
func Names() []string {
	names := []string{"alertmanager", "azure", "custom", "datadog", "gcp", "grafana", "newrelic", "opsgenie", "pagerduty", "sentry", "sns"}
	sort.Strings(names)
	return names
}

func validSeverity(s string) bool {
	switch s {
	case SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityInfo:
		return true
	}
	return false
}

// normalizer holds what every provider needs to finish an alert.
type normalizer struct {
	defaultSeverity string
}

// finish enforces the invariants every alert leaving Normalize must satisfy: trimmed text within the
// limits, a source id that fits its column, a title, one of the five severities and non-nil maps. needID makes a missing source id an
// error for providers whose table names one, because dedup and resolve depend on it.
func (n normalizer) finish(a *Alert, provider string, needID bool) error {
	a.Title = truncateRunes(strings.TrimSpace(a.Title), MaxTitleRunes)
	if a.Title == "" {
		return invalid("%s: title is required", provider)
	}
	a.Description = truncateRunes(strings.TrimSpace(a.Description), MaxDescriptionRunes)
	a.SourceAlertID = strings.TrimSpace(a.SourceAlertID)
	if needID && a.SourceAlertID == "" {
		return invalid("%s: alert id is required", provider)
	}
	if utf8.RuneCountInString(a.SourceAlertID) > MaxSourceAlertIDRunes {
		return invalid("%s: alert id exceeds the limit of %d characters", provider, MaxSourceAlertIDRunes)
	}
	a.Severity = strings.ToLower(strings.TrimSpace(a.Severity))
	if !validSeverity(a.Severity) {
		a.Severity = n.defaultSeverity
	}
	a.Service = truncateRunes(strings.TrimSpace(a.Service), MaxServiceRunes)
	a.Environment = truncateRunes(strings.TrimSpace(a.Environment), MaxEnvironmentRunes)
	if a.Tags == nil {
		a.Tags = map[string]string{}
	}
	if a.Metadata == nil {
		a.Metadata = map[string]any{}
	}
	return nil
}

func truncateRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	i := 0
	for pos := range s {
		if i == max {
			return strings.TrimSpace(s[:pos])
		}
		i++
	}
	return s
}

// pScale maps the P1..P5 priority scale shared by Datadog, PagerDuty and Opsgenie; "" means not on it.
func pScale(p string) string {
	switch strings.ToUpper(strings.TrimSpace(p)) {
	case "P1":
		return SeverityCritical
	case "P2":
		return SeverityHigh
	case "P3":
		return SeverityMedium
	case "P4":
		return SeverityLow
	case "P5":
		return SeverityInfo
	}
	return ""
}

// splitTag splits "key:value" on the first colon; a bare tag becomes key with an empty value.
func splitTag(tag string) (string, string) {
	k, v, _ := strings.Cut(strings.TrimSpace(tag), ":")
	return strings.TrimSpace(k), strings.TrimSpace(v)
}

// addTags splits each entry into tags, skipping empty entries.
func addTags(dst map[string]string, entries []string) {
	for _, e := range entries {
		if k, v := splitTag(e); k != "" {
			dst[k] = v
		}
	}
}

// putIf stores v in m only when it carries information, so metadata stays free of empty noise.
func putIf(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case nil:
		return
	case string:
		if strings.TrimSpace(x) == "" {
			return
		}
	case map[string]any:
		if len(x) == 0 {
			return
		}
	case []any:
		if len(x) == 0 {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	}
	m[k] = v
}

// joinNonEmpty joins the non-blank parts, used where a table says "A (+ B)".
func joinNonEmpty(sep string, parts ...string) string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
