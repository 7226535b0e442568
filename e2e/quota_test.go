package e2e

import (
	"net/http"
	"sync"
	"testing"

	"github.com/causeway/causeway/models"
)

// TestEventQuotaBoundary spends a quota of 3 one incident at a time.
func TestEventQuotaBoundary(t *testing.T) {
	cfg := testConfig(t)
	cfg.QuotaEventsPerMonth = 3
	e := newEnvWith(t, cfg)
	token, _ := e.signup(t, "Boundary")
	for want := 2; want >= 0; want-- {
		var out struct {
			EventsRemaining int `json:"eventsRemaining"`
		}
		if st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{"title": "t", "description": "quota boundary test"}, &out); st != 201 || out.EventsRemaining != want {
			t.Fatalf("incident %d: %d, eventsRemaining %d", 3-want, st, out.EventsRemaining)
		}
	}
	var e4 struct{ Error string }
	if st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{"title": "t", "description": "quota boundary test"}, &e4); st != 429 || e4.Error != "event_quota_exceeded" {
		t.Fatalf("over quota: %d %+v", st, e4)
	}
}

// TestEventQuotaUnderConcurrency sends 20 creations at once against a quota of
// 10: exactly 10 incidents exist afterwards, never more.
func TestEventQuotaUnderConcurrency(t *testing.T) {
	cfg := testConfig(t)
	cfg.QuotaEventsPerMonth = 10
	e := newEnvWith(t, cfg)
	token, tenantID := e.signup(t, "Concurrent")
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		codes    = map[string]int{}
	)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out struct{ Error string }
			st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{"title": "t", "description": "concurrent quota test"}, &out)
			mu.Lock()
			defer mu.Unlock()
			statuses[st]++
			codes[out.Error]++
		}()
	}
	wg.Wait()
	if statuses[http.StatusCreated] != 10 || statuses[http.StatusTooManyRequests] != 10 || codes["event_quota_exceeded"] != 10 {
		t.Fatalf("statuses %v codes %v; want 10 created and 10 event_quota_exceeded", statuses, codes)
	}
	var n int64
	e.Store.DB().Model(&models.Incident{}).Where("tenant_id = ?", tenantID).Count(&n)
	var used models.UsageCounter
	e.Store.DB().Where("tenant_id = ?", tenantID).Take(&used)
	if n != 10 || used.Events != 10 {
		t.Errorf("%d incidents, counter %d; want 10 and 10", n, used.Events)
	}
}
