package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/identity"
)

// apiKeyJSON is a key as lists show it: never the key or its webhook secret.
type apiKeyJSON struct {
	KeyID     string    `json:"keyId"`
	Name      string    `json:"name"`
	Prefix    string    `json:"prefix"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	// Routes are the webhook routes the key may post to; absent is all.
	Routes []string `json:"routes,omitempty"`
}

// createdAPIKeyJSON is the 201 body of POST /v1/api-keys, the only place the
// plaintexts appear.
type createdAPIKeyJSON struct {
	apiKeyJSON
	Key           string `json:"key"`
	WebhookSecret string `json:"webhookSecret"`
}

func toAPIKey(k *identity.APIKey) apiKeyJSON {
	return apiKeyJSON{KeyID: k.ID, Name: k.Name, Prefix: k.Prefix, Status: k.Status, CreatedAt: k.CreatedAt.UTC(), Routes: k.Routes}
}

func (h *handlers) createAPIKey(c *gin.Context) {
	var in identity.CreateAPIKeyInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	k, err := h.APIKeys.Create(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, createdAPIKeyJSON{apiKeyJSON: toAPIKey(&k.Key), Key: k.Plaintext, WebhookSecret: k.WebhookSecret})
}

func (h *handlers) listAPIKeys(c *gin.Context) {
	keys, err := h.APIKeys.List(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]apiKeyJSON, len(keys))
	for i := range keys {
		out[i] = toAPIKey(&keys[i])
	}
	c.JSON(http.StatusOK, gin.H{"keys": out})
}

func (h *handlers) revokeAPIKey(c *gin.Context) {
	k, err := h.APIKeys.Revoke(c.Request.Context(), caller(c), c.Param("keyId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"keyId": k.ID, "status": k.Status})
}
