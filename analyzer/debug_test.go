//go:build analyzerdump

package analyzer

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDumpScenario prints every finding for the scenario file named by
// ANALYZER_DUMP. It is a tuning aid, built only with the analyzerdump tag so the
// suite never carries a test that cannot run:
//
//	ANALYZER_DUMP=path/to/scenario.json go test -tags analyzerdump -run TestDumpScenario -v ./analyzer
func TestDumpScenario(t *testing.T) {
	p := os.Getenv("ANALYZER_DUMP")
	if p == "" {
		t.Fatal("set ANALYZER_DUMP to a scenario file")
	}
	s, err := LoadScenario(filepath.Clean(p))
	if err != nil {
		t.Fatal(err)
	}
	in := s.Input()
	for _, r := range Roles {
		for _, f := range Investigate(r, in).Findings {
			t.Logf("%-14s %-8s %-26s %.2f %s", r, f.Stance, f.Category, f.Strength, f.Citation)
		}
	}
	res := runAll(in)
	t.Logf("=> %s %.2f", res.Category, res.Confidence)
	for _, h := range res.Hypotheses {
		t.Logf("   %-26s %.2f %v", h.Category, h.Score, h.RuledOut)
	}
}
