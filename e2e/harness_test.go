// Package e2e runs Causeway end to end: a real in-process Temporal server, the
// real HTTP API and worker, and a real database (PostgreSQL when
// CAUSEWAY_TEST_DATABASE_URL is set). It is the one test package that links the
// Temporal server, so unit tests elsewhere stay quick to build.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/devstack"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

// stack is one Temporal server for the whole package: starting it is the slow
// part, and tests keep apart by task queue and database.
var stack *devstack.Stack

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s, err := devstack.Start(ctx, devstack.Options{SearchAttributes: investigation.SearchAttributeTypes()})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start embedded temporal:", err)
		os.Exit(1)
	}
	stack = s
	code := m.Run()
	_ = s.Stop()
	os.Exit(code)
}

// env is one running Causeway (API, worker, dispatcher) on its own database and
// task queue.
type env struct {
	URL      string
	App      *app.App
	Store    *models.Store
	Temporal client.Client
	Config   *config.Config
	// Logs holds everything the process logged, so a test can check what
	// never reaches a log line.
	Logs *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was logged so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testConfig is a valid configuration for t; mutate it before newEnvWith.
func testConfig(t testing.TB) *config.Config {
	c := config.Defaults(config.ModeProduction)
	c.HTTPAddr, c.DataDir, c.LogLevel, c.DatabaseURL = "127.0.0.1:0", t.TempDir(), "warn", testdb.URL(t)
	c.TemporalNamespace, c.TemporalTaskQueue = stack.Namespace(), "causeway-"+auth.RandomToken(6)
	c.AuthJWTSecret, c.AuthSignupEnabled = auth.RandomToken(32), true
	c.AuthTokenTTL, c.AuthRefreshTTL = time.Hour, 24*time.Hour
	c.SecretsKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	c.EgressAllowPrivate = true
	c.QuotaEventsPerMonth, c.QuotaInvestigationsPerMonth = 10000, 1000
	// Tests that exercise the limits set them; the rest must not trip them.
	c.RateLimitPerMinute, c.AuthRateLimitPerMinute = 0, 0
	c.DataSourceAllowedNetworks, c.DataSourceGrantAll = "127.0.0.0/8,::1/128", true
	return &c
}

func newEnv(t testing.TB) *env { return newEnvWith(t, testConfig(t)) }

// newEnvWith starts API, worker and dispatcher for cfg against the shared server.
func newEnvWith(t testing.TB, cfg *config.Config) *env { return startEnv(t, cfg, true) }

// startEnv is newEnvWith; without withWorker nothing in this process polls the
// task queue, so a test can run the worker as a separate process.
func startEnv(t testing.TB, cfg *config.Config, withWorker bool) *env {
	t.Helper()
	return startEnvOn(t, cfg, stack.FrontendAddress(), withWorker)
}

// startEnvOn is startEnv against the Temporal frontend at temporalAddr, for
// tests that run (and stop) a server of their own.
func startEnvOn(t testing.TB, cfg *config.Config, temporalAddr string, withWorker bool) *env {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, os.Stderr)
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := app.New(ctx, cfg, log, temporalAddr)
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	if err := a.Store.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	w := a.Worker()
	if withWorker {
		if err := w.Start(); err != nil {
			t.Fatalf("worker: %v", err)
		}
	}
	done := make(chan struct{})
	go func() { a.Dispatcher().Run(ctx, 200*time.Millisecond); close(done) }()
	srv := httptest.NewServer(a.Router())
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		if withWorker {
			w.Stop()
		}
		a.Close()
	})
	return &env{URL: srv.URL, App: a, Store: a.Store, Temporal: a.Temporal, Config: cfg, Logs: logs}
}

// call sends a JSON request and decodes the JSON answer into out (when not nil).
func (e *env) call(t testing.TB, method, path, token string, body, out any) int {
	t.Helper()
	return e.callWith(t, method, path, token, nil, body, out)
}

// callWith is call with extra request headers.
func (e *env) callWith(t testing.TB, method, path, token string, header http.Header, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// signup creates a tenant with its owner and returns the owner's access token and
// the tenant id.
func (e *env) signup(t testing.TB, tenant string) (token, tenantID string) {
	t.Helper()
	var out struct {
		TenantID    string `json:"tenantId"`
		AccessToken string `json:"accessToken"`
	}
	email := fmt.Sprintf("owner-%s@example.com", auth.RandomToken(6))
	st := e.call(t, "POST", "/auth/signup", "", map[string]string{
		"tenantName": tenant, "email": email, "password": "correct horse battery", "name": "Owner",
	}, &out)
	if st != http.StatusCreated || out.AccessToken == "" {
		t.Fatalf("signup: status %d", st)
	}
	return out.AccessToken, out.TenantID
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// repoFile is a path relative to the repository root (tests run in e2e/).
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{".."}, parts...)...)
}
