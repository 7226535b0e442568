package service

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// PagerDuty abandons a webhook delivery that has not been answered within 5 s
// (docs/providers.md). A resolved notification waits on Temporal for at most
// resolveTimeout and then answers 503, which PagerDuty retries; the wait plus
// the rest of the request must fit in those 5 s, or the delivery is dropped.
func TestResolveTimeoutFitsPagerDutyDeliveryTimeout(t *testing.T) {
	const pagerDutyDeliveryTimeout = 5 * time.Second
	if resolveTimeout <= 0 || resolveTimeout > pagerDutyDeliveryTimeout-time.Second {
		t.Fatalf("resolveTimeout %v leaves less than a second of PagerDuty's %v", resolveTimeout, pagerDutyDeliveryTimeout)
	}
}

// TestResolvedNotificationWaitsOnlyItsBound: against a Temporal that accepts
// connections and never answers, a resolved notification is answered
// unavailable once its own bound has passed, not when the Temporal client's
// longer deadline would end it.
func TestResolvedNotificationWaitsOnlyItsBound(t *testing.T) {
	silent := testenv.Listen(t, func(ctx context.Context, _ net.Conn) { <-ctx.Done() })
	tc, err := client.NewLazyClient(client.Options{HostPort: silent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	store := testdb.Open(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	disp := investigation.NewDispatcher(store, tc, "test-queue", 16, log)
	s := NewIngest(store, investigation.NewIncidents(store, tc, disp, auth.NewSigner(strings.Repeat("k", 32), "cursor"), log), disp, nil, nil, nil, nil, log)
	s.resolveWait = 300 * time.Millisecond
	now := time.Now().UTC()
	inc := &models.Incident{ID: models.NewID("inc"), TenantID: "ten_r", Title: "t", Description: "d", Severity: "high",
		Status: models.StatusInvestigating, Source: "custom", SourceAlertID: "a-1", CreatedAt: now, UpdatedAt: now, WorkflowStartedAt: &now, AdmittedAt: &now}
	if err := store.DB().Create(inc).Error; err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.resolveAlert(context.Background(), "ten_r", "custom", providers.Alert{SourceAlertID: "a-1", Resolved: true})
	took := time.Since(start)
	if e, ok := errcode.As(err); !ok || e.Code != errcode.Unavailable {
		t.Fatalf("resolve against a silent Temporal = %v, want unavailable", err)
	}
	// temporalx.Call allows the client seconds; the bound is 300 ms.
	if took > 2*time.Second {
		t.Errorf("the resolve waited %s, past its %s bound", took, s.resolveWait)
	}
}
