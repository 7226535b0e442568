package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestReceiveWebhookFailsClosedWithoutAuth shows a route that lost webhookAuth
// refuses the delivery instead of ingesting it under an empty key.
func TestReceiveWebhookFailsClosedWithoutAuth(t *testing.T) {
	gin.SetMode(gin.TestMode)
	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest(http.MethodPost, "/v1/webhooks/ten_1/alertmanager", strings.NewReader(`{}`))
	c.Params = gin.Params{{Key: "tenantId", Value: "ten_1"}, {Key: "provider", Value: "alertmanager"}}
	h := &handlers{} // a nil Ingest: reaching it would panic
	h.receiveWebhook(c)
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"internal_error"`) {
		t.Fatalf("got %d %s, want 500 internal_error", w.Code, w.Body.String())
	}
}
