package ui

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/service"
)

// changesView is the recent changes section: what deploy systems and CI
// recorded through the change webhooks, newest first, one page at a time.
type changesView struct {
	Page    service.ChangePage
	Service string
	// WebhookURL is where a pipeline posts its changes.
	WebhookURL string
}

func changeRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.changes)
}

// changes binds the same query parameters as GET /v1/changes, so a bad
// cursor or filter is answered in the API's words on the page.
func (d *Dashboard) changes(c *gin.Context) {
	in := service.ChangeListInput{Service: c.Query("service"), Cursor: c.Query("cursor")}
	v := changesView{Service: in.Service, WebhookURL: d.baseURL(c) + "/v1/webhooks/" + principal(c).TenantID + "/change"}
	page, err := d.o.Changes.List(c.Request.Context(), principal(c), in)
	if err != nil {
		prob := problemOf(c, err)
		d.settingsPage(c, prob.Status, "changes", "Recent changes", v, prob)
		return
	}
	v.Page = page
	d.settingsPage(c, http.StatusOK, "changes", "Recent changes", v, nil)
}
