// Package app assembles a Causeway process from its configuration: the store, the
// Temporal client, the rate limiter, the services, the HTTP router and the worker.
// The api, worker and all-in-one binaries differ only in which parts they run.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/causeway/causeway/api"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/llm"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
	"github.com/causeway/causeway/ratelimit"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/service"
	"github.com/causeway/causeway/ui"
	"github.com/causeway/causeway/worker"
)

// App is one process's shared dependencies.
type App struct {
	Config   *config.Config
	Log      *slog.Logger
	Store    *models.Store
	Temporal client.Client
	Limiter  ratelimit.Limiter
	// Marks shares short-lived facts (refused keys, accepted signed
	// deliveries) between API replicas; it lives where the limiter does.
	Marks  ratelimit.Marks
	redis  *redis.Client
	sealer *auth.Sealer

	dispatcherOnce sync.Once
	dispatcher     *investigation.Dispatcher

	connectorOnce sync.Once
	connector     *datasources.Connector
	// own are Causeway's own listeners and dependencies, derived once from
	// the configuration at start and refused to every tenant.
	own []egress.Endpoint

	slackParts slackParts
}

// New connects to the database, Redis (when configured) and Temporal at
// temporalAddr. The Temporal client is lazy, so the API can start and keep
// accepting incidents while Temporal is unreachable; the dispatcher catches up.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger, temporalAddr string) (*App, error) {
	sealer, err := auth.NewSealer(cfg.SecretsKey)
	if err != nil {
		return nil, fmt.Errorf("SECRETS_KEY: %w", err)
	}
	store, err := models.Open(ctx, cfg.DatabaseURL, cfg.SQLitePath())
	if err != nil {
		return nil, err
	}
	mem := ratelimit.NewMemory()
	a := &App{Config: cfg, Log: log, Store: store, Limiter: mem, Marks: mem, sealer: sealer}
	if cfg.RedisURL != "" {
		opts, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("redis url: %w", err)
		}
		// Rate limiting fails open when Redis is away; short timeouts and no
		// retries keep a hung Redis from adding seconds to every request. That
		// includes dialling: by default the pool dials five times, 100 ms
		// apart, for each request that finds no connection, which added 400 ms
		// to every request while Redis was down.
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 500*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
		opts.MaxRetries, opts.DialerRetries = -1, 1
		a.redis = redis.NewClient(opts)
		shared := ratelimit.NewRedis(a.redis)
		a.Limiter, a.Marks = shared, shared
	}
	a.own = OwnServices(ctx, cfg, temporalAddr)
	own := make([]string, len(a.own))
	for i, e := range a.own {
		own[i] = e.String()
	}
	log.Info("Causeway's own services, refused to every tenant's data sources and probes", slog.Any("endpoints", own))
	a.Temporal, err = client.NewLazyClient(client.Options{
		HostPort:  temporalAddr,
		Namespace: cfg.TemporalNamespace,
		Logger:    sdklog.NewStructuredLogger(warnOnly(log)),
	})
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	return a, nil
}

