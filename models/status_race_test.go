package models_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// TestResolutionIsNeverOverwritten races a resolution against a pass starting on
// the same incident, many times. Whatever the interleaving, once the resolution
// committed the incident stays resolved: the pass's status change is guarded in
// its UPDATE, where the database re-checks it under the row lock.
func TestResolutionIsNeverOverwritten(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
	now := time.Now().UTC()
	tenant := models.Tenant{ID: "ten_r", Name: "Race", CreatedAt: now}
	if err := s.CreateTenantWithOwner(ctx, &tenant, &models.User{ID: "usr_r", TenantID: tenant.ID, Email: "r@example.com",
		Name: "R", Role: models.RoleOwner, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		id := fmt.Sprintf("inc_r%02d", i)
		inc := models.Incident{ID: id, TenantID: tenant.ID, Title: "t", Description: "race test",
			Severity: models.SeverityHigh, Status: models.StatusTriaging, Source: "custom", CreatedAt: now, UpdatedAt: now}
		if err := s.DB().Create(&inc).Error; err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.BeginInvestigation(ctx, models.BeginSpec{TenantID: tenant.ID, IncidentID: id,
				InvestigationID: "inv_" + id, Pass: 1, Agents: []string{"logs"}, Actor: "triage", At: now,
				Entry: models.TimelineEntry{At: now, Kind: "investigation_started", Message: "m", Actor: "triage", DedupKey: id + "/start"}})
			if err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			_, err := s.SetIncidentStatus(ctx, models.StatusChange{TenantID: tenant.ID, IncidentID: id, Status: models.StatusResolved, At: now,
				Entry: models.TimelineEntry{At: now, Kind: "resolved", Message: "m", Actor: "datadog", DedupKey: id + "/resolved"}})
			if err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		got, err := s.GetIncident(ctx, tenant.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != models.StatusResolved || got.ResolvedAt == nil {
			t.Fatalf("iteration %d: status %q resolvedAt %v — the resolution was overwritten", i, got.Status, got.ResolvedAt)
		}
	}
}
