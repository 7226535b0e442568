package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/slack"
)

func (h *handlers) getSlack(c *gin.Context) {
	v, err := h.Slack.Get(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (h *handlers) putSlack(c *gin.Context) {
	var in slack.PutInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	v, err := h.Slack.Put(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (h *handlers) deleteSlack(c *gin.Context) {
	if err := h.Slack.Delete(c.Request.Context(), caller(c)); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "disconnected"})
}

func (h *handlers) testSlack(c *gin.Context) {
	out, err := h.Slack.SendTest(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// slackInteraction and slackCommand take Slack's signed form posts; the
// tenant in the path only selects the signing secret to verify with.
func (h *handlers) slackInteraction(c *gin.Context) { h.slackSigned(c, h.Slack.Interaction) }

func (h *handlers) slackCommand(c *gin.Context) { h.slackSigned(c, h.Slack.Command) }

func (h *handlers) slackSigned(c *gin.Context, handle func(ctx context.Context, tenantID string, req slack.Signed) (*slack.Reply, error)) {
	body, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	req := slack.Signed{Timestamp: c.GetHeader("X-Slack-Request-Timestamp"), Signature: c.GetHeader("X-Slack-Signature"), Body: body}
	reply, err := handle(c.Request.Context(), c.Param("tenantId"), req)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, reply)
}
