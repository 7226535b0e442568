package providers

import (
	"context"
	"strings"
	"time"
)

// Custom accepts our own inbound alert JSON (docs/providers.md) signed with X-Webhook-Signature.
//
// Besides the documented fields it reads an optional "status": "resolved" (any case) marks the alert
// Resolved so a custom integration can close the incident it opened; any other value means firing.
// Unknown fields are ignored so callers can send richer bodies.
type Custom struct{ n normalizer }

// Name implements Provider.
func (*Custom) Name() string { return "custom" }

// Mode implements Provider.
func (*Custom) Mode() Mode { return ModeHMAC }

// Verify requires our signature; the custom endpoint is the one every client can sign.
func (*Custom) Verify(_ context.Context, r Request, secret []byte, now time.Time) error {
	return verifyOurs(r, secret, now)
}

type customPayload struct {
	Title         *string           `json:"title"`
	Description   *string           `json:"description"`
	SourceAlertID flexString        `json:"sourceAlertId"`
	Severity      string            `json:"severity"`
	Service       string            `json:"service"`
	Environment   string            `json:"environment"`
	Tags          map[string]string `json:"tags"`
	Metadata      map[string]any    `json:"metadata"`
	Status        string            `json:"status"`
}

// Normalize validates strictly, unlike the other providers, because the caller authored the payload and
// can fix it on a 400.
func (c *Custom) Normalize(r Request) (Batch, error) {
	var p customPayload
	if err := decodeObject("custom", r.Body, &p); err != nil {
		return Batch{}, err
	}
	if p.Title == nil || strings.TrimSpace(*p.Title) == "" {
		return Batch{}, invalid("title is required")
	}
	if p.Description == nil || strings.TrimSpace(*p.Description) == "" {
		return Batch{}, invalid("description is required")
	}
	sev := strings.ToLower(strings.TrimSpace(p.Severity))
	if sev != "" && !validSeverity(sev) {
		return Batch{}, invalid("severity must be one of critical, high, medium, low, info")
	}
	a := Alert{
		Title:         *p.Title,
		Description:   *p.Description,
		SourceAlertID: p.SourceAlertID.String(),
		Severity:      sev,
		Service:       p.Service,
		Environment:   p.Environment,
		Tags:          p.Tags,
		Metadata:      p.Metadata,
		Resolved:      strings.EqualFold(strings.TrimSpace(p.Status), "resolved"),
	}
	if err := c.n.finish(&a, "custom", false); err != nil {
		return Batch{}, err
	}
	return Batch{Alerts: []Alert{a}}, nil
}

// keyOnly is embedded by providers that cannot sign. The API key authenticates them; a signature is
// checked only when one is sent anyway (for example through a custom header), so a wrong one still fails.
type keyOnly struct{}

// Mode implements Provider.
func (keyOnly) Mode() Mode { return ModeKeyOnly }

// Verify implements Provider.
func (keyOnly) Verify(_ context.Context, r Request, secret []byte, now time.Time) error {
	if !headerPresent(r.Header, HeaderSignature) {
		return nil
	}
	return verifyOurs(r, secret, now)
}
