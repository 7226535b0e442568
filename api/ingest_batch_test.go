package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
)

// TestWebhookGroupCommitKeepsQuotaAndDedup sends a concurrent mix of unique and
// repeated alerts, more than the quota allows, so that group transactions carry
// duplicates and run out of quota mid-group: exactly the quota is accepted, every
// alert has at most one incident, every duplicate names it, and the counter ends
// at the limit.
func TestWebhookGroupCommitKeepsQuotaAndDedup(t *testing.T) {
	const quota, unique, copies = 25, 40, 3
	e := newHookEnv(t, quota)
	tn := e.tenant(t)
	type result struct {
		alert  int
		status int
		a      ack
	}
	results := make([]result, unique*copies)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := &results[i]
			r.alert = i % unique
			r.status, _ = send(t, e.signed(t, tn, alertBody(fmt.Sprint("gc-", r.alert), "group commit")), &r.a)
		}()
	}
	close(start)
	wg.Wait()
	accepted := map[int]string{}
	for _, r := range results {
		switch r.status {
		case http.StatusAccepted:
			if prev, ok := accepted[r.alert]; ok {
				t.Fatalf("alert %d accepted twice: %s and %s", r.alert, prev, r.a.IncidentID)
			}
			accepted[r.alert] = r.a.IncidentID
		case http.StatusConflict, http.StatusTooManyRequests:
		default:
			t.Fatalf("alert %d: unexpected %d %+v", r.alert, r.status, r.a)
		}
	}
	if len(accepted) != quota {
		t.Fatalf("%d alerts accepted, want exactly the quota %d", len(accepted), quota)
	}
	for _, r := range results {
		id, ok := accepted[r.alert]
		switch {
		case r.status == http.StatusConflict && (!ok || r.a.IncidentID != id):
			t.Fatalf("duplicate of alert %d names %q, want %q", r.alert, r.a.IncidentID, id)
		case r.status == http.StatusTooManyRequests && (ok || r.a.Error != "event_quota_exceeded"):
			t.Fatalf("alert %d: 429 %+v although it was accepted as %q", r.alert, r.a, id)
		}
	}
	if n := e.countIncidents(t, tn.ID); n != quota {
		t.Fatalf("%d incidents, want %d", n, quota)
	}
	var timeline int64
	e.store.DB().Model(&models.TimelineEntry{}).Where("tenant_id = ?", tn.ID).Count(&timeline)
	if timeline != quota {
		t.Fatalf("%d timeline entries, want one per incident", timeline)
	}
	if rem, _ := e.store.Usage(context.Background(), tn.ID, time.Now()); rem.Events != 0 {
		t.Fatalf("%d events left, want 0", rem.Events)
	}
}
