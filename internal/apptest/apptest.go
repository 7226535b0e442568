// Package apptest serves the real router (API and dashboard) on a real
// database for tests of the HTTP surface. Temporal points at a closed port: the
// endpoints those tests reach never need it, and health must say so.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/internal/testdb"
)

// Config is a valid configuration on a fresh database for t; change it before
// Start.
func Config(t testing.TB) *config.Config {
	c := config.Defaults(config.ModeProduction)
	c.HTTPAddr, c.DataDir, c.LogLevel, c.DatabaseURL = "127.0.0.1:0", t.TempDir(), "warn", testdb.URL(t)
	c.TemporalAddress, c.TemporalTaskQueue = "", "causeway"
	c.AuthJWTSecret, c.AuthSignupEnabled = "api-test-secret-api-test-secret-0123", true
	c.AuthTokenTTL, c.AuthRefreshTTL = time.Hour, 24*time.Hour
	c.SecretsKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	c.QuotaEventsPerMonth, c.QuotaInvestigationsPerMonth = 100, 10
	// Tests that exercise the limits set them; the rest must not trip them.
	c.RateLimitPerMinute, c.AuthRateLimitPerMinute = 0, 0
	// The harness's tenants reach the loopback sources their tests start;
	// tests of the grants themselves turn the switch off.
	c.DataSourceAllowedNetworks, c.DataSourceGrantAll = "127.0.0.0/8", true
	return &c
}

// Start validates cfg, migrates its database and serves the router until t
// ends.
func Start(t testing.TB, cfg *config.Config) (*httptest.Server, *app.App) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Router())
	t.Cleanup(func() { srv.Close(); a.Close() })
	return srv, a
}

// PostJSON posts body as JSON, with a Bearer token when one is given, and
// decodes the answer into out (when not nil); it returns the status.
func PostJSON(t testing.TB, url, token string, body, out any) int {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("POST %s: decode: %v", url, err)
		}
	}
	return resp.StatusCode
}
