package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/service"
)

// dataSourceJSON is a data source as the API shows it: never its credential,
// only whether one is set; a postgres URL's password is masked.
type dataSourceJSON struct {
	DataSourceID string         `json:"dataSourceId"`
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	URL          string         `json:"url"`
	Settings     map[string]any `json:"settings"`
	Auth         string         `json:"auth,omitempty"`
	Status       string         `json:"status"`
	CreatedAt    time.Time      `json:"createdAt"`
}

func toDataSource(d *models.DataSource) dataSourceJSON {
	out := dataSourceJSON{DataSourceID: d.ID, Name: d.Name, Type: d.Type, URL: d.URL, Settings: d.Settings,
		Status: d.Status, CreatedAt: d.CreatedAt.UTC()}
	if out.Settings == nil {
		out.Settings = map[string]any{}
	}
	if d.AuthEnc != "" {
		out.Auth = "set"
	}
	return out
}

func (h *handlers) createDataSource(c *gin.Context) {
	var in service.CreateDataSourceInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	d, err := h.DataSources.Create(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, toDataSource(d))
}

func (h *handlers) listDataSources(c *gin.Context) {
	ds, err := h.DataSources.List(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]dataSourceJSON, len(ds))
	for i := range ds {
		out[i] = toDataSource(&ds[i])
	}
	c.JSON(http.StatusOK, gin.H{"dataSources": out})
}

func (h *handlers) deleteDataSource(c *gin.Context) {
	if err := h.DataSources.Delete(c.Request.Context(), caller(c), c.Param("dataSourceId")); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"dataSourceId": c.Param("dataSourceId"), "status": "deleted"})
}

func (h *handlers) testDataSource(c *gin.Context) {
	res, err := h.DataSources.Test(c.Request.Context(), caller(c), c.Param("dataSourceId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
