// Package ui is Causeway's web dashboard: server-rendered pages under /ui/ with
// a little JavaScript for live updates, copy buttons and confirmations. Its
// templates and static assets are embedded in the binary, so the dashboard works
// offline and needs no second server.
//
// The dashboard is a client of the service layer exactly like the JSON API: every
// handler binds its input, calls one service method with the signed-in
// principal, and describes failures through the API's one error table. Who may
// do what comes from the service's role sets and is checked on every request,
// not only by hiding buttons. docs/dashboard.md describes the pages and the
// session model.
package ui

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/api"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/service"
	"github.com/causeway/causeway/slack"
)

// Prefix is where the dashboard lives; / redirects there.
const Prefix = "/ui"

// Options is everything the dashboard needs; the process that serves the API
// builds it from the same services it hands the API.
type Options struct {
	Log *slog.Logger
	// Sealer encrypts the session cookie.
	Sealer           *auth.Sealer
	Accounts         *identity.Accounts
	Incidents        *investigation.Incidents
	Investigations   *investigation.Investigations
	Remediations     *remediation.Service
	APIKeys          *identity.APIKeys
	WebhookEndpoints *delivery.Service
	DataSources      *service.DataSources
	Changes          *service.Changes
	Analytics        *service.Analytics
	// Outcomes records and lists the grades of investigations.
	Outcomes *service.Outcomes
	// Slack connects the tenant's Slack workspace.
	Slack *slack.Service
	// PublicURL is the configured address where browsers and monitoring tools
	// reach this process: an https one makes cookies Secure behind a proxy
	// that ends TLS, and webhook set-up hints show it. Empty: hints show the
	// address the browser used.
	PublicURL string
	// TemporalUIURL is the base address of the Temporal Web UI and
	// TemporalNamespace the namespace the workflows run in.
	TemporalUIURL     string
	TemporalNamespace string
	// SignupEnabled shows the sign-up page.
	SignupEnabled bool
}

// Dashboard serves the web UI. Build it with New and hand it to the API router
// (api.Deps.Dashboard), which registers it.
type Dashboard struct {
	o         Options
	pages     *pages
	assets    *assets
	refresher *refresher
	hooks     api.DashboardHooks
}

// New parses the embedded templates and indexes the static assets; an error
// here is a broken build, caught by the package's tests.
func New(o Options) (*Dashboard, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	o.TemporalUIURL = strings.TrimRight(o.TemporalUIURL, "/")
	a, err := loadAssets()
	if err != nil {
		return nil, err
	}
	p, err := loadPages(a)
	if err != nil {
		return nil, err
	}
	return &Dashboard{o: o, pages: p, assets: a, refresher: newRefresher(o.Accounts)}, nil
}

// Register adds the dashboard's routes to the API's engine. Sign-in forms share
// the API's per-IP sign-in limit; every page behind the session shares the
// tenant's request limit, and actions are checked against the service's role
// sets before the service is called.
func (d *Dashboard) Register(r *gin.Engine, h api.DashboardHooks) {
	d.hooks = h
	r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, Prefix+"/") })

	ui := r.Group(Prefix, securityHeaders())
	ui.GET("/static/:file", d.static)
	ui.GET("/login", d.loginPage)
	ui.POST("/login", h.SignInLimit, d.preSessionCSRF, d.login)
	ui.GET("/signup", d.signupPage)
	ui.POST("/signup", h.SignInLimit, d.preSessionCSRF, d.signup)

	in := ui.Group("", d.session, d.csrf, h.TenantLimit)
	in.GET("/", func(c *gin.Context) { c.Redirect(http.StatusSeeOther, Prefix+"/incidents") })
	in.POST("/logout", d.logout)

	in.GET("/incidents", d.incidents)
	in.POST("/incidents", d.allow(models.Writers...), d.createIncident)
	in.GET("/incidents/:id", d.incident)
	in.GET("/incidents/:id/live", d.incidentLive)
	in.POST("/incidents/:id/context", d.allow(models.Writers...), d.addContext)
	in.POST("/incidents/:id/resolve", d.allow(models.Writers...), d.resolve)
	in.POST("/incidents/:id/feedback", d.allow(models.Writers...), d.grade)

	in.GET("/remediations/:id", d.remediation)
	in.GET("/remediations/:id/live", d.remediationLive)
	for _, a := range decisions {
		in.GET("/remediations/:id/"+a.Name, d.allow(models.Managers...), d.confirmDecision(a))
		in.POST("/remediations/:id/"+a.Name, d.allow(models.Managers...), d.decide(a))
	}

	in.GET("/analytics", d.analytics)
	in.GET("/analytics/accuracy", d.accuracy)

	in.GET("/settings", d.settingsHome)
	for _, s := range settingsSections() {
		s.routes(d, in.Group("/settings/"+s.Slug, d.allow(s.Roles...)))
	}
}

// allow lets the request through only for the given roles (the service's role
// sets), answering anyone else with the API's forbidden error.
func (d *Dashboard) allow(roles ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := identity.RequireRole(principal(c), roles...); err != nil {
			d.fail(c, err)
			return
		}
		c.Next()
	}
}

// securityHeaders keeps every page in its own origin: scripts and styles only
// from /ui/static, no framing, no caching of tenant data, no referrer leaking
// incident ids to other sites.
func securityHeaders() gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Writer.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(c.Request.URL.Path, Prefix+"/static/") {
			h.Set("Cache-Control", "no-store")
		}
		c.Next()
	}
}
