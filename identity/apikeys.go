package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// Bounds of API key input. A tenant-supplied webhook secret (PagerDuty and Sentry
// generate their own) must be long enough to resist guessing and short enough to
// store.
const (
	MaxAPIKeyNameLength = 100
	// MaxAPIKeysPerTenant bounds a tenant's active keys: each one is a
	// credential to watch and a webhook path into the service, and a tenant
	// that needs more should revoke what it no longer uses.
	MaxAPIKeysPerTenant    = 50
	MinWebhookSecretLength = 16
	MaxWebhookSecretLength = 256
)

// APIKeys serves the API key endpoints. Plaintext keys and secrets exist only in
// the creation response; they are never logged.
type APIKeys struct {
	store   *models.Store
	own     *Store
	sealer  *auth.Sealer
	revoked func(keyID string)
	now     func() time.Time
}

// NewAPIKeys wires the API key service; sealer encrypts webhook secrets at
// rest, and revoked is told of every revoked key so the process's cache of
// verified keys (the webhook ingest's) drops it at once.
func NewAPIKeys(store *models.Store, sealer *auth.Sealer, revoked func(keyID string)) *APIKeys {
	return &APIKeys{store: store, own: NewStore(store.DB()), sealer: sealer, revoked: revoked, now: time.Now}
}

// CreateAPIKeyInput is the body of POST /v1/api-keys.
type CreateAPIKeyInput struct {
	Name          string `json:"name"`
	WebhookSecret string `json:"webhookSecret"`
	// Routes limits the key to these webhook routes (WebhookRoutes); empty
	// lets it post to every one.
	Routes []string `json:"routes"`
}

// WebhookRoutes are the routes a key may be limited to: each provider's
// alert webhook by its name, and the change and GitHub feeds of recorded
// changes. A key that only feeds deploys then cannot open incidents, and an
// Alertmanager's key cannot record changes.
func WebhookRoutes() []string { return append(providers.Names(), "change", "github") }

// validRoutes sorts and dedupes routes and refuses any that is not a
// webhook route.
func validRoutes(routes []string) ([]string, error) {
	known := WebhookRoutes()
	var out []string
	for _, r := range routes {
		r = strings.TrimSpace(r)
		if !slices.Contains(known, r) {
			return nil, errcode.Invalid("routes: %q is not a webhook route; use any of %s", r, strings.Join(known, ", "))
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// CreatedAPIKey is a new key with the plaintexts the caller must copy now.
type CreatedAPIKey struct {
	Key           APIKey
	Plaintext     string
	WebhookSecret string
}

// Create issues a key and its webhook secret (generated unless the caller supplies
// the one its monitoring tool generated).
func (s *APIKeys) Create(ctx context.Context, p auth.Principal, in CreateAPIKeyInput) (*CreatedAPIKey, error) {
	name := strings.TrimSpace(in.Name)
	secret := strings.TrimSpace(in.WebhookSecret)
	switch n := len(secret); {
	case name == "":
		return nil, errcode.Invalid("name is required")
	case utf8.RuneCountInString(name) > MaxAPIKeyNameLength:
		return nil, errcode.Invalid("name must be at most %d characters", MaxAPIKeyNameLength)
	case in.WebhookSecret != "" && (n < MinWebhookSecretLength || n > MaxWebhookSecretLength):
		return nil, errcode.Invalid("webhookSecret must be %d to %d characters", MinWebhookSecretLength, MaxWebhookSecretLength)
	case secret == "":
		secret = auth.NewWebhookSecret()
	}
	routes, err := validRoutes(in.Routes)
	if err != nil {
		return nil, err
	}
	plain := auth.NewAPIKey()
	k := APIKey{
		ID: models.NewID("key"), TenantID: p.TenantID, Name: name, Prefix: auth.KeyDisplayPrefix(plain),
		KeyHash: auth.SHA256Hex(plain), Status: APIKeyActive, CreatedAt: s.now().UTC(), Routes: routes,
	}
	k.SecretEnc = s.sealer.Encrypt([]byte(secret), []byte(k.ID))
	if err := s.own.CreateAPIKeyWithin(ctx, &k, MaxAPIKeysPerTenant); err != nil {
		if errors.Is(err, ErrTooManyKeys) {
			return nil, errcode.Invalid("a tenant may hold at most %d active API keys; revoke one it no longer uses first", MaxAPIKeysPerTenant)
		}
		return nil, errcode.Down("the database", err)
	}
	return &CreatedAPIKey{Key: k, Plaintext: plain, WebhookSecret: secret}, nil
}

// List returns the tenant's keys without any secret material.
func (s *APIKeys) List(ctx context.Context, p auth.Principal) ([]APIKey, error) {
	keys, err := s.own.ListAPIKeys(ctx, p.TenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return keys, nil
}

// Revoke stops a key from authenticating webhooks: at once in this process, and
// within keyCacheTTL in other API processes that verified it recently. Revoking
// twice is not an error; another tenant's key is reported missing.
func (s *APIKeys) Revoke(ctx context.Context, p auth.Principal, id string) (*APIKey, error) {
	k, err := s.own.RevokeAPIKey(ctx, p.TenantID, id, s.now().UTC())
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "no API key with id %q", id)
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	s.revoked(k.ID)
	return k, nil
}
