package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

func (h *handlers) incidentAnalytics(c *gin.Context) {
	out, err := h.Analytics.Incidents(c.Request.Context(), caller(c), c.Query("period"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
