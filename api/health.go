package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

func (h *handlers) health(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// healthDetailed always answers 200; callers read status in the body.
func (h *handlers) healthDetailed(c *gin.Context) {
	c.JSON(http.StatusOK, h.Health.Check(c.Request.Context()))
}
