package service

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// TestIncidentWriterRefusesBacklog shows a writer that is queueMax alerts
// behind answers at once instead of queueing another waiter, and that ingestion
// turns that into the unavailable (503) error.
func TestIncidentWriterRefusesBacklog(t *testing.T) {
	w := newIncidentWriter(nil)
	w.running = batchWriters // the writers are busy; nothing drains the queue
	w.queue = make([]*incidentJob, queueMax)
	err := w.create(&models.Incident{ID: "inc_1"}, models.TimelineEntry{})
	if !errors.Is(err, errWriterBacklog) {
		t.Fatalf("create on a full queue: %v", err)
	}
	if len(w.queue) != queueMax {
		t.Fatalf("queue grew to %d", len(w.queue))
	}

	s := &Ingest{writer: w, recent: &recentAlerts{}, now: time.Now}
	_, err = s.ingestOne(t.Context(), "ten_1", "custom", providers.Alert{Title: "t", SourceAlertID: "a-1"}, true)
	if e, ok := errcode.As(err); !ok || e.Code != errcode.Unavailable {
		t.Fatalf("ingest on a full queue: %v, want %s", err, errcode.Unavailable)
	}
}

// TestOneTenantsStormLeavesRoomForOthers: while the database is behind, a
// tenant holds at most its share of the writer's queue; its next alert is
// refused at once, while another tenant's alert still joins the queue, and
// the share frees as the writer takes the storm's alerts.
func TestOneTenantsStormLeavesRoomForOthers(t *testing.T) {
	w := newIncidentWriter(nil)
	w.running = batchWriters   // the writers are busy; nothing drains the queue
	const share = queueMax / 4 // the documented share, not the constant under test
	for i := range share {
		w.queue = append(w.queue, &incidentJob{item: models.NewIncident{Incident: &models.Incident{ID: fmt.Sprint("inc_", i), TenantID: "ten_storm"}}})
	}
	w.waiting["ten_storm"] = share
	more := make(chan error, 1)
	go func() {
		more <- w.create(&models.Incident{ID: "inc_more", TenantID: "ten_storm"}, models.TimelineEntry{})
	}()
	select {
	case err := <-more:
		if !errors.Is(err, errWriterBacklog) {
			t.Fatalf("the storming tenant past its share: %v, want the backlog answer", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the storming tenant's alert past its share was queued instead of refused")
	}
	quiet := make(chan error, 1)
	go func() {
		quiet <- w.create(&models.Incident{ID: "inc_quiet", TenantID: "ten_quiet"}, models.TimelineEntry{})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		n := len(w.queue)
		w.mu.Unlock()
		if n == share+1 {
			break
		}
		select {
		case err := <-quiet:
			t.Fatalf("the quiet tenant's alert was answered without being queued: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the quiet tenant's alert never joined the queue")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The writer takes a group: the storm's share is counted down with it.
	w.mu.Lock()
	w.take()
	w.mu.Unlock()
	go func() { _ = w.create(&models.Incident{ID: "inc_again", TenantID: "ten_storm"}, models.TimelineEntry{}) }()
	deadline = time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		n := w.waiting["ten_storm"]
		w.mu.Unlock()
		if n == share-batchMax+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the writer took a group the storm holds %d, want %d", n, share-batchMax+1)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIncidentWriterSettlesByTenant sends one group with alerts of a tenant whose
// event quota has room for one and of a tenant without a limit. The group fails
// as a whole; the unlimited tenant's alerts are then still committed together
// (on PostgreSQL: one transaction, seen as one xmin), and the first tenant gets
// exactly the one incident its quota allows.
func TestIncidentWriterSettlesByTenant(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
	now := time.Now().UTC()
	for _, tn := range []models.Tenant{
		{ID: "ten_a", Name: "A", QuotaEvents: 1, CreatedAt: now},
		{ID: "ten_b", Name: "B", QuotaEvents: 0, CreatedAt: now},
	} {
		if err := s.CreateTenantWithOwner(ctx, &tn, &models.User{ID: "usr_" + tn.ID, TenantID: tn.ID,
			Email: tn.ID + "@example.com", Name: tn.Name, Role: models.RoleOwner, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	var batch []*incidentJob
	for _, tid := range []string{"ten_a", "ten_b"} {
		for i := range 3 {
			inc := newAlertIncident(tid, "custom", providers.Alert{Title: "disk full",
				SourceAlertID: fmt.Sprintf("alert-%d", i), Severity: "high"}, now)
			batch = append(batch, &incidentJob{done: make(chan error, 1), item: models.NewIncident{Incident: inc,
				First: models.TimelineEntry{At: now, Kind: "alert_received", Message: "m", Actor: "custom", DedupKey: inc.ID + "/alert_received"}}})
		}
	}
	newIncidentWriter(s).flush(batch)

	outcome := map[string][]error{}
	for _, j := range batch {
		outcome[j.item.Incident.TenantID] = append(outcome[j.item.Incident.TenantID], <-j.done)
	}
	var created, exceeded int
	for _, err := range outcome["ten_a"] {
		switch {
		case err == nil:
			created++
		case errors.Is(err, models.ErrQuotaExceeded):
			exceeded++
		default:
			t.Fatalf("tenant a: %v", err)
		}
	}
	if created != 1 || exceeded != 2 {
		t.Fatalf("tenant a: %d created, %d over quota; want 1 and 2", created, exceeded)
	}
	for _, err := range outcome["ten_b"] {
		if err != nil {
			t.Fatalf("tenant b: %v", err)
		}
	}
	if s.DB().Dialector.Name() == "postgres" {
		var txns int64
		if err := s.DB().Raw("SELECT count(DISTINCT xmin::text) FROM incidents WHERE tenant_id = ?", "ten_b").Scan(&txns).Error; err != nil {
			t.Fatal(err)
		}
		if txns != 1 {
			t.Fatalf("tenant b's incidents were committed in %d transactions, want 1", txns)
		}
	}
}
