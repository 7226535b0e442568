package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestInvestigationContextIsBounded shows an incident's supplemental context is
// capped in entries and in total bytes, with a 400 naming the limit, and a
// refused entry is not stored: every pass reads all of an incident's context,
// so without a cap one incident could make every later pass arbitrarily large.
func TestInvestigationContextIsBounded(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@example.com")
	open := func() string {
		var inc struct {
			IncidentID string `json:"incidentId"`
		}
		if st, _ := s.do(t, "POST", "/v1/incidents/chat", owner.AccessToken, map[string]string{"title": "Checkout errors", "description": "checkout-api 5xx since 14:03"}, &inc); st != http.StatusCreated {
			t.Fatalf("create incident: %d", st)
		}
		return inc.IncidentID
	}
	add := func(id, text string) (int, errorBody) {
		var body errorBody
		st, _ := s.do(t, "POST", "/v1/investigation/"+id+"/context", owner.AccessToken, map[string]any{"context": text}, &body)
		return st, body
	}

	few := open()
	for i := 0; i < 50; i++ {
		if st, body := add(few, "log line "+strings.Repeat("x", i)); st != http.StatusOK {
			t.Fatalf("entry %d: %d %+v", i+1, st, body)
		}
	}
	if st, body := add(few, "one more"); st != http.StatusBadRequest || body.Error != "validation_error" || !strings.Contains(body.Message, "50") {
		t.Fatalf("51st entry: %d %+v", st, body)
	}

	big := open()
	page := strings.Repeat("y", 20000)
	n := 0
	for ; n < 20; n++ {
		st, body := add(big, page)
		if st == http.StatusBadRequest {
			if body.Error != "validation_error" || !strings.Contains(body.Message, "262144") {
				t.Fatalf("over the byte cap: %+v", body)
			}
			break
		}
		if st != http.StatusOK {
			t.Fatalf("entry %d: %d %+v", n+1, st, body)
		}
	}
	if n != 13 {
		t.Fatalf("accepted %d pages of 20000 bytes, want 13 within 256 KiB", n)
	}
	var total int64
	s.app.Store.DB().Table("investigation_contexts").Where("incident_id = ?", big).Select("COALESCE(SUM(LENGTH(content)), 0)").Scan(&total)
	if total > 256<<10 {
		t.Fatalf("stored %d bytes of context", total)
	}
}
