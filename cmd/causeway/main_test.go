package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// commandEnv gives a command a production-shaped configuration: the test's own
// database (a fresh PostgreSQL schema, or a SQLite file in dataDir) and secrets.
func commandEnv(t *testing.T, dataDir string) (databaseURL string) {
	t.Helper()
	databaseURL = testdb.URL(t)
	t.Setenv("CAUSEWAY_DATABASE_URL", databaseURL)
	t.Setenv("CAUSEWAY_DATA_DIR", dataDir)
	t.Setenv("CAUSEWAY_AUTH_JWT_SECRET", "command-test-secret-0123456789abcdef")
	t.Setenv("CAUSEWAY_SECRETS_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	t.Setenv("CAUSEWAY_LOG_LEVEL", "error")
	return databaseURL
}

// TestMigrateCreatesAUsableSchema runs `causeway migrate` twice on an empty
// database: the first run creates the tables the API needs, the second finds
// them up to date, and the schema takes the rows a sign-up writes.
func TestMigrateCreatesAUsableSchema(t *testing.T) {
	dataDir := t.TempDir()
	url := commandEnv(t, dataDir)
	for i := range 2 {
		if err := run([]string{"migrate"}); err != nil {
			t.Fatalf("migrate run %d: %v", i+1, err)
		}
	}
	ctx := context.Background()
	store, err := models.Open(ctx, url, filepath.Join(dataDir, "causeway.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, table := range []string{"tenants", "users", "incidents", "incident_timeline", "investigations", "api_keys",
		"outbox_events", "webhook_endpoints", "event_deliveries", "runbooks", "remediations", "remediation_steps"} {
		if !store.DB().Migrator().HasTable(table) {
			t.Errorf("table %s missing after migrate", table)
		}
	}
	now := time.Now().UTC()
	tn := &models.Tenant{ID: models.NewID("ten"), Name: "Acme", CreatedAt: now}
	u := &models.User{ID: models.NewID("usr"), TenantID: tn.ID, Email: "owner@example.com", Name: "Owner", Role: models.RoleOwner, CreatedAt: now}
	if err := store.CreateTenantWithOwner(ctx, tn, u); err != nil {
		t.Fatalf("sign-up rows on the migrated schema: %v", err)
	}
}

// TestMigrateRefusesABadConfiguration: migrate validates the configuration
// like every other command, naming what to fix, before it touches a database.
func TestMigrateRefusesABadConfiguration(t *testing.T) {
	commandEnv(t, t.TempDir())
	t.Setenv("CAUSEWAY_SECRETS_KEY", "too-short")
	err := run([]string{"migrate"})
	if err == nil || !strings.Contains(err.Error(), "CAUSEWAY_SECRETS_KEY") {
		t.Fatalf("migrate = %v, want an error naming CAUSEWAY_SECRETS_KEY", err)
	}
	if err := run([]string{"frobnicate"}); err == nil {
		t.Fatal("an unknown command succeeded")
	}
}

// evalRow is one scenario line of the eval report: id, expected, got,
// confidence, mark, status, and the seconds it took.
var evalRow = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\d\.\d\d) ([✓✗]) (\S+)\s+\d+\.\ds$`)

// TestEvalReportsEveryScenario runs `causeway eval` over three labelled
// incidents through the real pipeline (embedded Temporal, worker, database):
// each gets a row with the label from its file and a completed pass, and the
// accuracy line counts the rows that match their label.
func TestEvalReportsEveryScenario(t *testing.T) {
	dir := t.TempDir()
	names := []string{"blind-pgbouncer-slow.json", "blind-inode-exhaustion.json", "blip-unknown.json"}
	labels := map[string]string{}
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join("..", "..", "analyzer", "testdata", "holdout", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := analyzer.LoadScenario(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		labels[s.ID] = s.Expected.Category
	}
	commandEnv(t, t.TempDir())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := evaluate(ctx, "", dir, &out); err != nil {
		t.Fatalf("eval: %v\n%s", err, out.String())
	}
	rows, right := 0, 0
	for _, line := range strings.Split(out.String(), "\n") {
		m := evalRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		rows++
		id, expected, got, mark, status := m[1], m[2], m[3], m[5], m[6]
		if labels[id] != expected {
			t.Errorf("row %q: expected %q, the scenario's label is %q", line, expected, labels[id])
		}
		if status != models.InvestigationCompleted {
			t.Errorf("row %q: pass %s, want completed", line, status)
		}
		if (got == expected) != (mark == "✓") {
			t.Errorf("row %q: mark %s disagrees with expected/got", line, mark)
		}
		if mark == "✓" {
			right++
		}
	}
	if rows != len(names) {
		t.Fatalf("%d scenario rows, want %d:\n%s", rows, len(names), out.String())
	}
	if want := fmt.Sprintf("Accuracy: %d/%d", right, len(names)); !strings.Contains(out.String(), want) {
		t.Fatalf("report lacks %q:\n%s", want, out.String())
	}
}

// TestEvalRefusesBadScenarios: a malformed scenario or an empty directory is
// an error before anything starts.
func TestEvalRefusesBadScenarios(t *testing.T) {
	commandEnv(t, t.TempDir())
	empty := t.TempDir()
	if err := evaluate(context.Background(), "", empty, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no scenarios") {
		t.Fatalf("empty dir: %v", err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "broken.json"), []byte(`{"id":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := evaluate(context.Background(), "", bad, &bytes.Buffer{}); err == nil {
		t.Fatal("a malformed scenario was accepted")
	}
	if err := run([]string{"eval"}); err == nil {
		t.Fatal("eval without a directory succeeded")
	}
}
