package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/opensre"
	"github.com/causeway/causeway/replay"
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

// TestEvalServesASnapshotFile: a scenario file holding a system snapshot
// (here OpenSRE's OOM crash-loop case written in the scenario format) is
// evaluated by plain `causeway eval` with its cluster and logs served to the
// pass: the row carries the file's label and a completed pass.
func TestEvalServesASnapshotFile(t *testing.T) {
	cases, err := opensre.Load(filepath.Join("testdata", "opensre", "eks"))
	if err != nil {
		t.Fatal(err)
	}
	var s replay.Scenario
	for _, c := range cases {
		if c.ID == "001-oomkilled-crashloop" {
			s = c.Scenario
		}
	}
	s.ID = "snapshot-oom"
	s.Expected = analyzer.Expected{Category: analyzer.CategoryMemoryExhaustion, Agents: []string{analyzer.RoleInfrastructure}}
	dir := t.TempDir()
	if err := replay.Write(filepath.Join(dir, "snapshot-oom.json"), s); err != nil {
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
	if row == nil || row[1] != "snapshot-oom" || row[2] != "memory_exhaustion" || row[6] != "completed" {
		t.Fatalf("snapshot row %q:\n%s", row, out.String())
	}
}

// TestSnapshotChangesMoveWithTheSnapshot: a snapshot's recorded changes keep
// their distance to its "now" when the replay moves the file to the present.
func TestSnapshotChangesMoveWithTheSnapshot(t *testing.T) {
	started := time.Date(2026, 3, 1, 9, 50, 0, 0, time.UTC)
	finished := started.Add(2 * time.Minute)
	in := []analyzer.Change{{Service: "checkout", Kind: "deployment", Description: "v2", StartedAt: started, FinishedAt: &finished}, {Service: "x", Kind: "config", Description: "undated"}}
	out := shiftChanges(in, 3*time.Hour)
	if !out[0].StartedAt.Equal(time.Date(2026, 3, 1, 12, 50, 0, 0, time.UTC)) || !out[0].FinishedAt.Equal(time.Date(2026, 3, 1, 12, 52, 0, 0, time.UTC)) {
		t.Fatalf("shifted change %v – %v", out[0].StartedAt, out[0].FinishedAt)
	}
	if !out[1].StartedAt.IsZero() || !in[0].StartedAt.Equal(started) || !in[0].FinishedAt.Equal(finished) {
		t.Fatalf("an undated change gains a date, or the input moved: %+v %+v", out[1], in[0])
	}
}

// TestTimeValuedSeriesMoveWithTheSnapshot: a series whose value is a moment
// (a certificate's expiry) is moved like its samples' times; a duration is
// not.
func TestTimeValuedSeriesMoveWithTheSnapshot(t *testing.T) {
	for metric, want := range map[string]bool{"probe_ssl_earliest_cert_expiry": true, "kube_job_status_completion_timestamp_seconds": true,
		"probe_dns_lookup_time_seconds": false, "node_filesystem_avail_bytes": false} {
		if timeValued(metric) != want {
			t.Errorf("%s time-valued: %v, want %v", metric, !want, want)
		}
	}
}
