package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
)

// TestScenarioExportIsTenantScoped: `causeway scenario export` finds an
// incident only in the tenant named by --tenant; another tenant's id is
// answered exactly like a missing one, before anything is read from Temporal.
func TestScenarioExportIsTenantScoped(t *testing.T) {
	commandEnv(t, t.TempDir())
	ctx := context.Background()
	_, store, err := migratedStore(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	owner, err := evalTenant(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := evalTenant(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	inc := &models.Incident{ID: models.NewID("inc"), TenantID: owner.TenantID, Title: "checkout degraded", Description: "checkout is degraded since noon",
		Severity: models.SeverityHigh, Status: models.StatusOpen, Source: models.SourceManual, CreatedAt: now, UpdatedAt: now, AlertCount: 1}
	if _, err := store.CreateIncident(ctx, inc, models.TimelineEntry{At: now, Kind: "created", Message: "seeded", DedupKey: inc.ID + "/created"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = scenarioCommand(ctx, "", []string{"export", "--tenant", stranger.TenantID, "--out", t.TempDir() + "/x.json", inc.ID}, &out)
	if err == nil || !strings.Contains(err.Error(), `incident_not_found: no incident with id "`+inc.ID+`"`) {
		t.Fatalf("another tenant's export: %v", err)
	}
	// Its own tenant finds it, and is told there is no answer to export yet.
	err = scenarioCommand(ctx, "", []string{"export", "--tenant", owner.TenantID, "--out", t.TempDir() + "/x.json", inc.ID}, &out)
	if err == nil || !strings.Contains(err.Error(), "has no completed investigation to export") {
		t.Fatalf("own export without an answer: %v", err)
	}
	if err := scenarioCommand(ctx, "", []string{"export", inc.ID}, &out); err == nil {
		t.Fatal("an export without --tenant ran")
	}
}
