package models_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// TestInvestigationQuotaUnderConcurrency starts 20 passes at once against a
// quota of 5: exactly 5 begin, the rest see ErrQuotaExceeded, and the counter
// never goes past the quota.
func TestInvestigationQuotaUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
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
			_, err := s.BeginInvestigation(ctx, models.BeginSpec{TenantID: tenant.ID, IncidentID: incID,
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

// Issuing a refresh chain drops the user's expired links, so rotated tokens kept
// for reuse detection do not pile up for ever.
func TestExpiredRefreshTokensArePruned(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
	now := time.Now().UTC()
	tenant := models.Tenant{ID: "ten_p", Name: "Prune", CreatedAt: now}
	if err := s.CreateTenantWithOwner(ctx, &tenant, &models.User{ID: "usr_p", TenantID: tenant.ID, Email: "p@example.com",
		Name: "P", Role: models.RoleOwner, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	old := &models.RefreshToken{ID: "rt_old", TenantID: tenant.ID, UserID: "usr_p", FamilyID: "f1", TokenHash: "h-old",
		ExpiresAt: now.Add(-time.Hour), CreatedAt: now.Add(-48 * time.Hour)}
	live := &models.RefreshToken{ID: "rt_live", TenantID: tenant.ID, UserID: "usr_p", FamilyID: "f2", TokenHash: "h-live",
		ExpiresAt: now.Add(time.Hour), CreatedAt: now.Add(-time.Hour)}
	for _, rt := range []*models.RefreshToken{old, live} {
		if err := s.DB().Create(rt).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveRefreshToken(ctx, &models.RefreshToken{ID: "rt_new", TenantID: tenant.ID, UserID: "usr_p", FamilyID: "f3",
		TokenHash: "h-new", ExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	s.DB().Model(&models.RefreshToken{}).Where("user_id = ?", "usr_p").Order("id").Pluck("id", &ids)
	if fmt.Sprint(ids) != "[rt_live rt_new]" {
		t.Fatalf("tokens left = %v", ids)
	}
}
