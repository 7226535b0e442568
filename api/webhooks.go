package api

import (
	"errors"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/providers"
	"github.com/causeway/causeway/service"
)

const (
	ctxWebhookKey      = "causeway.webhook_key"
	ctxWebhookProvider = "causeway.webhook_provider"
)

// webhookAuth authenticates a webhook delivery by its API key before anything
// else but the refused-address gate (the tenant's limit, the body, even the
// provider name) is spent on it, so a delivery without a valid key is 401
// whatever its path, and refused is told of it. The tenant comes from the
// verified key; the path's tenant must merely match it.
func webhookAuth(ingest *service.Ingest, refused func(*gin.Context)) gin.HandlerFunc {
	return func(c *gin.Context) {
		k, err := ingest.Authenticate(c.Request.Context(), c.Param("tenantId"), presentedKey(c))
		if err != nil {
			if e, ok := errcode.As(err); ok && e.Code == errcode.Unauthorized {
				refused(c)
			}
			fail(c, err)
			return
		}
		route := c.Param("provider")
		if route == "" {
			route = path.Base(c.FullPath()) // the change and GitHub feeds
		}
		if !k.Allows(route) {
			fail(c, errcode.New(errcode.Forbidden, "this API key may post only to %s, not to %s", strings.Join(k.Routes, ", "), route))
			return
		}
		if c.Param("provider") == "" {
			// A change route: the handler verifies the signature its sender uses.
			c.Set(ctxWebhookKey, k)
			c.Next()
			return
		}
		p, err := ingest.Provider(c.Param("provider"))
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(ctxWebhookKey, k)
		c.Set(ctxWebhookProvider, p)
		c.Next()
	}
}

// presentedKey takes the API key from X-API-Key, a Bearer header or ?apiKey=, the
// three forms monitoring tools can send (docs/providers.md): some tools cannot
// set headers at all and only control the URL.
func presentedKey(c *gin.Context) string {
	if k := c.GetHeader("X-API-Key"); k != "" {
		return strings.TrimSpace(k)
	}
	if k, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	return c.Query("apiKey")
}

// webhookKey is the key webhookAuth verified, or an empty key when it did not
// run; it only names the rate-limit bucket, so it never authorizes anything.
func webhookKey(c *gin.Context) *service.WebhookKey {
	if wk, ok := verifiedWebhook(c); ok {
		return wk
	}
	return &service.WebhookKey{}
}

// verifiedWebhook is the key and provider webhookAuth stored. ok is false when
// it did not run, and the handler must then refuse: key-only providers have no
// signature to catch an unauthenticated delivery.
func verifiedWebhook(c *gin.Context) (*service.WebhookKey, bool) {
	k, _ := c.Get(ctxWebhookKey)
	wk, _ := k.(*service.WebhookKey)
	return wk, wk != nil
}

// errWebhookUnauthenticated means the route lost its webhookAuth middleware.
var errWebhookUnauthenticated = errors.New("webhook handler reached without webhookAuth")

func (h *handlers) receiveWebhook(c *gin.Context) {
	k, ok := verifiedWebhook(c)
	v, _ := c.Get(ctxWebhookProvider)
	p, _ := v.(providers.Provider)
	if !ok || p == nil {
		fail(c, errWebhookUnauthenticated)
		return
	}
	body, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	query := c.Request.URL.Query()
	query.Del("apiKey") // providers never need the credential
	res, err := h.Ingest.Receive(c.Request.Context(), k, p,
		providers.Request{Header: c.Request.Header, Query: query, Body: body})
	countAlerts(c.Param("provider"), res, err)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(webhookResponse(res))
}

// alertJSON is one alert's outcome in a multi-alert delivery.
type alertJSON struct {
	IncidentID string `json:"incidentId"`
	Status     string `json:"status"`
	Duplicate  bool   `json:"duplicate"`
	Grouped    bool   `json:"grouped,omitempty"`
}

// webhookResponse shapes an ingestion result: the first alert's incident and
// status, plus every alert's outcome when the delivery carried several.
func webhookResponse(res *service.IngestResult) (int, gin.H) {
	switch {
	case res.Confirmed:
		return http.StatusOK, gin.H{"status": service.IngestConfirmed}
	case res.Ignored:
		return http.StatusAccepted, gin.H{"status": service.IngestIgnored, "reason": res.Reason}
	case len(res.Alerts) == 0:
		return http.StatusAccepted, gin.H{"status": service.IngestIgnored, "reason": "the delivery carried no alerts"}
	}
	first := res.Alerts[0]
	out := gin.H{"incidentId": first.IncidentID, "status": first.Status}
	if first.Grouped {
		out["grouped"] = true
	}
	if first.Status == service.IngestIgnored {
		out = gin.H{"status": first.Status, "reason": first.Reason}
	}
	if len(res.Alerts) > 1 {
		all := make([]alertJSON, len(res.Alerts))
		for i, a := range res.Alerts {
			all[i] = alertJSON{IncidentID: a.IncidentID, Status: a.Status, Duplicate: a.Duplicate, Grouped: a.Grouped}
		}
		out["alerts"] = all
	}
	return http.StatusAccepted, out
}
