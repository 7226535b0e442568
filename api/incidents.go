package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/investigation"
)

func (h *handlers) createIncident(c *gin.Context) {
	var in investigation.CreateIncidentInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	inc, rem, err := h.Incidents.Create(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, createdIncidentJSON{
		incidentJSON: toIncident(inc), InvestigationsRemaining: rem.Investigations, EventsRemaining: rem.Events,
	})
}

func (h *handlers) listIncidents(c *gin.Context) {
	page, err := h.Incidents.List(c.Request.Context(), caller(c), investigation.ListInput{
		Limit: c.Query("limit"), Cursor: c.Query("cursor"), Status: c.Query("status"), Severity: c.Query("severity"),
	})
	if err != nil {
		fail(c, err)
		return
	}
	items := make([]incidentJSON, len(page.Items))
	for i := range page.Items {
		items[i] = toIncident(&page.Items[i])
	}
	var next *string
	if page.Cursor != "" {
		next = &page.Cursor
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "cursor": next, "count": page.Count})
}

func (h *handlers) getIncident(c *gin.Context) {
	inc, tl, err := h.Incidents.Get(c.Request.Context(), caller(c), c.Param("incidentId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, toIncidentDetail(inc, tl))
}

func (h *handlers) resolveIncident(c *gin.Context) {
	var in struct {
		Note string `json:"note"`
	}
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	inc, tl, err := h.Incidents.Resolve(c.Request.Context(), caller(c), c.Param("incidentId"), in.Note)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, toIncidentDetail(inc, tl))
}
