package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/investigation"
)

func (h *handlers) startInvestigation(c *gin.Context) {
	var in investigation.StartInvestigationInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	in.IdempotencyKey = c.GetHeader("Idempotency-Key")
	started, err := h.Investigations.Start(c.Request.Context(), caller(c), c.Param("incidentId"), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{
		"incidentId": started.IncidentID, "investigationId": started.InvestigationID, "status": "investigating",
	})
}

func (h *handlers) getInvestigation(c *gin.Context) {
	inv, err := h.Investigations.Latest(c.Request.Context(), caller(c), c.Param("incidentId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, inv.Result())
}

func (h *handlers) addInvestigationContext(c *gin.Context) {
	var in investigation.AddContextInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	in.IdempotencyKey = c.GetHeader("Idempotency-Key")
	out, err := h.Investigations.AddContext(c.Request.Context(), caller(c), c.Param("incidentId"), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"incidentId": c.Param("incidentId"), "message": out.Message, "reinvestigating": out.Reinvestigating})
}
