package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/service"
)

// changeJSON is one recorded change as the API shows it.
type changeJSON struct {
	ChangeID    string     `json:"changeId"`
	Service     string     `json:"service"`
	Environment string     `json:"environment"`
	Kind        string     `json:"kind"`
	Version     string     `json:"version"`
	Description string     `json:"description"`
	StartedAt   time.Time  `json:"startedAt"`
	FinishedAt  *time.Time `json:"finishedAt"`
	Author      string     `json:"author"`
	URL         string     `json:"url"`
	RevertOf    string     `json:"revertOf"`
}

func toChange(c *models.Change) changeJSON {
	return changeJSON{ChangeID: c.ID, Service: c.Service, Environment: c.Environment, Kind: c.Kind, Version: c.Version,
		Description: c.Description, StartedAt: c.StartedAt, FinishedAt: c.FinishedAt, Author: c.Author, URL: c.URL, RevertOf: c.RevertOf}
}

// receiveChange records a custom change delivery.
func (h *handlers) receiveChange(c *gin.Context) {
	h.changeDelivery(c, h.Changes.RecordCustom)
}

// receiveGitHub records a GitHub deployment_status delivery.
func (h *handlers) receiveGitHub(c *gin.Context) {
	h.changeDelivery(c, h.Changes.RecordGitHub)
}

// changeDelivery answers 202 for a new change, 200 with the same changeId for
// one its sender already recorded, and 202 ignored for a delivery that carries
// no change.
func (h *handlers) changeDelivery(c *gin.Context, record func(context.Context, *service.WebhookKey, http.Header, []byte) (*service.ChangeReceipt, error)) {
	k, ok := verifiedWebhook(c)
	if !ok {
		fail(c, errWebhookUnauthenticated)
		return
	}
	body, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	r, err := record(c.Request.Context(), k, c.Request.Header, body)
	switch {
	case err != nil:
		fail(c, err)
	case r.Ignored:
		c.JSON(http.StatusAccepted, gin.H{"status": service.IngestIgnored, "reason": r.Reason})
	case r.Created:
		c.JSON(http.StatusAccepted, gin.H{"changeId": r.ChangeID})
	default:
		c.JSON(http.StatusOK, gin.H{"changeId": r.ChangeID})
	}
}

func (h *handlers) listChanges(c *gin.Context) {
	page, err := h.Changes.List(c.Request.Context(), caller(c), service.ChangeListInput{
		Service: c.Query("service"), Since: c.Query("since"), Limit: c.Query("limit"), Cursor: c.Query("cursor"),
	})
	if err != nil {
		fail(c, err)
		return
	}
	items := make([]changeJSON, len(page.Items))
	for i := range page.Items {
		items[i] = toChange(&page.Items[i])
	}
	var next *string
	if page.Cursor != "" {
		next = &page.Cursor
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "cursor": next, "count": page.Count})
}
