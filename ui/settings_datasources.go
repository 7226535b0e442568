package ui

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/service"
)

// dataSourcesView is the data sources section: the systems the agents query.
// Credentials are write-only: the form takes them, no page shows them again.
type dataSourcesView struct {
	Sources []models.DataSource
	Types   []string
	// Form holds what was typed when a create failed, minus the secrets.
	Form dataSourceForm
	// Tested is the answer of the last "Test" press, shown above the list.
	Tested *testedSource
}

// dataSourceForm is the create form's non-secret fields.
type dataSourceForm struct {
	Name, Type, URL, Username, Settings string
}

// testedSource pairs a source's name with the answer of its round trip.
type testedSource struct {
	Name string
	service.TestResult
}

func dataSourceRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.dataSources)
	g.POST("", d.allow(models.Managers...), d.createDataSource)
	g.POST("/:id/test", d.allow(models.Managers...), d.testDataSource)
	g.POST("/:id/delete", d.allow(models.Managers...), d.deleteDataSource)
}

func (d *Dashboard) dataSources(c *gin.Context) {
	d.showDataSources(c, http.StatusOK, dataSourcesView{}, nil)
}

func (d *Dashboard) showDataSources(c *gin.Context, status int, v dataSourcesView, prob *problem) {
	list, err := d.o.DataSources.List(c.Request.Context(), principal(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	v.Sources, v.Types = list, datasources.Types()
	d.settingsPage(c, status, "data-sources", "Data sources", v, prob)
}

// createDataSource turns the form into the API's create input, so the same
// validation answers both, field by field.
func (d *Dashboard) createDataSource(c *gin.Context) {
	f := dataSourceForm{Name: c.PostForm("name"), Type: c.PostForm("type"), URL: c.PostForm("url"),
		Username: c.PostForm("username"), Settings: strings.TrimSpace(c.PostForm("settings"))}
	in := service.CreateDataSourceInput{Name: f.Name, Type: f.Type, URL: f.URL}
	creds := datasources.Auth{BearerToken: c.PostForm("bearerToken"), Username: f.Username, Password: c.PostForm("password")}
	if !creds.IsZero() {
		in.Auth, _ = json.Marshal(creds)
	}
	if f.Settings != "" {
		in.Settings = json.RawMessage(f.Settings)
	}
	if _, err := d.o.DataSources.Create(c.Request.Context(), principal(c), in); err != nil {
		prob := problemOf(c, err)
		d.showDataSources(c, prob.Status, dataSourcesView{Form: f}, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/data-sources", "source-added")
}

// testDataSource makes one real round trip and shows its answer on the
// section; a source that does not answer is a result, not an error page.
func (d *Dashboard) testDataSource(c *gin.Context) {
	ctx, p := c.Request.Context(), principal(c)
	res, err := d.o.DataSources.Test(ctx, p, c.Param("id"))
	if err != nil {
		d.fail(c, err)
		return
	}
	name := c.Param("id")
	if list, err := d.o.DataSources.List(ctx, p); err == nil {
		for _, s := range list {
			if s.ID == name {
				name = s.Name
			}
		}
	}
	d.showDataSources(c, http.StatusOK, dataSourcesView{Tested: &testedSource{Name: name, TestResult: res}}, nil)
}

func (d *Dashboard) deleteDataSource(c *gin.Context) {
	if err := d.o.DataSources.Delete(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		d.fail(c, err)
		return
	}
	redirectNotice(c, Prefix+"/settings/data-sources", "deleted")
}
