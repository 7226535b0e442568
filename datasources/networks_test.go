package datasources

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// grantsOn is a store holding the named tenants, each with the grant given
// ("" for none), as `causeway tenant networks` would have stored it.
func grantsOn(t *testing.T, grants map[string]string) *models.Store {
	t.Helper()
	s := testdb.Open(t)
	ctx := context.Background()
	for id, cidrs := range grants {
		if err := s.DB().Create(&models.Tenant{ID: id, Name: id, Plan: models.PlanFree, CreatedAt: time.Now()}).Error; err != nil {
			t.Fatal(err)
		}
		var nets []netip.Prefix
		for _, c := range strings.Split(cidrs, ",") {
			if c != "" {
				nets = append(nets, netip.MustParsePrefix(c))
			}
		}
		if err := s.SetTenantNetworks(ctx, id, nets); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// countingProm is a Prometheus stand-in that counts the requests it served.
func countingProm(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"version":"2.53.0"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestEachTenantReachesItsGrantInsideTheCeiling: under a loopback ceiling,
// a tenant granted loopback creates a source there; a tenant granted
// nothing, one whose grant lies outside the ceiling, and the first tenant
// under a ceiling lowered after its grant, are refused at create with the
// field named.
func TestEachTenantReachesItsGrantInsideTheCeiling(t *testing.T) {
	srv, _ := countingProm(t)
	store := grantsOn(t, map[string]string{"ten_a": "127.0.0.0/8", "ten_b": "", "ten_c": "10.0.0.0/8"})
	c := NewConnector(Options{AllowNetworks: loopback, Grants: store})
	ctx := context.Background()
	if _, err := c.Prepare(ctx, Spec{TenantID: "ten_a", Name: "prom", Type: TypePrometheus, URL: srv.URL}); err != nil {
		t.Fatalf("tenant granted loopback: %v", err)
	}
	for _, tenant := range []string{"ten_b", "ten_c", "ten_nobody"} {
		_, err := c.Prepare(ctx, Spec{TenantID: tenant, Name: "prom", Type: TypePrometheus, URL: srv.URL})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "url" || !strings.Contains(fe.Message, "this tenant's networks") {
			t.Errorf("tenant %s creating a loopback source: %v, want a url field error on its networks", tenant, err)
		}
		_, err = c.Prepare(ctx, Spec{TenantID: tenant, Name: "edge", Type: TypeProbe, Settings: map[string]any{"targets": []any{"localhost:9"}}})
		if !errors.As(err, &fe) || fe.Field != "settings.targets[0]" {
			t.Errorf("tenant %s creating a probe of localhost: %v, want a settings.targets[0] error", tenant, err)
		}
	}
	// A ceiling lowered after the grant was made lowers what it reaches.
	lowered := NewConnector(Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Grants: store})
	if _, err := lowered.Prepare(ctx, Spec{TenantID: "ten_a", Name: "prom", Type: TypePrometheus, URL: srv.URL}); err == nil {
		t.Error("a loopback grant reached past a ceiling without loopback")
	}
	// A public address stays reachable without any grant.
	if _, err := c.Prepare(ctx, Spec{TenantID: "ten_b", Name: "prom", Type: TypePrometheus, URL: "http://93.184.215.14:9090"}); err != nil {
		t.Errorf("a public address without a grant: %v", err)
	}
}

// TestTheDialTimeCheckUsesTheQueryingTenantsGrant: one connector, one
// source URL. The tenant with the grant is answered; a tenant without it is
// refused at dial time, even right after the first tenant's connection to
// the same server was pooled, and so is the first tenant once its grant is
// withdrawn. The refused queries never reach the server.
func TestTheDialTimeCheckUsesTheQueryingTenantsGrant(t *testing.T) {
	srv, served := countingProm(t)
	store := grantsOn(t, map[string]string{"ten_a": "127.0.0.0/8", "ten_b": ""})
	c := NewConnector(Options{AllowNetworks: loopback, Grants: store, QueryTimeout: 5 * time.Second})
	ctx := context.Background()
	cfg, err := c.Prepare(ctx, Spec{TenantID: "ten_a", Name: "prom", Type: TypePrometheus, URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := c.Test(ctx, cfg); err != nil || msg != "Prometheus 2.53.0 answered" {
		t.Fatalf("test by the granted tenant: %q, %v", msg, err)
	}
	before := served.Load()
	other := cfg
	other.TenantID = "ten_b"
	_, err = c.Test(ctx, other)
	if !errors.Is(err, ErrBlocked) || !Permanent(err) || Describe(err) != "blocked: outside this tenant's networks (an operator grants them with `causeway tenant networks`)" {
		t.Fatalf("the same source tested as another tenant: %v (%q), want a permanent blocked error", err, Describe(err))
	}
	if err := store.SetTenantNetworks(ctx, "ten_a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Test(ctx, cfg); !errors.Is(err, ErrBlocked) {
		t.Fatalf("after the grant was withdrawn: %v, want blocked", err)
	}
	if n := served.Load(); n != before {
		t.Fatalf("the server saw %d requests from refused tenants", n-before)
	}
}

// TestOwnServicesAreRefusedToEveryTenant: an address:port that is one of
// Causeway's own services is refused at create to a tenant granted its
// whole network, by address and by a name resolving to it, for every kind
// that connects; at query time an alert-named endpoint there is a
// permanent refusal, and nothing connects to it.
func TestOwnServicesAreRefusedToEveryTenant(t *testing.T) {
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := own.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	port := netip.MustParseAddrPort(own.Addr().String()).Port()
	portText := strconv.Itoa(int(port))
	c := NewConnector(Options{AllowNetworks: loopback, GrantAll: true,
		Refuse: []egress.Endpoint{{Net: netip.MustParsePrefix("127.0.0.0/8"), Port: port}}})
	ctx := context.Background()
	for _, s := range []Spec{
		{Name: "p", Type: TypePrometheus, URL: "http://127.0.0.1:" + portText},
		{Name: "p", Type: TypePrometheus, URL: "http://localhost:" + portText + "/"},
		{Name: "db", Type: TypePostgres, URL: "postgres://u:pw@127.0.0.1:" + portText + "/db"},
		{Name: "edge", Type: TypeProbe, URL: "tcp://127.0.0.2:" + portText},
	} {
		s.TenantID = "ten_a"
		_, err := c.Prepare(ctx, s)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "url" || !strings.Contains(fe.Message, "one of Causeway's own services") {
			t.Errorf("%s source at %s: %v, want a url field error naming Causeway's own services", s.Type, s.URL, err)
		}
	}
	// Another port of the same address is not Causeway's.
	if _, err := c.Prepare(ctx, Spec{TenantID: "ten_a", Name: "p", Type: TypePrometheus, URL: "http://127.0.0.1:" + strconv.Itoa(int(port^1))}); err != nil {
		t.Errorf("another port: %v", err)
	}

	cfg, err := c.Prepare(ctx, Spec{TenantID: "ten_a", Name: "edge", Type: TypeProbe})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds_edge"
	sc := Scope{Endpoints: []string{"tcp://127.0.0.1:" + portText}}
	var q Query
	for _, pq := range Plan([]Source{{ID: cfg.ID, Type: cfg.Type, Settings: cfg.Settings}}, sc, []string{analyzer.RoleNetwork}, 50).Queries {
		if pq.Entry == "tcp" {
			q = pq
		}
	}
	if q.Entry == "" {
		t.Fatal("no tcp probe planned for the alert's endpoint")
	}
	_, err = c.Run(ctx, cfg, q)
	if !egress.IsOwnService(err) || !Permanent(err) || Describe(err) != "blocked: the address is one of Causeway's own services, which no data source may reach" {
		t.Fatalf("probe of an own service named by the alert: %v (%q), want a permanent own-service refusal", err, Describe(err))
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the own service accepted %d connections", n)
	}
}