// warnOnly keeps the SDK's per-poll info lines out of the service log.
func warnOnly(log *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{log.Handler(), slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// Close releases every connection.
func (a *App) Close() {
	if a.Temporal != nil {
		a.Temporal.Close()
	}
	if a.redis != nil {
		_ = a.redis.Close()
	}
	_ = a.Store.Close()
}

// Dispatcher returns the component that guarantees each incident its workflow.
// There is one per process, so the webhook path's Kick reaches the loop that Run
// drives in the same process.
func (a *App) Dispatcher() *investigation.Dispatcher {
	a.dispatcherOnce.Do(func() {
		a.dispatcher = investigation.NewDispatcher(a.Store, a.Temporal, a.Config.TemporalTaskQueue, a.Config.InvestigationsInFlight, a.Log)
		a.dispatcher.UseSearchAttributes(a.Config.TemporalNamespace)
	})
	return a.dispatcher
}

// Relay returns the component that delivers recorded outbound events; the
// worker processes run it next to the dispatcher.
func (a *App) Relay() *delivery.Relay {
	return delivery.NewRelay(a.Store, a.Temporal, a.Config.TemporalTaskQueue, a.Log)
}

// Reconciler returns the component that starts the workflow of any proposed
// remediation still without one; the worker processes run it.
func (a *App) Reconciler() *remediation.Reconciler {
	return remediation.NewReconciler(a.Store, a.Temporal, a.Config.TemporalTaskQueue, a.Log)
}

// Router builds the HTTP API with the dashboard beside it.
func (a *App) Router() http.Handler {
	c := a.Config
	tokens := auth.NewTokens(c.AuthJWTSecret, c.AuthIssuer, c.AuthAudience, c.AuthTokenTTL, models.ValidRole)
	accounts := identity.NewAccounts(a.Store, tokens, identity.AccountsConfig{
		RefreshTTL: c.AuthRefreshTTL, SessionMax: c.AuthSessionMax, SignupEnabled: c.AuthSignupEnabled,
		QuotaEvents: c.QuotaEventsPerMonth, QuotaInvestigations: c.QuotaInvestigationsPerMonth, Plans: c.PlanQuotas(),
	})
	incidents := investigation.NewIncidents(a.Store, a.Temporal, a.Dispatcher(), auth.NewSigner(c.AuthJWTSecret, "cursor"), a.Log)
	egressClient := egress.NewClient(egress.Options{AllowPrivate: c.EgressAllowPrivate})
	registry := providers.New(providers.Options{HTTPClient: egressClient})
	d := api.Deps{
		Log:                         a.Log,
		Limiter:                     a.Limiter,
		Marks:                       a.Marks,
		RateLimitPerMinute:          c.RateLimitPerMinute,
		AuthRateLimitPerMinute:      c.AuthRateLimitPerMinute,
		WebhookIPRateLimitPerMinute: c.WebhookIPRateLimitPerMinute,
		TrustedProxies:              c.TrustedProxyList(),
		Accounts:                    accounts,
		PublicURL:                   a.PublicURL(),
		OAuth:                       identity.NewOAuth(accounts, c.OAuth, auth.NewSigner(c.AuthJWTSecret, "oauth-state"), a.PublicURL()),
		Incidents:                   incidents,
		Health:                      service.NewHealth(a.Store, a.Limiter, a.Temporal),
		APIKeys:                     identity.NewAPIKeys(a.Store, a.sealer, service.ForgetVerifiedKey),
		Investigations:              investigation.NewInvestigations(a.Store, a.Temporal, a.Dispatcher(), a.Log),
		Remediations:                remediation.NewService(a.Store, a.Temporal, c.TemporalTaskQueue, a.sqlTargets(), c.EgressAllowPrivate),
		WebhookEndpoints:            delivery.NewService(a.Store, a.sealer, c.EgressAllowPrivate),
		Analytics:                   service.NewAnalytics(a.Store),
		Outcomes:                    service.NewOutcomes(a.Store, a.Temporal),
		DataSources:                 service.NewDataSources(a.Store, a.sealer, a.DataSourceConnector()),
		Ingest:                      service.NewIngest(a.Store, incidents, a.Dispatcher(), registry, a.sealer, egressClient, a.Marks, a.Log),
		Changes:                     service.NewChanges(a.Store, auth.NewSigner(c.AuthJWTSecret, "cursor"), a.Marks, a.Log),
	}
	d.SSO = identity.NewSSO(accounts, identity.SSOOptions{
		Sealer: a.sealer, Secret: c.AuthJWTSecret, AllowHTTP: c.EgressAllowPrivate, PublicURL: a.PublicURL(),
		HTTP: egress.NewClient(egress.Options{AllowPrivate: c.EgressAllowPrivate, MaxRedirects: -1}),
	})
	d.Plans = identity.NewPlans(a.Store, c.PlanQuotas()).WithSSO(d.SSO)
	d.Slack = a.slackService(d.Investigations)
	dash, err := ui.New(ui.Options{
		Log: a.Log, Sealer: a.sealer, Accounts: d.Accounts, Incidents: d.Incidents,
		Investigations: d.Investigations, Remediations: d.Remediations, APIKeys: d.APIKeys,
		WebhookEndpoints: d.WebhookEndpoints, DataSources: d.DataSources, Changes: d.Changes, Analytics: d.Analytics, Outcomes: d.Outcomes, Slack: d.Slack, PublicURL: c.PublicURL,
		TemporalUIURL: c.TemporalUILink(), TemporalNamespace: c.TemporalNamespace, SignupEnabled: c.AuthSignupEnabled,
	})
	if err != nil {
		// The templates are embedded and parsed by the ui package's tests, so
		// this is a broken build; the API still serves without the dashboard.
		a.Log.Error("dashboard disabled: its templates do not parse", slog.Any("error", err))
	} else {
		d.Dashboard = dash
	}
	return api.NewRouter(d)
}

// DataSourceConnector reaches the tenants' data sources, each tenant under
// its grant inside the operator's ceiling, never at Causeway's own services;
// the API's create and test calls, the worker's queries and a remediation's
// verification share its policy. It never uses EGRESS_ALLOW_PRIVATE: data
// sources have their own allowlist.
func (a *App) DataSourceConnector() *datasources.Connector {
	a.connectorOnce.Do(func() {
		c := a.Config
		a.connector = datasources.NewConnector(datasources.Options{AllowNetworks: c.DataSourceNetworks(),
			Grants: a.Store, GrantAll: c.DataSourceGrantAll, Refuse: a.own,
			QueryTimeout: c.DataSourceQueryTimeout, ResultCap: c.DataSourceResultCap})
	})
	return a.connector
}

// DashboardURL is where people open the dashboard.
func (a *App) DashboardURL() string { return a.PublicURL() + ui.Prefix + "/" }

// sqlTargets is what the API checks runbooks against and the worker runs
// sql_migration steps with.
func (a *App) sqlTargets() remediation.SQLTargets {
	return remediation.SQLTargets{DSNs: a.Config.SQLTargetMap(), Tenants: a.Config.SQLTargetTenantMap()}
}

// PublicURL is where browsers and monitoring tools reach the API.
func (a *App) PublicURL() string {
	if a.Config.PublicURL != "" {
		return a.Config.PublicURL
	}
	return "http://" + a.Config.HTTPAddr
}

// Worker builds the Temporal worker with every workflow and activity.
func (a *App) Worker() sdkworker.Worker {
	out := egress.NewClient(egress.Options{AllowPrivate: a.Config.EgressAllowPrivate,
		Timeout: remediation.StepRequestTimeout, ResponseHeaderTimeout: remediation.StepRequestTimeout})
	acts := &investigation.Activities{Store: a.Store, Passes: investigation.NewStore(a.Store.DB()), Sealer: a.sealer,
		DataSources: a.DataSourceConnector(),
		Gathering: investigation.Gathering{Budget: a.Config.DataSourcePassBudget, MaxQueries: a.Config.DataSourceMaxQueries,
			Lookback: a.Config.DataSourceLookback},
		Tools:    investigation.ToolBudget{Calls: a.Config.LLMToolCalls, Bytes: a.Config.LLMToolBytes, Tokens: a.Config.LLMToolTokens},
		Released: a.Dispatcher().Kick}
	if c := a.Config; c.LLMEnabled() {
		// One agent run may make a call and a repair call; both must fit in the
		// activity's 2-minute attempt, or Temporal retries while the first
		// attempt is still spending tokens.
		acts.LLM = llm.New(llm.Config{BaseURL: c.LLMBaseURL, APIKey: c.LLMAPIKey, Model: c.LLMModel, Timeout: 55 * time.Second})
	}
	return worker.New(a.Temporal, a.Config.TemporalTaskQueue, acts, worker.Slices{
		Remediation: &remediation.Activities{Kernel: a.Store, Store: remediation.NewStore(a.Store.DB()), Egress: out, SQLTargets: a.sqlTargets(),
			Reach: a.DataSourceConnector(), VerifyAfter: a.Config.RemediationVerifyAfter, Rechecker: acts, Reinvestigate: a.reinvestigate},
		Delivery: &delivery.Activities{Store: delivery.NewStore(a.Store.DB()), Sealer: a.sealer, Egress: out},
		Slack:    a.slackActivities(),
	})
}

// reinvestigate starts an incident's next pass on behalf of Causeway itself
// (a remediation whose verification found no recovery); the key makes a
// retried start join the first.
func (a *App) reinvestigate(ctx context.Context, tenantID, incidentID, text, key string) error {
	p := auth.Principal{TenantID: tenantID, Email: "causeway", Roles: []string{models.RoleOwner}}
	_, err := investigation.NewInvestigations(a.Store, a.Temporal, a.Dispatcher(), a.Log).AddContext(ctx, p, incidentID,
		investigation.AddContextInput{Context: text, Reinvestigate: true, IdempotencyKey: key})
	e, ok := errcode.As(err)
	switch {
	case !ok:
		return err
	case e.Code == errcode.InvestigationInProgress:
		// A pass is already looking at the incident.
		return nil
	case e.Code == errcode.Unavailable:
		return err
	}
	// Quota spent, incident gone: no retry changes that.
	return temporal.NewNonRetryableApplicationError(e.Message, e.Code, nil)
}

// Serve runs the HTTP server until ctx ends, then drains in-flight requests.
func (a *App) Serve(ctx context.Context, h http.Handler) error {
	srv := &http.Server{
		Addr:              a.Config.HTTPAddr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	// Listen before serving so the bound address can be logged: with port 0 the
	// kernel picks the port, and the log line is how an operator (or a test
	// running the binary) learns it.
	ln, err := net.Listen("tcp", a.Config.HTTPAddr)
	if err != nil {
		return fmt.Errorf("http server: %w", err)
	}
	a.Log.Info("api listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// NewLogger is the process logger: JSON lines on stderr at the configured level.
func NewLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
	// Code that logs through the package-level functions (the error mapper, the
	// Temporal SDK's fallbacks) must write the same JSON at the same level.
	slog.SetDefault(log)
	return log
}

// LogConfig prints the effective settings once at start, secrets masked.
func LogConfig(log *slog.Logger, cfg *config.Config) {
	m := cfg.Masked()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]any, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, m[k]))
	}
	log.Info("configuration", attrs...)
}
