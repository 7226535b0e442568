package investigation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// ReadChanges reads the window before the onset, the incident's service
// first, within its bounds, and another tenant's changes never.
func TestReadChangesWindowAndBounds(t *testing.T) {
	store := testdb.Open(t)
	ctx := context.Background()
	onset := time.Date(2025, 6, 2, 14, 0, 0, 0, time.UTC)
	now := time.Now().UTC()
	tenants := make([]string, 2)
	for i := range tenants {
		ten := &models.Tenant{ID: models.NewID("ten"), Name: "Acme", CreatedAt: now}
		u := &models.User{ID: models.NewID("usr"), Email: models.NewID("u") + "@example.com", Name: "O", Role: models.RoleOwner, CreatedAt: now}
		if err := store.CreateTenantWithOwner(ctx, ten, u); err != nil {
			t.Fatal(err)
		}
		tenants[i] = ten.ID
	}
	ten, other := tenants[0], tenants[1]
	inc := &models.Incident{ID: models.NewID("inc"), TenantID: ten, Title: "5xx", Description: "errors", Severity: "high",
		Status: models.StatusInvestigating, Source: "custom", Service: "checkout", CreatedAt: onset, UpdatedAt: onset,
		Metadata: map[string]any{"startsAt": onset.Format(time.RFC3339)}}
	if _, err := store.CreateIncident(ctx, inc, models.TimelineEntry{At: onset, Kind: "created", Message: "m", Actor: "a", DedupKey: inc.ID + "/c"}); err != nil {
		t.Fatal(err)
	}
	add := func(tenant, service, desc string, at time.Time) {
		t.Helper()
		c := &models.Change{TenantID: tenant, Service: service, Kind: "deployment", Description: desc, StartedAt: at, Source: "custom", CreatedAt: now}
		if _, _, err := store.RecordChange(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 12; i++ {
		add(ten, "checkout", fmt.Sprintf("checkout release %d", i), onset.Add(-time.Duration(12-i)*time.Hour))
	}
	add(ten, "checkout", "too old", onset.Add(-25*time.Hour))
	for i := 0; i < 7; i++ {
		add(ten, "search", fmt.Sprintf("search release %d", i), onset.Add(-time.Duration(i+1)*time.Minute))
	}
	add(ten, "checkout", "rollback after the onset", onset.Add(10*time.Minute))
	add(ten, "checkout", "after the pass began", onset.Add(3*time.Hour))
	add(other, "checkout", "another tenant's release", onset.Add(-2*time.Minute))

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a := &investigation.Activities{Store: store}
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.ReadChanges, investigation.ChangesInput{TenantID: ten, IncidentID: inc.ID, At: onset.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var out investigation.ChangesOutput
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	var own, others []string
	for i, c := range out.Changes {
		if i > 0 && c.StartedAt.Before(out.Changes[i-1].StartedAt) {
			t.Fatalf("changes not in the order they happened: %v", out.Changes)
		}
		if c.Service == "checkout" {
			own = append(own, c.Description)
		} else {
			others = append(others, c.Description)
		}
		if c.ID == "" {
			t.Fatal("a change without its id cannot be cited")
		}
	}
	if len(own) != investigation.MaxServiceChanges || len(others) != investigation.MaxOtherChanges {
		t.Fatalf("%d own and %d other changes, want %d and %d", len(own), len(others), investigation.MaxServiceChanges, investigation.MaxOtherChanges)
	}
	joined := strings.Join(own, "|")
	for _, want := range []string{"rollback after the onset", "checkout release 11", "checkout release 3"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in %v", want, own)
		}
	}
	for _, gone := range []string{"too old", "after the pass began", "another tenant's release", "checkout release 0|"} {
		if strings.Contains(joined+"|", gone) {
			t.Errorf("%q should not be read: %v", gone, own)
		}
	}
	if others[len(others)-1] != "search release 0" {
		t.Errorf("the other services' latest changes come first: %v", others)
	}
}
