package delivery

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Bounds of webhook endpoint input and of the deliveries log.
const (
	MaxEndpointURLLength = 2000
	// MaxEndpointsPerTenant bounds each event's fan-out (one delivery
	// workflow per subscribed endpoint) and the relay's per-page endpoint read.
	MaxEndpointsPerTenant = 20
	MaxDeliveriesListed   = 100
	DefaultDeliveriesList = 50
)

// Service serves the outbound event subscription endpoints. The signing
// secret exists in plaintext only in the creation response.
type Service struct {
	store        *Store
	sealer       *auth.Sealer
	allowPrivate bool
	now          func() time.Time
}

// NewService wires the service; sealer encrypts signing secrets at rest
// and allowPrivate is EGRESS_ALLOW_PRIVATE, so a URL the egress client would
// refuse on every delivery is refused when the endpoint is created.
func NewService(store *models.Store, sealer *auth.Sealer, allowPrivate bool) *Service {
	return &Service{store: NewStore(store.DB()), sealer: sealer, allowPrivate: allowPrivate, now: time.Now}
}

// CreateEndpointInput is the body of POST /v1/webhook-endpoints.
type CreateEndpointInput struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// CreatedEndpoint is a new endpoint with the secret the caller must copy now.
type CreatedEndpoint struct {
	Endpoint WebhookEndpoint
	Secret   string
}

// Create validates and stores an endpoint with a fresh Standard Webhooks secret.
func (s *Service) Create(ctx context.Context, p auth.Principal, in CreateEndpointInput) (*CreatedEndpoint, error) {
	if err := validateEndpoint(in, s.allowPrivate); err != nil {
		return nil, err
	}
	n, err := s.store.CountWebhookEndpoints(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	if n >= MaxEndpointsPerTenant {
		return nil, errcode.Invalid("a tenant may have at most %d webhook endpoints (MaxEndpointsPerTenant); delete one first", MaxEndpointsPerTenant)
	}
	events := slices.Clone(in.Events)
	slices.Sort(events)
	e := WebhookEndpoint{ID: models.NewID("whe"), TenantID: p.TenantID, URL: strings.TrimSpace(in.URL),
		Events: slices.Compact(events), Status: EndpointActive, CreatedAt: s.now().UTC()}
	secret := auth.NewWebhookSecret()
	e.SecretEnc = s.sealer.Encrypt([]byte(secret), []byte(e.ID))
	if err := s.store.CreateWebhookEndpoint(ctx, &e); err != nil {
		return nil, errcode.Down("the database", err)
	}
	return &CreatedEndpoint{Endpoint: e, Secret: secret}, nil
}

func validateEndpoint(in CreateEndpointInput, allowPrivate bool) error {
	raw := strings.TrimSpace(in.URL)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return errcode.Invalid("url is required")
	case len(raw) > MaxEndpointURLLength:
		return errcode.Invalid("url must be at most %d characters", MaxEndpointURLLength)
	case err != nil:
		return errcode.Invalid("url must be an absolute http or https URL")
	}
	if err := egress.CheckURL(u, allowPrivate); err != nil {
		return errcode.Invalid("url must be an absolute http or https URL the egress policy allows: %v", err)
	}
	switch {
	case len(in.Events) == 0:
		return errcode.Invalid("events must list at least one of: %s", strings.Join(models.EventKinds, ", "))
	}
	for _, k := range in.Events {
		if !slices.Contains(models.EventKinds, k) {
			return errcode.Invalid("unknown event %q; allowed: %s", k, strings.Join(models.EventKinds, ", "))
		}
	}
	return nil
}

// List returns the tenant's endpoints without secrets.
func (s *Service) List(ctx context.Context, p auth.Principal) ([]WebhookEndpoint, error) {
	out, err := s.store.ListWebhookEndpoints(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return out, nil
}

// Delete removes an endpoint; another tenant's id is reported missing.
func (s *Service) Delete(ctx context.Context, p auth.Principal, id string) error {
	err := s.store.DeleteWebhookEndpoint(ctx, p.TenantID, id)
	if errors.Is(err, models.ErrNotFound) {
		return errcode.New(errcode.NotFound, "no webhook endpoint with id %q", id)
	}
	if err != nil {
		return errcode.Down("the database", err)
	}
	return nil
}

// Deliveries returns the endpoint's most recent attempts, newest first, at most
// limit (DefaultDeliveriesList when 0, capped at MaxDeliveriesListed).
func (s *Service) Deliveries(ctx context.Context, p auth.Principal, id string, limit int) ([]DeliveryAttempt, error) {
	if _, err := s.store.GetWebhookEndpoint(ctx, p.TenantID, id); errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "no webhook endpoint with id %q", id)
	} else if err != nil {
		return nil, errcode.Down("the database", err)
	}
	if limit < 0 || limit > MaxDeliveriesListed {
		return nil, errcode.Invalid("limit must be 1 to %d", MaxDeliveriesListed)
	}
	if limit == 0 {
		limit = DefaultDeliveriesList
	}
	out, err := s.store.DeliveryAttempts(ctx, p.TenantID, id, limit)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return out, nil
}
