package investigation_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// TestInvestigationQuotaUnderConcurrency starts 20 passes at once against a
// quota of 5: exactly 5 begin, the rest see ErrQuotaExceeded, and the counter
// never goes past the quota.
func TestInvestigationQuotaUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
	passes := investigation.NewStore(s.DB())
	now := time.Now().UTC()
	tenant := models.Tenant{ID: "ten_q", Name: "Quota", QuotaEvents: 0, QuotaInvestigations: 5, CreatedAt: now}
	if err := s.CreateTenantWithOwner(ctx, &tenant, &models.User{ID: "usr_q", TenantID: tenant.ID, Email: "q@example.com",
		Name: "Q", Role: models.RoleOwner, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		inc := models.Incident{ID: fmt.Sprintf("inc_q%02d", i), TenantID: tenant.ID, Title: "t", Description: "quota test",
			Severity: models.SeverityHigh, Status: models.StatusOpen, Source: models.SourceManual, CreatedAt: now, UpdatedAt: now}
		if err := s.DB().Create(&inc).Error; err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		began, exceeded int
		others          []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			incID := fmt.Sprintf("inc_q%02d", i)
			_, err := passes.BeginInvestigation(ctx, investigation.BeginSpec{TenantID: tenant.ID, IncidentID: incID,
				InvestigationID: "inv_q" + incID, Pass: 1, Agents: []string{"logs"}, Actor: "test", At: now,
				Entry: models.TimelineEntry{At: now, Kind: "investigation_started", Message: "m", Actor: "test", DedupKey: incID + "/start"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				began++
			case errors.Is(err, models.ErrQuotaExceeded):
				exceeded++
			default:
				others = append(others, err)
			}
		}()
	}
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("unexpected errors: %v", others)
	}
	if began != 5 || exceeded != n-5 {
		t.Fatalf("began %d, exceeded %d; want 5 and %d", began, exceeded, n-5)
	}
	rem, err := s.Usage(ctx, tenant.ID, now)
	if err != nil || rem.Investigations != 0 {
		t.Errorf("remaining %+v, %v; want 0 investigations", rem, err)
	}
	var runs int64
	s.DB().Model(&models.Investigation{}).Count(&runs)
	if runs != 5 {
		t.Errorf("%d investigations recorded, want 5", runs)
	}
}

// TestResolutionIsNeverOverwritten races a resolution against a pass starting on
// the same incident, many times. Whatever the interleaving, once the resolution
// committed the incident stays resolved: the pass's status change is guarded in
// its UPDATE, where the database re-checks it under the row lock.
func TestResolutionIsNeverOverwritten(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
	passes := investigation.NewStore(s.DB())
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
			_, err := passes.BeginInvestigation(ctx, investigation.BeginSpec{TenantID: tenant.ID, IncidentID: id,
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
