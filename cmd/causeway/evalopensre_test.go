package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
)

// openSRERow is one case line of the OpenSRE report: case, expected,
// Causeway's category, the mapped category, mark, an optional FORBIDDEN and
// the seconds it took.
var openSRERow = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([✓✗])\s+(FORBIDDEN)?\s*(\d+\.\d)s$`)

// copyCase copies one vendored case folder into dir/suite.
func copyCase(t *testing.T, dir, suite, id string) {
	t.Helper()
	src := filepath.Join("testdata", "opensre", suite, id)
	dst := filepath.Join(dir, suite, id)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEvalOpenSRERunsEachCase runs `causeway eval --format opensre` over an
// eks case (its cluster through the Kubernetes API replay, its logs through
// Loki, files it lacks from its base case) and an rds_postgres case (its
// series in a real Prometheus): each case gets a row, and the summary counts
// them. Accuracy is not asserted; the analyzer changes under it.
func TestEvalOpenSRERunsEachCase(t *testing.T) {
	if _, _, err := promlab.Binaries(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	dir := t.TempDir()
	copyCase(t, dir, "eks", "000-healthy")
	copyCase(t, dir, "eks", "001-oomkilled-crashloop")
	copyCase(t, dir, "rds_postgres", "012-replication-lag-misleading-events")
	commandEnv(t, t.TempDir())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := evalCommand(ctx, "", []string{"--format", "opensre", dir}, &out); err != nil {
		t.Fatalf("eval: %v\n%s", err, out.String())
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if m := openSRERow.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			rows[m[1]] = m
		}
	}
	want := map[string]string{"eks/000-healthy": "healthy", "eks/001-oomkilled-crashloop": "resource_exhaustion",
		"rds_postgres/012-replication-lag-misleading-events": "resource_exhaustion"}
	for id, expected := range want {
		r, ok := rows[id]
		if !ok {
			t.Errorf("no row for %s:\n%s", id, out.String())
			continue
		}
		if r[2] != expected || r[3] == "" || r[4] == "" {
			t.Errorf("row %q: expected %q", r[0], expected)
		}
	}
	if !strings.Contains(out.String(), "Category accuracy: ") || !strings.Contains(out.String(), "/3 (") ||
		!strings.Contains(out.String(), "Median seconds per case: ") || strings.Contains(out.String(), "Did not run") {
		t.Fatalf("summary:\n%s", out.String())
	}
}
