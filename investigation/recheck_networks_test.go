package investigation

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
)

// TestRecheckRunsUnderTheTenantsGrant: a remediation's verification runs the
// cited queries again under the networks of the remediation's tenant. Two
// tenants cite the same probe of a loopback endpoint; only the one granted
// loopback gets an answer, and only its probe ever connects.
func TestRecheckRunsUnderTheTenantsGrant(t *testing.T) {
	var accepted atomic.Int32
	target := testenv.Listen(t, func(context.Context, net.Conn) { accepted.Add(1) })
	store := testdb.Open(t)
	ctx := context.Background()
	now := time.Now().UTC()
	for _, tenant := range []string{"ten_a", "ten_b"} {
		rows := []any{
			&models.Tenant{ID: tenant, Name: tenant, Plan: models.PlanFree, CreatedAt: now},
			&models.DataSource{ID: "ds_" + tenant, TenantID: tenant, Name: "edge", Type: datasources.TypeProbe,
				Settings: map[string]any{"targets": []any{"tcp://" + target}}, Status: models.DataSourceActive, CreatedAt: now},
			&models.Incident{ID: "inc_" + tenant, TenantID: tenant, Title: "payments failing", Description: "payments failing", Severity: "high",
				Status: models.StatusInvestigated, Source: models.SourceManual, CreatedAt: now.Add(-time.Hour), UpdatedAt: now},
			&models.Investigation{ID: "inv_" + tenant, TenantID: tenant, IncidentID: "inc_" + tenant, Pass: 1, Status: models.InvestigationCompleted,
				Agents: []string{analyzer.RoleNetwork}, StartedAt: now.Add(-time.Hour), Evidence: []models.Evidence{{AgentRole: analyzer.RoleNetwork,
					Content: "TCP connect failed", Source: &analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: "ds_" + tenant,
						Type: datasources.TypeProbe, Query: "tcp connect " + target}}}},
		}
		for _, r := range rows {
			if err := store.DB().Create(r).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := store.SetTenantNetworks(ctx, "ten_a", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store, DataSources: datasources.NewConnector(datasources.Options{
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Grants: store})}
	for tenant, answered := range map[string]int{"ten_a": 1, "ten_b": 0} {
		rc, err := a.Recheck(ctx, tenant, "inv_"+tenant, now.Add(-time.Minute))
		if err != nil || rc.Asked != 1 || rc.Answered != answered {
			t.Errorf("recheck of %s: %+v, %v; want 1 asked, %d answered", tenant, rc, err, answered)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the endpoint saw %d connections, want the granted tenant's one", n)
	}
}
