package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

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
