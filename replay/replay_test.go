package replay

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/datasources"
)

// ask runs q against the stand-in of alias through the real data-source
// client, as a pass would.
func ask(t *testing.T, srv *Servers, alias, typ string, q datasources.Query) datasources.Result {
	t.Helper()
	conn := datasources.NewConnector(datasources.Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, GrantAll: true})
	res, err := conn.Run(context.Background(), datasources.Config{Name: alias, Type: typ, URL: srv.URLs[alias]}, q)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestStandInsAnswerAsRecorded: what the Prometheus and Loki clients read
// from the stand-ins is what was recorded, moved to the asked window.
func TestStandInsAnswerAsRecorded(t *testing.T) {
	end := time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC)
	start := end.Add(-30 * time.Minute)
	peak := end.Add(-5 * time.Minute)
	mem := analyzer.Reading{Signal: analyzer.SignalMemoryUsage, Value: 510e6, Limit: 512e6, Unit: analyzer.UnitBytes, At: peak,
		Labels: map[string]string{"namespace": "shop", "pod": "checkout-7d9f8c6b5-x2k4q", "container": "checkout"}}
	logs := "2026-11-28T19:51:02.250Z checkout-7d9f8c6b5-x2k4q: ERROR dial tcp 10.0.3.7:5432: connect: connection refused\n" +
		"2026-11-28T19:52:00.000Z ERROR payment gateway timed out"
	s := Scenario{
		Sources: []Source{{Alias: "m", Type: datasources.TypePrometheus}, {Alias: "l", Type: datasources.TypeLoki}, {Alias: "k", Type: datasources.TypeKubernetes}},
		Answers: []Answer{
			{Source: "m", Type: datasources.TypePrometheus, Entry: "memory_usage", Query: "memory query", Start: start, End: end, Readings: []analyzer.Reading{mem}},
			{Source: "l", Type: datasources.TypeLoki, Entry: "error_lines", Query: "lines query", Start: start, End: end, Text: logs},
			{Source: "l", Type: datasources.TypeLoki, Entry: "error_count", Query: "count query", Start: start, End: end,
				Readings: []analyzer.Reading{{Signal: analyzer.SignalLogErrors, Value: 42, Unit: analyzer.UnitCount, At: peak}}},
		},
	}
	srv := Serve(s)
	defer srv.Close()
	if len(srv.Skipped) != 1 || srv.Skipped[0].Alias != "k" {
		t.Fatalf("skipped %+v, want the kubernetes source", srv.Skipped)
	}

	// Asked an hour later, everything moves by an hour.
	later := time.Hour
	q := datasources.Query{Type: datasources.TypePrometheus, Entry: "memory_usage", Text: "memory query", Start: start.Add(later), End: end.Add(later)}
	got := ask(t, srv, "m", datasources.TypePrometheus, q).Readings
	if len(got) != 1 || got[0].Value != 510e6 || got[0].Limit != 512e6 || !got[0].At.Equal(peak.Add(later)) || got[0].Labels["pod"] != "checkout-7d9f8c6b5-x2k4q" {
		t.Fatalf("prometheus readings %+v", got)
	}
	if res := ask(t, srv, "m", datasources.TypePrometheus, datasources.Query{Type: datasources.TypePrometheus, Entry: "memory_usage", Text: "never recorded", Start: start, End: end}); res.Note != "no series matched" {
		t.Fatalf("an unrecorded query: %+v", res)
	}

	lines := ask(t, srv, "l", datasources.TypeLoki, datasources.Query{Type: datasources.TypeLoki, Entry: "error_lines", Text: "lines query", Start: start.Add(later), End: end.Add(later)})
	want := "2026-11-28T20:51:02.250Z checkout-7d9f8c6b5-x2k4q: ERROR dial tcp 10.0.3.7:5432: connect: connection refused\n" +
		"2026-11-28T20:52:00.000Z ERROR payment gateway timed out"
	if lines.Text != want {
		t.Fatalf("loki lines:\n%s\nwant\n%s", lines.Text, want)
	}
	count := ask(t, srv, "l", datasources.TypeLoki, datasources.Query{Type: datasources.TypeLoki, Entry: "error_count", Text: "count query", Start: start.Add(later), End: end.Add(later)})
	if len(count.Readings) != 1 || count.Readings[0].Value != 42 || !count.Readings[0].At.Equal(peak.Add(later)) {
		t.Fatalf("loki count %+v", count.Readings)
	}
}
