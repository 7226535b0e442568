// Package api is Causeway's HTTP surface (Gin). Handlers are thin: bind the input,
// call one service method, map its error in errors.go, write JSON.
package api

import (
	"log/slog"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/ratelimit"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/service"
	"github.com/causeway/causeway/slack"
)

// Deps is everything the router needs; the process that serves HTTP builds it once.
type Deps struct {
	Log     *slog.Logger
	Limiter ratelimit.Limiter
	// Marks shares short-lived flags between replicas (the same backend as
	// Limiter): here, the client addresses whose refused webhook keys spent
	// their budget.
	Marks              ratelimit.Marks
	RateLimitPerMinute int
	// AuthRateLimitPerMinute limits sign-up, login and refresh per client IP.
	AuthRateLimitPerMinute int
	// WebhookIPRateLimitPerMinute limits webhook deliveries per client IP
	// before their API key is looked up.
	WebhookIPRateLimitPerMinute int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is believed;
	// nil trusts none.
	TrustedProxies []string
	Accounts       *identity.Accounts
	OAuth          *identity.OAuth
	Incidents      *investigation.Incidents
	Health         *service.Health
	// APIKeys manages the keys that authenticate webhook deliveries.
	APIKeys *identity.APIKeys
	// Ingest turns webhook deliveries into incidents.
	Ingest *service.Ingest
	// Investigations starts passes and serves their results.
	Investigations *investigation.Investigations
	// Remediations serves runbooks and the approval-gated remediations.
	Remediations *remediation.Service
	// WebhookEndpoints manages outbound event subscriptions.
	WebhookEndpoints *delivery.Service
	// Analytics aggregates incident and accuracy figures.
	Analytics *service.Analytics
	// Outcomes records how people grade investigations.
	Outcomes *service.Outcomes
	// DataSources manages the systems the agents query.
	DataSources *service.DataSources
	// Plans reports the tenant's plan and usage.
	Plans *identity.Plans
	// SSO serves the tenants' single sign-on.
	SSO *identity.SSO
	// Changes records deploys and config changes and lists them.
	Changes *service.Changes
	// Slack serves the Slack integration and Slack's signed requests.
	Slack *slack.Service
	// Dashboard is the web UI served beside the API; nil serves the API alone.
	Dashboard Dashboard
	// PublicURL is where browsers reach the API; when it is https, TLS ends
	// at a proxy in front, so cookies are Secure and HSTS is sent even though
	// the request reached us in plain HTTP.
	PublicURL string
}

// https reports whether browsers reach the API over TLS, here or at a proxy.
func (d Deps) https(c *gin.Context) bool {
	return c.Request.TLS != nil || strings.HasPrefix(d.PublicURL, "https://")
}

// Role sets used by the route table: the service layer's, which the dashboard
// applies too.
var (
	anyRole  = models.AnyRole
	writers  = models.Writers
	managers = models.Managers
	owner    = models.Owners
)

