package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
)

// TestInvestigationStartIdempotencyKey shows a start repeated with the same
// Idempotency-Key after its pass has finished answering with that pass instead
// of starting and paying for another, while a new key starts a new pass and a
// malformed key changes nothing.
func TestInvestigationStartIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	token, _ := e.signup(t, "Idempotent")
	id := e.openIncident(t, token, "Checkout errors", "FATAL: too many connections for role app")
	type started struct {
		InvestigationID string `json:"investigationId"`
	}
	start := func(key string, want int) started {
		t.Helper()
		var out started
		if st := e.callWith(t, "POST", "/v1/investigation/"+id+"/start", token, http.Header{"Idempotency-Key": {key}}, map[string]any{}, &out); st != want {
			t.Fatalf("start with key %.20q: status %d, want %d", key, st, want)
		}
		return out
	}
	passes := func() int64 {
		var n int64
		if err := e.Store.DB().Model(&models.Investigation{}).Where("incident_id = ?", id).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}

	start(strings.Repeat("k", 256), http.StatusBadRequest)
	start("two words", http.StatusBadRequest)
	if n := passes(); n != 0 {
		t.Fatalf("a refused start recorded %d passes", n)
	}

	first := start("retry-me-1", http.StatusAccepted)
	if got := start("retry-me-1", http.StatusAccepted); got != first {
		t.Fatalf("immediate retry started %+v, want %+v", got, first)
	}
	if res := e.awaitInvestigation(t, token, id, time.Minute); res.Status != "completed" {
		t.Fatalf("first pass %s", res.Status)
	}
	if got := start("retry-me-1", http.StatusAccepted); got != first {
		t.Fatalf("late retry started %+v, want %+v", got, first)
	}
	if n := passes(); n != 1 {
		t.Fatalf("%d passes after retries of one start, want 1", n)
	}

	second := start("retry-me-2", http.StatusAccepted)
	if second == first || passes() != 2 {
		t.Fatalf("a new key did not start a new pass: %+v after %+v", second, first)
	}
	e.awaitInvestigation(t, token, id, time.Minute)
}
