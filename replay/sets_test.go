package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSnapshotSetsLoad: every file of the Kubernetes snapshot sets loads
// strictly (docs/scenarios.md) and labels its answer fully: a mechanism of
// its category, and a culprit for every answer but unknown.
func TestSnapshotSetsLoad(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "analyzer", "testdata", "kubernetes", "*"))
	total := 0
	for _, scenarios := range loadSets(t, dirs) {
		for _, s := range scenarios {
			total++
			if s.Kubernetes == nil {
				t.Errorf("%s: no kubernetes snapshot", s.ID)
			}
			if s.Expected.Category != "unknown" && (s.Expected.Culprit == nil || s.Expected.Mechanism == "") {
				t.Errorf("%s: a fault's label names its mechanism and culprit", s.ID)
			}
		}
	}
	t.Logf("%d snapshot scenarios", total)
}

// TestLiveAndProseSetsLoad: every file of the exporter, rollout and prose
// sets (analyzer/testdata/live, analyzer/testdata/changes/*,
// analyzer/testdata/sealed/*) loads strictly:
// a live-data file holds the systems it is replayed from, a prose file none.
func TestLiveAndProseSetsLoad(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "analyzer", "testdata", "sealed", "*"))
	changes, _ := filepath.Glob(filepath.Join("..", "analyzer", "testdata", "changes", "*"))
	dirs = append(append(dirs, changes...), filepath.Join("..", "analyzer", "testdata", "live"))
	total := 0
	for dir, scenarios := range loadSets(t, dirs) {
		live := filepath.Base(dir) != "prose"
		for _, s := range scenarios {
			total++
			if s.Snapshot() != live {
				t.Errorf("%s/%s: a file of a live set replays systems, a prose file none", filepath.Base(dir), s.ID)
			}
		}
	}
	t.Logf("%d scenarios", total)
}

// loadSets loads every directory of dirs strictly, by directory; a path
// that is not a directory is left out.
func loadSets(t *testing.T, dirs []string) map[string][]Scenario {
	t.Helper()
	out := map[string][]Scenario{}
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		scenarios, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		out[dir] = scenarios
	}
	return out
}
