package remediation

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// TestVerificationProbesUnderTheTenantsGrant: a verification step reaches
// the tenant's system only inside the networks granted to the tenant's data
// sources, although the step client's own policy (private egress on) would
// let it through: the granted tenant's probe passes, a tenant without the
// grant is refused at once without a request, and so is a probe of one of
// Causeway's own services inside the grant.
func TestVerificationProbesUnderTheTenantsGrant(t *testing.T) {
	var served atomic.Int32
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer healthy.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer own.Close()
	ownAP := netip.MustParseAddrPort(own.Listener.Addr().String())

	store := testdb.Open(t)
	ctx := context.Background()
	for _, id := range []string{"ten_granted", "ten_plain"} {
		if err := store.DB().Create(&models.Tenant{ID: id, Name: id, Plan: models.PlanFree, CreatedAt: time.Now()}).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetTenantNetworks(ctx, "ten_granted", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}); err != nil {
		t.Fatal(err)
	}
	conn := datasources.NewConnector(datasources.Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Grants: store,
		Refuse: []egress.Endpoint{{Net: netip.PrefixFrom(ownAP.Addr(), 32), Port: ownAP.Port()}}})
	a := &Activities{Egress: egress.NewClient(egress.Options{AllowPrivate: true}), Reach: conn}
	probe := func(tenant, url string) error {
		return verificationStep{}.run(ctx, a, stepCall{Params: map[string]any{"url": url, "retries": 2, "timeout": "2s"},
			Key: "remediation/rem_v/step/0", TenantID: tenant})
	}

	if err := probe("ten_granted", healthy.URL); err != nil || served.Load() != 1 {
		t.Fatalf("granted tenant's verification: %v after %d requests, want success after 1", err, served.Load())
	}
	for _, tc := range []struct{ tenant, url string }{{"ten_plain", healthy.URL}, {"ten_granted", own.URL}} {
		start := time.Now()
		err := probe(tc.tenant, tc.url)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != ErrTypeEgressBlocked || !app.NonRetryable() || time.Since(start) > time.Second {
			t.Errorf("%s probing %s: %v, want an immediate non-retryable %s", tc.tenant, tc.url, err, ErrTypeEgressBlocked)
		}
	}
	if n := served.Load(); n != 1 {
		t.Fatalf("refused probes reached a server: %d requests in all", n)
	}
}
