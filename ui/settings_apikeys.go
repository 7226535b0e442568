package ui

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
)

// apiKeysView is the API keys section. Created holds a new key's plaintexts on
// the one response that shows them; they are never stored or shown again.
type apiKeysView struct {
	Keys       []identity.APIKey
	Created    *identity.CreatedAPIKey
	Name       string
	WebhookURL string
}

func apiKeyRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.apiKeys)
	g.POST("", d.allow(models.Managers...), d.createAPIKey)
	g.POST("/:id/revoke", d.allow(models.Managers...), d.revokeAPIKey)
}

func (d *Dashboard) apiKeys(c *gin.Context) {
	d.showAPIKeys(c, http.StatusOK, apiKeysView{}, nil)
}

func (d *Dashboard) showAPIKeys(c *gin.Context, status int, v apiKeysView, prob *problem) {
	keys, err := d.o.APIKeys.List(c.Request.Context(), principal(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	v.Keys = keys
	v.WebhookURL = d.baseURL(c) + "/v1/webhooks/" + principal(c).TenantID + "/custom"
	d.settingsPage(c, status, "api-keys", "API keys", v, prob)
}

// baseURL is where monitoring tools should send webhooks: the configured
// public address, else the one this browser reached.
func (d *Dashboard) baseURL(c *gin.Context) string {
	if d.o.PublicURL != "" {
		return strings.TrimRight(d.o.PublicURL, "/")
	}
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host
}

func (d *Dashboard) createAPIKey(c *gin.Context) {
	name := c.PostForm("name")
	k, err := d.o.APIKeys.Create(c.Request.Context(), principal(c), identity.CreateAPIKeyInput{Name: name, WebhookSecret: c.PostForm("webhookSecret")})
	if err != nil {
		prob := problemOf(c, err)
		d.showAPIKeys(c, prob.Status, apiKeysView{Name: name}, prob)
		return
	}
	// Rendered, not redirected: this response is the only place the key and
	// its secret appear, and no-store keeps it out of the browser's cache.
	d.showAPIKeys(c, http.StatusCreated, apiKeysView{Created: k}, nil)
}

func (d *Dashboard) revokeAPIKey(c *gin.Context) {
	if _, err := d.o.APIKeys.Revoke(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		d.fail(c, err)
		return
	}
	redirectNotice(c, Prefix+"/settings/api-keys", "revoked")
}
