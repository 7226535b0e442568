package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/service"
)

func (h *handlers) gradeInvestigation(c *gin.Context) {
	var in service.FeedbackInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Outcomes.Grade(c.Request.Context(), caller(c), c.Param("incidentId"), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) accuracyAnalytics(c *gin.Context) {
	out, err := h.Analytics.Accuracy(c.Request.Context(), caller(c), c.Query("period"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) exportScenario(c *gin.Context) {
	out, err := h.Outcomes.Export(c.Request.Context(), caller(c), c.Param("incidentId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
