package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

type groupingJSON struct {
	Enabled       bool `json:"enabled"`
	WindowSeconds int  `json:"windowSeconds"`
}

// alertAnswer is the body of a webhook answer, 202 or 409.
type alertAnswer struct {
	IncidentID string `json:"incidentId"`
	Status     string `json:"status"`
	Grouped    bool   `json:"grouped"`
	Error      string `json:"error"`
}

// serviceAlert posts one signed custom alert for service.
func (s *apiServer) serviceAlert(t *testing.T, tenantID, key, secret, service, alertID string) (int, alertAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"title": service + " error rate above 5%", "description": "5xx ratio 7% on " + service,
		"sourceAlertId": alertID, "severity": "high", "service": service})
	req, _ := http.NewRequest("POST", s.URL+"/v1/webhooks/"+tenantID+"/custom", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(secret), body, ""))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, alertAnswer{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out alertAnswer
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// TestGroupingSettings: off with a 300 s window until a tenant chooses; only
// owners and admins change it; a bad body is a 400 naming the field and stores
// nothing; each tenant has its own.
func TestGroupingSettings(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@example.com")
	other := s.signup(t, "other@example.com")
	var viewer tokens
	if st, _ := s.do(t, "POST", "/v1/users", owner.AccessToken, map[string]string{"email": "viewer@example.com",
		"password": "correct horse battery", "name": "V", "role": "viewer"}, nil); st != http.StatusCreated {
		t.Fatalf("create viewer: %d", st)
	}
	if st, _ := s.do(t, "POST", "/auth/login", "", map[string]string{"email": "viewer@example.com", "password": "correct horse battery"}, &viewer); st != http.StatusOK {
		t.Fatalf("viewer login: %d", st)
	}

	get := func(tk string) groupingJSON {
		t.Helper()
		var g groupingJSON
		if st, _ := s.do(t, "GET", "/v1/settings/grouping", tk, nil, &g); st != http.StatusOK {
			t.Fatalf("GET grouping: %d", st)
		}
		return g
	}
	if g := get(viewer.AccessToken); g != (groupingJSON{Enabled: false, WindowSeconds: 300}) {
		t.Fatalf("default: %+v", g)
	}
	var e errorBody
	if st, _ := s.do(t, "PUT", "/v1/settings/grouping", viewer.AccessToken, map[string]any{"enabled": true, "windowSeconds": 60}, &e); st != http.StatusForbidden {
		t.Fatalf("viewer PUT: %d %+v", st, e)
	}
	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"enabled": true, "windowSeconds": 29}, "windowSeconds"},
		{map[string]any{"enabled": true, "windowSeconds": 3601}, "windowSeconds"},
		{map[string]any{"enabled": true}, "windowSeconds"},
		{map[string]any{"windowSeconds": 60}, "enabled"},
		{map[string]any{"enabled": "yes", "windowSeconds": 60}, "enabled"},
	} {
		e = errorBody{}
		st, _ := s.do(t, "PUT", "/v1/settings/grouping", owner.AccessToken, bad.body, &e)
		if st != http.StatusBadRequest || e.Error != "validation_error" || !bytes.Contains([]byte(e.Message), []byte(bad.field)) {
			t.Fatalf("PUT %v: %d %+v, want 400 naming %s", bad.body, st, e, bad.field)
		}
	}
	if g := get(owner.AccessToken); g.Enabled {
		t.Fatalf("a refused PUT changed the setting: %+v", g)
	}
	var put groupingJSON
	if st, _ := s.do(t, "PUT", "/v1/settings/grouping", owner.AccessToken, map[string]any{"enabled": true, "windowSeconds": 30}, &put); st != http.StatusOK || put != (groupingJSON{true, 30}) {
		t.Fatalf("PUT: %d %+v", st, put)
	}
	if g := get(viewer.AccessToken); g != (groupingJSON{true, 30}) {
		t.Fatalf("after PUT: %+v", g)
	}
	if g := get(other.AccessToken); g.Enabled {
		t.Fatalf("another tenant's setting changed: %+v", g)
	}
}

