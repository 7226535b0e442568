package service

import (
	"errors"
	"testing"
	"time"

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
	_, err = s.ingestOne(t.Context(), "ten_1", "custom", providers.Alert{Title: "t", SourceAlertID: "a-1"})
	if e, ok := AsError(err); !ok || e.Code != CodeUnavailable {
		t.Fatalf("ingest on a full queue: %v, want %s", err, CodeUnavailable)
	}
}
