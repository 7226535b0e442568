package analyzer

import (
	"path/filepath"
	"testing"
)

func BenchmarkInvestigate(b *testing.B) {
	scs, err := LoadScenarios(filepath.Join("testdata", "holdout"))
	if err != nil {
		b.Fatal(err)
	}
	in := scs[0].Input()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Investigate(RoleLogs, in)
	}
}
