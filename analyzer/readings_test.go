package analyzer

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var readingTime = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func reading(signal, unit string, value, limit float64, labels map[string]string) Reading {
	r := Reading{Signal: signal, Unit: unit, Value: value, Limit: limit, At: readingTime, Labels: labels}
	r.Render(signal)
	return r
}

func withBaseline(r Reading, b float64) Reading {
	r.Baseline = &b
	r.Render(r.Signal)
	return r
}

func measured(rs ...Reading) Excerpt {
	return Excerpt{
		Source:   Source{Kind: SourceDataSource, DataSourceID: "ds_1", Type: "prometheus", Query: "q"},
		Text:     ReadingsText(rs),
		Readings: rs,
		Measured: true,
	}
}

// TestReadingThresholds checks each signal's threshold on both sides: a
// reading past it supports its category, a clearly healthy one refutes it,
// and one in between says nothing.
func TestReadingThresholds(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name   string
		r      Reading
		cat    string
		stance string // "" = no finding on cat
	}{
		{"memory at limit", reading(SignalMemoryUsage, UnitBytes, 0.97*gib, gib, nil), CategoryMemoryExhaustion, StanceSupports},
		{"memory in between", reading(SignalMemoryUsage, UnitBytes, 0.75*gib, gib, nil), CategoryMemoryExhaustion, ""},
		{"memory low", reading(SignalMemoryUsage, UnitBytes, 0.3*gib, gib, nil), CategoryMemoryExhaustion, StanceRefutes},
		{"memory without a limit", reading(SignalMemoryUsage, UnitBytes, 5*gib, 0, nil), CategoryMemoryExhaustion, ""},
		{"oom kill", reading(SignalOOMKills, UnitCount, 2, 0, nil), CategoryMemoryExhaustion, StanceSupports},
		{"no oom kill", reading(SignalOOMKills, UnitCount, 0, 0, nil), CategoryMemoryExhaustion, StanceRefutes},
		{"terminated oom", reading(SignalTerminated, UnitCount, 1, 0, map[string]string{"reason": "OOMKilled"}), CategoryMemoryExhaustion, StanceSupports},
		{"terminated error", reading(SignalTerminated, UnitCount, 1, 0, map[string]string{"reason": "Error"}), CategoryMemoryExhaustion, ""},
		{"throttled", reading(SignalCPUThrottling, UnitRatio, 0.6, 0, nil), CategoryCPUSaturation, StanceSupports},
		{"not throttled", reading(SignalCPUThrottling, UnitRatio, 0.01, 0, nil), CategoryCPUSaturation, StanceRefutes},
		{"cpu at limit", reading(SignalCPUUsage, UnitCores, 1.98, 2, nil), CategoryCPUSaturation, StanceSupports},
		{"disk full", reading(SignalFilesystemFree, UnitBytes, 0.01*gib, 100*gib, nil), CategoryDiskFull, StanceSupports},
		{"disk roomy", reading(SignalFilesystemFree, UnitBytes, 60*gib, 100*gib, nil), CategoryDiskFull, StanceRefutes},
		{"inodes gone", reading(SignalInodesFree, UnitCount, 12, 1e6, nil), CategoryDiskFull, StanceSupports},
		{"cert expired", reading(SignalCertExpiry, UnitUnix, float64(readingTime.Add(-26*time.Hour).Unix()), 0, nil), CategoryCertificateExpired, StanceSupports},
		{"cert valid", reading(SignalCertExpiry, UnitUnix, float64(readingTime.Add(90*24*time.Hour).Unix()), 0, nil), CategoryCertificateExpired, StanceRefutes},
		{"cert expiring soon", reading(SignalCertExpiry, UnitUnix, float64(readingTime.Add(48*time.Hour).Unix()), 0, nil), CategoryCertificateExpired, ""},
		{"dns failing", reading(SignalDNSLookup, UnitBool, 0, 0, map[string]string{"error": "no such host"}), CategoryDNSFailure, StanceSupports},
		{"dns ok", reading(SignalDNSLookup, UnitBool, 1, 0, nil), CategoryDNSFailure, StanceRefutes},
		{"probe unresolved", reading(SignalProbeResolved, UnitCount, 0, 0, nil), CategoryDNSFailure, StanceSupports},
		{"connect refused", reading(SignalTCPConnect, UnitBool, 0, 0, map[string]string{"error": "refused"}), CategoryUpstreamDependency, StanceSupports},
		{"connect timeout", reading(SignalTCPConnect, UnitBool, 0, 0, map[string]string{"error": "timeout"}), CategoryNetworkPartition, StanceSupports},
		{"connections at max", reading(SignalDBConnections, UnitCount, 99, 100, nil), CategoryDBConnectionExhaustion, StanceSupports},
		{"connections low", reading(SignalDBConnections, UnitCount, 12, 100, nil), CategoryDBConnectionExhaustion, StanceRefutes},
		{"role at its limit", reading(SignalRoleConnections, UnitCount, 3, 3, nil), CategoryDBConnectionExhaustion, StanceSupports},
		{"lock wait", reading(SignalLockWait, UnitSeconds, 42, 0, map[string]string{"blocked_by": "[123]"}), CategoryDBLockContention, StanceSupports},
		{"no lock waits", reading(SignalLockWaits, UnitCount, 0, 0, nil), CategoryDBLockContention, StanceRefutes},
		{"slow statement", reading(SignalSlowStatement, UnitSeconds, 30, 0, nil), CategoryDBSlowQueries, StanceSupports},
		{"quick statement", reading(SignalSlowStatement, UnitSeconds, 0.2, 0, nil), CategoryDBSlowQueries, ""},
		{"redis down", reading(SignalCacheUp, UnitBool, 0, 0, nil), CategoryCacheFailure, StanceSupports},
		{"evictions", reading(SignalCacheEvictions, UnitCount, 5000, 0, nil), CategoryCacheFailure, StanceSupports},
		{"hit ratio collapse", withBaseline(reading(SignalCacheHitRatio, UnitRatio, 0.2, 0, nil), 0.95), CategoryCacheFailure, StanceSupports},
		{"hit ratio fine", withBaseline(reading(SignalCacheHitRatio, UnitRatio, 0.94, 0, nil), 0.95), CategoryCacheFailure, StanceRefutes},
		{"lag growing", withBaseline(reading(SignalConsumerLag, UnitCount, 48000, 0, nil), 1200), CategoryQueueBacklog, StanceSupports},
		{"lag steady", withBaseline(reading(SignalConsumerLag, UnitCount, 40, 0, nil), 45), CategoryQueueBacklog, StanceRefutes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if j, ok := judge(&c.r); ok && j.cat == c.cat {
				got = j.stance
			}
			if got != c.stance {
				t.Fatalf("%s: stance on %s = %q, want %q (line %q)", c.name, c.cat, got, c.stance, c.r.Line)
			}
		})
	}
}

