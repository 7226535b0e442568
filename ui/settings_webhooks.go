package ui

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/models"
)

// recentDeliveries is how many delivery attempts the section shows per
// endpoint: enough to see whether deliveries work, short enough to scan.
const recentDeliveries = 10

// webhooksView is the outbound webhook endpoints section, each endpoint with
// its latest delivery attempts.
type webhooksView struct {
	Endpoints []endpointView
	Created   *delivery.CreatedEndpoint
	URL       string
	Events    []string
	Kinds     []string
}

type endpointView struct {
	delivery.WebhookEndpoint
	Deliveries []delivery.DeliveryAttempt
}

func webhookRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.webhooks)
	g.POST("", d.createWebhook)
	g.POST("/:id/delete", d.deleteWebhook)
}

func (d *Dashboard) webhooks(c *gin.Context) {
	d.showWebhooks(c, http.StatusOK, webhooksView{Events: models.EventKinds}, nil)
}

func (d *Dashboard) showWebhooks(c *gin.Context, status int, v webhooksView, prob *problem) {
	ctx, p := c.Request.Context(), principal(c)
	eps, err := d.o.WebhookEndpoints.List(ctx, p)
	if err != nil {
		d.fail(c, err)
		return
	}
	for _, e := range eps {
		atts, err := d.o.WebhookEndpoints.Deliveries(ctx, p, e.ID, recentDeliveries)
		if err != nil {
			d.fail(c, err)
			return
		}
		v.Endpoints = append(v.Endpoints, endpointView{WebhookEndpoint: e, Deliveries: atts})
	}
	v.Kinds = models.EventKinds
	d.settingsPage(c, status, "webhooks", "Webhook endpoints", v, prob)
}

func (d *Dashboard) createWebhook(c *gin.Context) {
	in := delivery.CreateEndpointInput{URL: c.PostForm("url"), Events: c.PostFormArray("events")}
	e, err := d.o.WebhookEndpoints.Create(c.Request.Context(), principal(c), in)
	if err != nil {
		prob := problemOf(c, err)
		d.showWebhooks(c, prob.Status, webhooksView{URL: in.URL, Events: in.Events}, prob)
		return
	}
	// Rendered, not redirected: the signing secret is shown on this response only.
	d.showWebhooks(c, http.StatusCreated, webhooksView{Created: e, Events: models.EventKinds}, nil)
}

func (d *Dashboard) deleteWebhook(c *gin.Context) {
	if err := d.o.WebhookEndpoints.Delete(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		d.fail(c, err)
		return
	}
	redirectNotice(c, Prefix+"/settings/webhooks", "deleted")
}
