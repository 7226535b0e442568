package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/errcode"
)

// endpointJSON is a webhook endpoint as lists show it: never its secret.
type endpointJSON struct {
	EndpointID string   `json:"endpointId"`
	URL        string   `json:"url"`
	Events     []string `json:"events"`
	Status     string   `json:"status"`
	// DisabledReason tells the tenant why deliveries stopped, so a disabled
	// endpoint can be fixed rather than guessed at.
	DisabledReason string    `json:"disabledReason"`
	CreatedAt      time.Time `json:"createdAt"`
}

// createdEndpointJSON is the 201 body of POST /v1/webhook-endpoints, the only
// place the signing secret appears.
type createdEndpointJSON struct {
	endpointJSON
	Secret string `json:"secret"`
}

// attemptJSON is one line of an endpoint's deliveries log.
type attemptJSON struct {
	EventID    string    `json:"eventId"`
	Type       string    `json:"type"`
	Attempt    int       `json:"attempt"`
	StatusCode int       `json:"statusCode"`
	LatencyMs  int64     `json:"latencyMs"`
	Error      string    `json:"error"`
	At         time.Time `json:"at"`
}

func toEndpoint(e *delivery.WebhookEndpoint) endpointJSON {
	ev := e.Events
	if ev == nil {
		ev = []string{}
	}
	return endpointJSON{EndpointID: e.ID, URL: e.URL, Events: ev, Status: e.Status,
		DisabledReason: e.DisabledReason, CreatedAt: e.CreatedAt.UTC()}
}

func (h *handlers) createWebhookEndpoint(c *gin.Context) {
	var in delivery.CreateEndpointInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	e, err := h.WebhookEndpoints.Create(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, createdEndpointJSON{endpointJSON: toEndpoint(&e.Endpoint), Secret: e.Secret})
}

func (h *handlers) listWebhookEndpoints(c *gin.Context) {
	eps, err := h.WebhookEndpoints.List(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]endpointJSON, len(eps))
	for i := range eps {
		out[i] = toEndpoint(&eps[i])
	}
	c.JSON(http.StatusOK, gin.H{"endpoints": out})
}

func (h *handlers) deleteWebhookEndpoint(c *gin.Context) {
	if err := h.WebhookEndpoints.Delete(c.Request.Context(), caller(c), c.Param("endpointId")); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"endpointId": c.Param("endpointId"), "status": "deleted"})
}

func (h *handlers) listDeliveries(c *gin.Context) {
	limit, err := strconv.Atoi(c.DefaultQuery("limit", "0"))
	if err != nil {
		failCode(c, errcode.Validation, "limit must be an integer")
		return
	}
	atts, err := h.WebhookEndpoints.Deliveries(c.Request.Context(), caller(c), c.Param("endpointId"), limit)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]attemptJSON, len(atts))
	for i, a := range atts {
		out[i] = attemptJSON{EventID: a.EventID, Type: a.EventType, Attempt: a.Attempt, StatusCode: a.StatusCode,
			LatencyMs: a.LatencyMs, Error: a.Error, At: a.At.UTC()}
	}
	c.JSON(http.StatusOK, gin.H{"deliveries": out})
}