func TestStrengthGrowsWithTheMargin(t *testing.T) {
	r91, r100 := reading(SignalMemoryUsage, UnitBytes, 91, 100, nil), reading(SignalMemoryUsage, UnitBytes, 100, 100, nil)
	j91, _ := judge(&r91)
	j100, _ := judge(&r100)
	near, far := j91.str, j100.str
	if !(far > near) {
		t.Fatalf("strength at 100%% (%v) should exceed strength at 91%% (%v)", far, near)
	}
}

// TestMeasuredExcerptsAreJudgedByReadings: a metric name in a reading's line
// is no symptom, so a healthy reading whose line names OOM kills or
// throttling must not read as evidence of them, while its reading refutes.
func TestMeasuredExcerptsAreJudgedByReadings(t *testing.T) {
	oom := reading(SignalOOMKills, UnitCount, 0, 0, map[string]string{"__name__": "node_vmstat_oom_kill"})
	thr := reading(SignalCPUThrottling, UnitRatio, 0.001, 0, map[string]string{"metric": "container_cpu_cfs_throttled_periods_total"})
	in := Input{Title: "checkout degraded", Service: "checkout", Gathered: []Excerpt{measured(oom, thr)}}
	rep := Investigate(RoleInfrastructure, in)
	if has(rep.Findings, CategoryMemoryExhaustion, StanceSupports) || has(rep.Findings, CategoryCPUSaturation, StanceSupports) {
		t.Fatalf("metric names in healthy readings were read as symptoms: %+v", rep.Findings)
	}
	if !has(rep.Findings, CategoryMemoryExhaustion, StanceRefutes) || !has(rep.Findings, CategoryCPUSaturation, StanceRefutes) {
		t.Fatalf("healthy readings should refute: %+v", rep.Findings)
	}
	res := Synthesize(in, []AgentReport{rep})
	if res.Category != CategoryUnknown || res.Confidence > 0.3 {
		t.Fatalf("healthy data: got %s at %.2f, want unknown with low confidence", res.Category, res.Confidence)
	}
}

func TestReadingFindingsCiteTheirLineAndSource(t *testing.T) {
	mem := reading(SignalMemoryUsage, UnitBytes, 1020, 1024, map[string]string{"pod": "checkout-7d9f"})
	ex := measured(mem)
	ex.Roles = []string{RoleInfrastructure, RoleMetrics}
	in := Input{Title: "checkout degraded", Service: "checkout", Gathered: []Excerpt{ex}}
	var reps []AgentReport
	for _, role := range []string{RoleInfrastructure, RoleMetrics, RoleNetwork} {
		reps = append(reps, Investigate(role, in))
	}
	if len(reps[2].Findings) != 0 {
		t.Fatalf("network read an excerpt meant for others: %+v", reps[2].Findings)
	}
	res := Synthesize(in, reps)
	if res.Category != CategoryMemoryExhaustion || res.Dropped != 0 {
		t.Fatalf("got %s (dropped %d), want memory_exhaustion", res.Category, res.Dropped)
	}
	for _, e := range res.Evidence {
		if e.Source == nil || e.Source.Query != "q" || !strings.Contains(e.Content, "checkout-7d9f") {
			t.Fatalf("evidence does not quote the reading with its query: %+v", e)
		}
	}
}

