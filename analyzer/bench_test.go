package analyzer

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// gatheredMB builds an incident with about 1 MB of gathered text: measured
// answers (readings of many series) and, when raw, log lines as a logs source
// would return them.
func gatheredMB(raw bool) Input {
	in := Input{Title: "checkout degraded", Service: "checkout"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	size := 0
	for q := 0; size < 1<<20; q++ {
		ex := Excerpt{Source: Source{Kind: SourceDataSource, DataSourceID: "ds_1", Type: "prometheus", Query: fmt.Sprintf("q%d", q)}}
		if raw {
			var b strings.Builder
			for i := 0; b.Len() < 24<<10; i++ {
				if i%25 == 24 {
					fmt.Fprintf(&b, "2026-01-02T03:04:%02dZ level=error msg=\"query failed\" err=\"pq: canceling statement due to statement timeout\" item=%d\n", i%60, i)
					continue
				}
				fmt.Fprintf(&b, "2026-01-02T03:04:%02dZ level=info msg=\"request served\" path=/api/v1/items/%d status=200 duration_ms=%d\n", i%60, i, i%97)
			}
			ex.Text = b.String()
		} else {
			ex.Measured = true
			for i := 0; i < 150; i++ {
				r := Reading{Signal: SignalMemoryUsage, Unit: UnitBytes, Value: float64(300+i) * (1 << 20), Limit: 1 << 30, At: at,
					Labels: map[string]string{"namespace": "shop", "pod": fmt.Sprintf("checkout-%d-%d", q, i), "container": "checkout"}}
				r.Render("memory working set")
				ex.Readings = append(ex.Readings, r)
			}
			ex.Text = ReadingsText(ex.Readings)
		}
		size += len(ex.Text)
		in.Gathered = append(in.Gathered, ex)
	}
	return in
}

// BenchmarkInvestigateGathered1MB: one agent's run over 1 MB of gathered
// text; the goal is under 10 ms per agent.
func BenchmarkInvestigateGathered1MB(b *testing.B) {
	for _, raw := range []bool{false, true} {
		name := "measured"
		if raw {
			name = "raw-lines"
		}
		in := gatheredMB(raw)
		b.Run(name, func(b *testing.B) {
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Investigate(Roles[i%len(Roles)], in)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/agent")
		})
	}
}
