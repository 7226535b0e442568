package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/service"
)

func (h *handlers) getGrouping(c *gin.Context) {
	out, err := h.Ingest.Grouping(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) putGrouping(c *gin.Context) {
	var in service.GroupingInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Ingest.SetGrouping(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