func TestReadingsCutFromTheTextAreNotJudged(t *testing.T) {
	mem := reading(SignalMemoryUsage, UnitBytes, 1020, 1024, nil)
	ex := measured(mem)
	ex.Text = "" // cut to the size cap
	rep := Investigate(RoleInfrastructure, Input{Title: "x", Gathered: []Excerpt{ex}})
	if len(rep.Findings) != 0 {
		t.Fatalf("a reading whose line is not in the text was judged: %+v", rep.Findings)
	}
}

func TestRenderFormatsUnits(t *testing.T) {
	r := reading(SignalMemoryUsage, UnitBytes, 1.5*(1<<30), 2*(1<<30), map[string]string{"pod": "a"})
	for _, want := range []string{"1.50 GiB", "2.00 GiB limit", "(75%)", "2026-03-04T10:00:00Z", `pod="a"`} {
		if !strings.Contains(r.Line, want) {
			t.Errorf("line %q lacks %q", r.Line, want)
		}
	}
	c := reading(SignalCertExpiry, UnitUnix, float64(readingTime.Add(-24*time.Hour).Unix()), 0, nil)
	if !strings.Contains(c.Line, "2026-03-03T10:00:00Z (24.0h before)") {
		t.Errorf("cert line %q", c.Line)
	}
}

func TestHealthySeriesDoNotRefuteAProblemElsewhere(t *testing.T) {
	full := reading(SignalInodesFree, UnitCount, 37, 6_553_600, map[string]string{"mountpoint": "/var/lib/app"})
	roomy := reading(SignalFilesystemFree, UnitBytes, 61, 100, map[string]string{"mountpoint": "/var/lib/app"})
	rep := Investigate(RoleInfrastructure, Input{Title: "x", Gathered: []Excerpt{measured(full, roomy)}})
	if !has(rep.Findings, CategoryDiskFull, StanceSupports) || has(rep.Findings, CategoryDiskFull, StanceRefutes) {
		t.Fatalf("inodes exhausted with bytes to spare: %+v", rep.Findings)
	}
}

func TestRawGatheredTextIsReadWithinABudget(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "12:00:%02d INFO request served in %dms\n", i%60, i)
	}
	b.WriteString("12:03:20 FATAL: sorry, too many clients already\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "12:04:%02d ERROR upstream request %d failed\n", i%60, i)
	}
	in := Input{Title: "orders degraded", Gathered: []Excerpt{{Source: Source{Kind: SourceDataSource, Type: "loki", Query: "{app=\"orders\"}"}, Text: b.String()}}}
	raw := newRawBudget()
	read := raw.take(in.Gathered[0].Text)
	if strings.Count(read, "\n")+1 != rawLinesPerAgent || !strings.HasPrefix(read, "12:03:20 FATAL") || strings.Contains(read, "INFO") {
		t.Fatalf("read %q: want the first %d problem lines", read, rawLinesPerAgent)
	}
	if !has(Investigate(RoleDatabase, in).Findings, CategoryDBConnectionExhaustion, StanceSupports) {
		t.Fatal("the problem line among the raw text was not read")
	}
}

// TestDatabaseInstanceReadings: the RDS judges — storage running out against
// the window's start, a replica falling behind, and a busy CPU whose load
// waits elsewhere argued down as a symptom.
func TestDatabaseInstanceReadings(t *testing.T) {
	base := func(v float64) *float64 { return &v }
	cases := []struct {
		r      Reading
		cat    string
		stance string
	}{
		{Reading{Signal: SignalFreeStorage, Value: 0.4e9, Baseline: base(15e9)}, CategoryDiskFull, StanceSupports},
		{Reading{Signal: SignalFreeStorage, Value: 8e9, Baseline: base(50e9)}, CategoryDiskFull, StanceSupports},
		{Reading{Signal: SignalFreeStorage, Value: 199e9, Baseline: base(200e9)}, CategoryDiskFull, StanceRefutes},
		{Reading{Signal: SignalReplicaLag, Value: 900, Baseline: base(2)}, CategoryQueueBacklog, StanceSupports},
		{Reading{Signal: SignalReplicaLag, Value: 1.5, Baseline: base(1)}, CategoryQueueBacklog, StanceRefutes},
		{Reading{Signal: SignalDBLoadCPUShare, Value: 0.02}, CategoryCPUSaturation, StanceRefutes},
		{Reading{Signal: SignalDBLoadCPUShare, Value: 0.9}, CategoryCPUSaturation, StanceSupports},
	}
	for _, c := range cases {
		j, ok := judge(&c.r)
		if !ok || j.cat != c.cat || j.stance != c.stance {
			t.Errorf("%s %.3g: %+v %v", c.r.Signal, c.r.Value, j, ok)
		}
	}
	if j, _ := judge(&Reading{Signal: SignalFreeStorage, Value: 40e9, Baseline: base(60e9)}); j.cat != "" {
		t.Errorf("a third of the space used is no full disk: %+v", j)
	}
}