// TestGroupingJoinsRunningIncident runs on the configured database (PostgreSQL
// in CI): with grouping off every alert opens its incident; with it on, 40
// distinct alerts for one service sent at once, each also delivered a second
// time concurrently, make exactly one incident that counts all 40, with one
// alert_grouped entry per joined alert, every 202 naming it and every redelivery
// a 409 naming it, and 40 events spent. Another service opens its own incident;
// a resolved incident or one opened before the window is not joined.
func TestGroupingJoinsRunningIncident(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@example.com")
	key, secret := s.apiKey(t, owner.AccessToken, "grouping")
	store, ctx := s.app.Store, context.Background()
	incidentsOf := func(service string) []models.Incident {
		t.Helper()
		var out []models.Incident
		if err := store.DB().Where("tenant_id = ? AND service = ?", owner.TenantID, service).Order("created_at").Find(&out).Error; err != nil {
			t.Fatal(err)
		}
		return out
	}

	// Off (the default): one incident per alert, as the interface says.
	for i := range 2 {
		if st, out := s.serviceAlert(t, owner.TenantID, key, secret, "checkout", fmt.Sprint("off-", i)); st != http.StatusAccepted || out.Grouped {
			t.Fatalf("alert with grouping off: %d %+v", st, out)
		}
	}
	if n := len(incidentsOf("checkout")); n != 2 {
		t.Fatalf("grouping off: %d incidents, want 2", n)
	}

	if st, _ := s.do(t, "PUT", "/v1/settings/grouping", owner.AccessToken, map[string]any{"enabled": true, "windowSeconds": 600}, nil); st != http.StatusOK {
		t.Fatalf("PUT: %d", st)
	}
	const n = 40
	type answer struct {
		st  int
		out alertAnswer
	}
	answers := make([]answer, 2*n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st, out := s.serviceAlert(t, owner.TenantID, key, secret, "payments", fmt.Sprint("pay-", i%n))
			answers[i] = answer{st, out}
		}()
	}
	close(start)
	wg.Wait()

	incs := incidentsOf("payments")
	if len(incs) != 1 {
		t.Fatalf("%d incidents for payments, want 1", len(incs))
	}
	inc := incs[0]
	accepted, conflicts, grouped := 0, 0, 0
	for _, a := range answers {
		switch a.st {
		case http.StatusAccepted:
			accepted++
			if a.out.Grouped {
				grouped++
			}
		case http.StatusConflict:
			conflicts++
			if a.out.Error != "duplicate_alert" {
				t.Fatalf("409 with %+v", a.out)
			}
		default:
			t.Fatalf("answer %d %+v", a.st, a.out)
		}
		if a.out.IncidentID != inc.ID {
			t.Fatalf("an answer names %s, not the one incident %s", a.out.IncidentID, inc.ID)
		}
	}
	if accepted != n || conflicts != n || grouped != n-1 {
		t.Fatalf("accepted %d, duplicates %d, grouped %d; want %d, %d, %d", accepted, conflicts, grouped, n, n, n-1)
	}
	if inc.AlertCount != n {
		t.Fatalf("alertCount %d, want %d", inc.AlertCount, n)
	}
	var detail struct {
		AlertCount int `json:"alertCount"`
		Timeline   []struct {
			Kind  string `json:"kind"`
			Actor string `json:"actor"`
		} `json:"timeline"`
	}
	if st, _ := s.do(t, "GET", "/v1/incidents/"+inc.ID, owner.AccessToken, nil, &detail); st != http.StatusOK {
		t.Fatalf("GET incident: %d", st)
	}
	kinds := map[string]int{}
	for _, e := range detail.Timeline {
		kinds[e.Kind]++
	}
	if detail.AlertCount != n || kinds["alert_grouped"] != n-1 || kinds["alert_received"] != 1 {
		t.Fatalf("incident shows alertCount %d and timeline %v; want %d, %d alert_grouped, 1 alert_received", detail.AlertCount, kinds, n, n-1)
	}
	// The joined alerts reach the investigation as context, within the
	// incident's context limits.
	var contexts int64
	store.DB().Model(&models.InvestigationContext{}).Where("incident_id = ?", inc.ID).Count(&contexts)
	if contexts != n-1 {
		t.Fatalf("%d context entries, want %d", contexts, n-1)
	}
	rem, err := store.Usage(ctx, owner.TenantID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if used := s.cfg.QuotaEventsPerMonth - rem.Events; used != 2+n {
		t.Fatalf("%d events spent, want %d", used, 2+n)
	}

	// Another service is another incident.
	if st, out := s.serviceAlert(t, owner.TenantID, key, secret, "search", "search-1"); st != http.StatusAccepted || out.Grouped || out.IncidentID == inc.ID {
		t.Fatalf("other service: %d %+v", st, out)
	}
	// Once the incident is resolved, a new alert opens a new one.
	if err := store.DB().Model(&models.Incident{}).Where("id = ?", inc.ID).Update("status", models.StatusResolved).Error; err != nil {
		t.Fatal(err)
	}
	st, after := s.serviceAlert(t, owner.TenantID, key, secret, "payments", "pay-after-resolve")
	if st != http.StatusAccepted || after.Grouped || after.IncidentID == inc.ID {
		t.Fatalf("alert after resolution: %d %+v", st, after)
	}
	// An incident opened before the window is not joined either.
	if err := store.DB().Model(&models.Incident{}).Where("id = ?", after.IncidentID).
		Update("created_at", time.Now().UTC().Add(-11*time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	if st, out := s.serviceAlert(t, owner.TenantID, key, secret, "payments", "pay-after-window"); st != http.StatusAccepted || out.Grouped || out.IncidentID == after.IncidentID {
		t.Fatalf("alert after the window: %d %+v", st, out)
	}
	if got := len(incidentsOf("payments")); got != 3 {
		t.Fatalf("%d incidents for payments, want 3", got)
	}
}