// NewRouter lists the whole API surface with the middleware of each group.
func NewRouter(d Deps) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// Gin trusts every proxy by default, which would let a client pick the IP it
	// is logged and rate-limited under. Config.Validate has checked the list.
	if err := r.SetTrustedProxies(d.TrustedProxies); err != nil {
		d.Log.Error("invalid trusted proxies; trusting none", "error", err)
		_ = r.SetTrustedProxies(nil)
	}
	r.ContextWithFallback = true
	r.Use(requestIDs(), accessLog(d.Log), observe(), recovery(d.Log), bodyLimit(), hsts(d))
	r.NoRoute(func(c *gin.Context) {
		failCode(c, errcode.NotFound, "no route %s %s", c.Request.Method, c.Request.URL.Path)
	})
	r.NoMethod(func(c *gin.Context) {
		failCode(c, errcode.MethodNotAllowed, "method %s is not allowed on %s", c.Request.Method, c.Request.URL.Path)
	})

	h := &handlers{d}

	r.GET("/health", h.health)
	r.GET("/health/detailed", h.healthDetailed)
	r.GET("/metrics", gin.WrapH(metrics.Handler()))
	r.GET("/openapi.json", serveOpenAPI)

	authLimit := rateLimit(d.Limiter, d.AuthRateLimitPerMinute, d.Log, func(c *gin.Context) string { return "auth-ip:" + clientKey(c) })
	tenantLimit := rateLimit(d.Limiter, d.RateLimitPerMinute, d.Log, func(c *gin.Context) string { return "tenant:" + caller(c).TenantID })

	pub := r.Group("/auth", authLimit)
	pub.POST("/signup", h.signup)
	pub.POST("/login", h.login)
	pub.POST("/refresh", h.refresh)
	pub.POST("/logout", h.logout)
	pub.POST("/reset-password", h.resetPassword)
	pub.GET("/:provider/login", h.oauthLogin)
	pub.GET("/:provider/callback", h.oauthCallback)
	pub.GET("/sso/:tenantId/login", h.ssoLogin)
	pub.GET("/sso/:tenantId/callback", h.ssoCallback)
	pub.GET("/sso/:tenantId/metadata", h.ssoMetadata)
	pub.POST("/sso/:tenantId/acs", h.ssoACS)

	// Webhooks authenticate by API key, not token. A client address is
	// charged only for the deliveries whose key is refused, so tenants whose
	// alerts come from one shared sender (a hosted monitoring service) do not
	// spend each other's budget, while a flood of guesses is refused before
	// any lookup once it has spent its own. A verified delivery is limited per
	// tenant, all of its keys together. Change deliveries share that chain;
	// their static last segment takes precedence over a provider name.
	refused := refusedAddresses{limiter: d.Limiter, marks: d.Marks, perMinute: d.WebhookIPRateLimitPerMinute, log: d.Log}
	webhook := func(handle gin.HandlerFunc) []gin.HandlerFunc {
		return []gin.HandlerFunc{
			refused.gate,
			webhookAuth(d.Ingest, refused.charge),
			rateLimit(d.Limiter, d.RateLimitPerMinute, d.Log, func(c *gin.Context) string { return "webhook-tenant:" + webhookKey(c).TenantID }),
			handle,
		}
	}
	r.POST("/v1/webhooks/:tenantId/:provider", webhook(h.receiveWebhook)...)
	r.POST("/v1/webhooks/:tenantId/change", webhook(h.receiveChange)...)
	r.POST("/v1/webhooks/:tenantId/github", webhook(h.receiveGitHub)...)

	// Slack's interactions and slash commands carry its v0 signature instead
	// of a token; they are limited per client address like webhooks.
	slackIP := rateLimit(d.Limiter, d.WebhookIPRateLimitPerMinute, d.Log, func(c *gin.Context) string { return "slack-ip:" + clientKey(c) })
	r.POST("/v1/integrations/slack/:tenantId/interactions", slackIP, h.slackInteraction)
	r.POST("/v1/integrations/slack/:tenantId/commands", slackIP, h.slackCommand)

	v1 := r.Group("/v1", authenticate(d.Accounts), tenantLimit)

	v1.POST("/oauth/:provider/link", requireRole(anyRole...), h.oauthLink)

	v1.GET("/tenant", requireRole(anyRole...), h.getTenant)
	v1.PUT("/sso", requireRole(owner...), h.putSSO)
	v1.GET("/sso", requireRole(managers...), h.getSSO)
	v1.DELETE("/sso", requireRole(owner...), h.deleteSSO)

	v1.GET("/users", requireRole(anyRole...), h.listUsers)
	v1.POST("/users", requireRole(managers...), h.createUser)
	v1.PATCH("/users/:userId", requireRole(managers...), h.setUserRole)
	v1.DELETE("/users/:userId", requireRole(managers...), h.removeUser)
	v1.POST("/users/:userId/password-reset", requireRole(managers...), h.forcePasswordReset)
	v1.POST("/users/me/password", requireRole(anyRole...), h.changePassword)

	v1.GET("/api-keys", requireRole(anyRole...), h.listAPIKeys)
	v1.POST("/api-keys", requireRole(managers...), h.createAPIKey)
	v1.DELETE("/api-keys/:keyId", requireRole(managers...), h.revokeAPIKey)

	v1.POST("/incidents/chat", requireRole(writers...), h.createIncident)
	v1.GET("/incidents", requireRole(anyRole...), h.listIncidents)
	v1.GET("/incidents/:incidentId", requireRole(anyRole...), h.getIncident)
	v1.POST("/incidents/:incidentId/resolve", requireRole(writers...), h.resolveIncident)

	v1.POST("/investigation/:incidentId/start", requireRole(writers...), h.startInvestigation)
	v1.GET("/investigation/:incidentId", requireRole(anyRole...), h.getInvestigation)
	v1.POST("/investigation/:incidentId/context", requireRole(writers...), h.addInvestigationContext)
	v1.POST("/investigation/:incidentId/feedback", requireRole(writers...), h.gradeInvestigation)
	v1.GET("/investigation/:incidentId/scenario", requireRole(writers...), h.exportScenario)

	v1.POST("/runbooks", requireRole(managers...), h.createRunbook)
	v1.GET("/runbooks", requireRole(anyRole...), h.listRunbooks)
	v1.DELETE("/runbooks/:runbookId", requireRole(managers...), h.deleteRunbook)

	v1.GET("/remediation/:incidentId", requireRole(anyRole...), h.listRemediations)
	v1.POST("/remediation/:remediationId/approve", requireRole(managers...), h.approveRemediation)
	v1.POST("/remediation/:remediationId/reject", requireRole(managers...), h.rejectRemediation)
	v1.POST("/remediation/:remediationId/execute", requireRole(managers...), h.executeRemediation)

	v1.GET("/analytics/incidents", requireRole(anyRole...), h.incidentAnalytics)
	v1.GET("/analytics/accuracy", requireRole(anyRole...), h.accuracyAnalytics)

	v1.GET("/settings/grouping", requireRole(anyRole...), h.getGrouping)
	v1.PUT("/settings/grouping", requireRole(managers...), h.putGrouping)

	v1.POST("/webhook-endpoints", requireRole(managers...), h.createWebhookEndpoint)
	v1.GET("/webhook-endpoints", requireRole(managers...), h.listWebhookEndpoints)
	v1.DELETE("/webhook-endpoints/:endpointId", requireRole(managers...), h.deleteWebhookEndpoint)
	v1.GET("/webhook-endpoints/:endpointId/deliveries", requireRole(managers...), h.listDeliveries)

	v1.GET("/changes", requireRole(anyRole...), h.listChanges)

	v1.GET("/integrations/slack", requireRole(managers...), h.getSlack)
	v1.PUT("/integrations/slack", requireRole(managers...), h.putSlack)
	v1.DELETE("/integrations/slack", requireRole(managers...), h.deleteSlack)
	v1.POST("/integrations/slack/test", requireRole(managers...), h.testSlack)

	v1.POST("/datasources", requireRole(managers...), h.createDataSource)
	v1.GET("/datasources", requireRole(anyRole...), h.listDataSources)
	v1.DELETE("/datasources/:dataSourceId", requireRole(managers...), h.deleteDataSource)
	v1.POST("/datasources/:dataSourceId/test", requireRole(managers...), h.testDataSource)

	// The dashboard's pages under /ui/ (and / redirecting there), limited and
	// logged like the API: sign-in shares the /auth limit per client IP, signed-in
	// pages the tenant's limit.
	if d.Dashboard != nil {
		d.Dashboard.Register(r, DashboardHooks{SignInLimit: authLimit, TenantLimit: tenantLimit, SetCaller: setCaller})
	}
	return r
}

// handlers carries the dependencies of every handler.
type handlers struct{ Deps }
