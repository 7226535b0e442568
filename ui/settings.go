package ui

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
)

// settingsSection is one page of Settings. Each section is one entry here plus
// its own file of handlers and its own template; adding one (data sources,
// recent changes) touches nothing else.
type settingsSection struct {
	Slug  string
	Title string
	// Roles may open the section: the roles the API lets list the resource.
	Roles []string
	// routes registers the section's handlers under /ui/settings/<Slug>.
	routes func(d *Dashboard, g *gin.RouterGroup)
}

// settingsSections are the sections in the order the settings menu shows them.
func settingsSections() []settingsSection {
	return []settingsSection{
		{Slug: "api-keys", Title: "API keys", Roles: models.AnyRole, routes: apiKeyRoutes},
		{Slug: "data-sources", Title: "Data sources", Roles: models.AnyRole, routes: dataSourceRoutes},
		{Slug: "changes", Title: "Recent changes", Roles: models.AnyRole, routes: changeRoutes},
		{Slug: "runbooks", Title: "Runbooks", Roles: models.AnyRole, routes: runbookRoutes},
		{Slug: "webhooks", Title: "Webhook endpoints", Roles: models.Managers, routes: webhookRoutes},
		{Slug: "slack", Title: "Slack", Roles: models.Managers, routes: slackRoutes},
		{Slug: "users", Title: "Users and roles", Roles: models.AnyRole, routes: userRoutes},
	}
}

// settingsView wraps a section's data with the menu of the sections the user
// may open.
type settingsView struct {
	Sections []settingsSection
	Current  string
	Section  any
}

// settingsPage renders a section with the settings menu around it.
func (d *Dashboard) settingsPage(c *gin.Context, status int, slug, title string, data any, prob *problem) {
	v := d.page(c, title, "settings", settingsView{Sections: visibleSections(c), Current: slug, Section: data})
	v.Problem = prob
	d.render(c, status, "settings-"+slug, v)
}

// settingsHome opens the first section the user may see.
func (d *Dashboard) settingsHome(c *gin.Context) {
	c.Redirect(http.StatusSeeOther, Prefix+"/settings/"+visibleSections(c)[0].Slug)
}

func visibleSections(c *gin.Context) []settingsSection {
	var out []settingsSection
	for _, s := range settingsSections() {
		if identity.RequireRole(principal(c), s.Roles...) == nil {
			out = append(out, s)
		}
	}
	return out
}
