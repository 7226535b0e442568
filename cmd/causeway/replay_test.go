package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEvalReplaysAnExportedScenario: an incident exported from an e2e run
// against a real Prometheus (testdata/replay, written by
// TestExportedScenarioReplays with CAUSEWAY_WRITE_SCENARIOS) is evaluated
// with its recorded answers served by a stand-in: the pass reaches the
// graded category, memory exhaustion, with no Prometheus anywhere.
func TestEvalReplaysAnExportedScenario(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("testdata", "replay", "exported-memory-exhaustion.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "exported.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	commandEnv(t, t.TempDir())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := evaluate(ctx, "", dir, &out); err != nil {
		t.Fatalf("eval: %v\n%s", err, out.String())
	}
	var row []string
	for _, line := range strings.Split(out.String(), "\n") {
		if m := evalRow.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			row = m
		}
	}
	if row == nil || row[1] != "exported-memory-exhaustion" || row[2] != "memory_exhaustion" || row[3] != "memory_exhaustion" || row[5] != "✓" {
		t.Fatalf("replay row %q:\n%s", row, out.String())
	}
	if !strings.Contains(out.String(), "Accuracy: 1/1") {
		t.Fatalf("report:\n%s", out.String())
	}
}
