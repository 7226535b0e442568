package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/identity"
)

// tenantView is the body of GET /v1/tenant.
type tenantView struct {
	TenantID string `json:"tenantId"`
	Name     string `json:"name"`
	Plan     string `json:"plan"`
	Quotas   struct {
		Events, Investigations, Users struct{ Limit, Used, Remaining int }
	} `json:"quotas"`
	PeriodStart time.Time `json:"periodStart"`
	PeriodEnd   time.Time `json:"periodEnd"`
	SSO         *struct {
		Type     string `json:"type"`
		Enforced bool   `json:"enforced"`
	} `json:"sso"`
}

func (s *apiServer) tenant(t *testing.T, token string) tenantView {
	t.Helper()
	var v tenantView
	if st, _ := s.do(t, "GET", "/v1/tenant", token, nil, &v); st != http.StatusOK {
		t.Fatalf("GET /v1/tenant: %d", st)
	}
	return v
}

// burst opens n incidents at once and counts the answers by status.
func (s *apiServer) burst(t *testing.T, token string, n int) map[int]int {
	t.Helper()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[int]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var e errorBody
			st, _ := s.do(t, "POST", "/v1/incidents/chat", token, map[string]string{
				"title": fmt.Sprintf("checkout errors %d", i), "description": "checkout-api answers 502 since 14:03"}, &e)
			if st == http.StatusTooManyRequests && e.Error != "event_quota_exceeded" {
				t.Errorf("429 with error %q", e.Error)
			}
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// TestPlanQuotasAtTheBoundaryAndMidMonthChange puts a tenant on plans with
// small event quotas and opens incidents concurrently past each limit, on
// PostgreSQL: exactly the limit gets through. Changing the plan mid-month
// keeps what was used and applies the new limit to the very next request,
// upwards and downwards.
func TestPlanQuotasAtTheBoundaryAndMidMonthChange(t *testing.T) {
	cfg := apiConfig(t)
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 4, 2
	cfg.Plans.Team.EventsPerMonth, cfg.Plans.Team.InvestigationsPerMonth = 6, 3
	cfg.Plans.Enterprise.EventsPerMonth, cfg.Plans.Enterprise.InvestigationsPerMonth = 9, 0
	cfg.QuotaUsers, cfg.Plans.Enterprise.Users = 3, 0
	s := startAPI(t, cfg)
	owner := s.signup(t, "plans@example.com")
	plans := identity.NewPlans(s.app.Store, cfg.PlanQuotas())
	ctx := context.Background()

	v := s.tenant(t, owner.AccessToken)
	now := time.Now().UTC()
	wantStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if v.TenantID != owner.TenantID || v.Name != "Acme" || v.Plan != "free" || v.SSO != nil ||
		v.Quotas.Events.Limit != 4 || v.Quotas.Events.Used != 0 || v.Quotas.Events.Remaining != 4 ||
		v.Quotas.Investigations.Limit != 2 || v.Quotas.Investigations.Remaining != 2 ||
		v.Quotas.Users.Limit != 3 || v.Quotas.Users.Used != 1 || v.Quotas.Users.Remaining != 2 ||
		!v.PeriodStart.Equal(wantStart) || !v.PeriodEnd.Equal(wantStart.AddDate(0, 1, 0)) {
		t.Fatalf("new tenant: %+v", v)
	}

	if _, err := plans.Change(ctx, owner.TenantID, "team"); err != nil {
		t.Fatal(err)
	}
	if got := s.burst(t, owner.AccessToken, 15); got[http.StatusCreated] != 6 || got[http.StatusTooManyRequests] != 9 {
		t.Fatalf("team plan, 15 at once against 6: %v", got)
	}
	v = s.tenant(t, owner.AccessToken)
	if v.Plan != "team" || v.Quotas.Events.Limit != 6 || v.Quotas.Events.Used != 6 || v.Quotas.Events.Remaining != 0 ||
		v.Quotas.Investigations.Limit != 3 {
		t.Fatalf("after the burst: %+v", v)
	}

	// Upgrade mid-month: the 6 used stay used, 3 more fit at once.
	if _, err := plans.Change(ctx, owner.TenantID, "enterprise"); err != nil {
		t.Fatal(err)
	}
	v = s.tenant(t, owner.AccessToken)
	if v.Plan != "enterprise" || v.Quotas.Events.Used != 6 || v.Quotas.Events.Remaining != 3 ||
		v.Quotas.Investigations.Limit != 0 || v.Quotas.Investigations.Remaining != -1 ||
		v.Quotas.Users.Limit != 0 || v.Quotas.Users.Remaining != -1 {
		t.Fatalf("after the upgrade: %+v", v)
	}
	if got := s.burst(t, owner.AccessToken, 8); got[http.StatusCreated] != 3 || got[http.StatusTooManyRequests] != 5 {
		t.Fatalf("enterprise plan, 8 at once with 3 left: %v", got)
	}

	// Downgrade below what was used: nothing more gets through, nothing is lost.
	if _, err := plans.Change(ctx, owner.TenantID, "free"); err != nil {
		t.Fatal(err)
	}
	v = s.tenant(t, owner.AccessToken)
	if v.Plan != "free" || v.Quotas.Events.Limit != 4 || v.Quotas.Events.Used != 9 || v.Quotas.Events.Remaining != 0 {
		t.Fatalf("after the downgrade: %+v", v)
	}
	if got := s.burst(t, owner.AccessToken, 3); got[http.StatusTooManyRequests] != 3 {
		t.Fatalf("free plan under its usage: %v", got)
	}
	var listed struct {
		Count int `json:"count"`
	}
	s.do(t, "GET", "/v1/incidents?limit=1", owner.AccessToken, nil, &listed)
	if listed.Count != 9 {
		t.Fatalf("%d incidents stored, want 9", listed.Count)
	}

	if _, err := plans.Change(ctx, owner.TenantID, "platinum"); err == nil {
		t.Fatal("an unknown plan was accepted")
	}
	if _, err := plans.Change(ctx, "ten_missing", "team"); err == nil {
		t.Fatal("a missing tenant changed plan")
	}
}
