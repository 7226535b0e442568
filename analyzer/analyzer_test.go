package analyzer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func has(fs []Finding, cat, stance string) bool {
	for _, f := range fs {
		if f.Category == cat && f.Stance == stance {
			return true
		}
	}
	return false
}

func TestAgents(t *testing.T) {
	type want struct{ cat, stance string }
	cases := []struct {
		name    string
		role    string
		in      Input
		want    []want
		notWant []want
	}{
		{"java oom in logs", RoleLogs, Input{Context: []string{"ERROR [worker-2] job failed\njava.lang.OutOfMemoryError: Java heap space"}},
			[]want{{CategoryMemoryExhaustion, StanceSupports}}, nil},
		{"oomkilled pod", RoleInfrastructure, Input{Context: []string{"Last State: Terminated\n  Reason: OOMKilled\n  Exit Code: 137"}},
			[]want{{CategoryMemoryExhaustion, StanceSupports}}, nil},
		{"negated restarts and low memory", RoleInfrastructure, Input{Context: []string{"pods stable: 0 restarts, memory 40%"}},
			[]want{{CategoryMemoryExhaustion, StanceRefutes}}, []want{{CategoryMemoryExhaustion, StanceSupports}}},
		{"postgres slots", RoleDatabase, Input{Context: []string{"FATAL:  remaining connection slots are reserved for non-replication superuser connections"}},
			[]want{{CategoryDBConnectionExhaustion, StanceSupports}}, nil},
		{"mysql too many connections", RoleLogs, Input{Context: []string{"Error: ER_CON_COUNT_ERROR: Too many connections"}},
			[]want{{CategoryDBConnectionExhaustion, StanceSupports}}, nil},
		{"negated db signals", RoleDatabase, Input{Context: []string{"orders-db: CPU 20%, no lock waits, no slow queries, connections 30/500"}},
			[]want{{CategoryDBLockContention, StanceRefutes}, {CategoryDBSlowQueries, StanceRefutes}, {CategoryDBConnectionExhaustion, StanceRefutes}},
			[]want{{CategoryDBLockContention, StanceSupports}, {CategoryDBSlowQueries, StanceSupports}, {CategoryDBConnectionExhaustion, StanceSupports}}},
		{"mysql deadlock", RoleDatabase, Input{Context: []string{"ERROR 1213 (40001): Deadlock found when trying to get lock; try restarting transaction"}},
			[]want{{CategoryDBLockContention, StanceSupports}}, nil},
		{"go dns", RoleNetwork, Input{Context: []string{`dial tcp: lookup api.example.com: no such host`}},
			[]want{{CategoryDNSFailure, StanceSupports}}, nil},
		{"exception name is not ENOTFOUND", RoleNetwork, Input{Context: []string{`app.errors.UserNotFound: no user 42`}},
			nil, []want{{CategoryDNSFailure, StanceSupports}}},
		{"429", RoleNetwork, Input{Context: []string{"upstream replied HTTP 429 Too Many Requests, retry-after=30"}},
			[]want{{CategoryRateLimited, StanceSupports}}, nil},
		{"cpu throttling is not rate limiting", RoleNetwork, Input{Context: []string{"container_cpu_cfs_throttled_seconds_total rising, CPU throttled 80% of periods"}},
			nil, []want{{CategoryRateLimited, StanceSupports}}},
		{"expired cert", RoleNetwork, Input{Context: []string{"x509: certificate has expired or is not yet valid"}},
			[]want{{CategoryCertificateExpired, StanceSupports}}, nil},
		{"hit ratio collapse", RoleMetrics, Input{Context: []string{"cache hit ratio 96% -> 12% at 10:02"}},
			[]want{{CategoryCacheFailure, StanceSupports}}, nil},
		{"hit ratio steady", RoleMetrics, Input{Context: []string{"cache hit ratio 95%, unchanged"}},
			[]want{{CategoryCacheFailure, StanceRefutes}}, []want{{CategoryCacheFailure, StanceSupports}}},
		{"gc cpu is memory", RoleMetrics, Input{Context: []string{"CPU 99% on every pod during garbage collection pauses"}},
			[]want{{CategoryMemoryExhaustion, StanceSupports}}, []want{{CategoryCPUSaturation, StanceSupports}}},
		{"cpu pinned", RoleInfrastructure, Input{Context: []string{"CPU per pod: 1.98 / 2.00 cores (limit)"}},
			[]want{{CategoryCPUSaturation, StanceSupports}}, nil},
		{"disk full", RoleInfrastructure, Input{Context: []string{"write /data/segment-0001: no space left on device"}},
			[]want{{CategoryDiskFull, StanceSupports}}, nil},
		{"redis refused is cache", RoleLogs, Input{Context: []string{"redis.exceptions.ConnectionError: Error 111 connecting to cache:6379. Connection refused."}},
			[]want{{CategoryCacheFailure, StanceSupports}}, []want{{CategoryUpstreamDependency, StanceSupports}}},
		{"provider 503", RoleNetwork, Input{Context: []string{"POST https://api.partner.example/v1/charge -> 503 Service Unavailable"}},
			[]want{{CategoryUpstreamDependency, StanceSupports}}, nil},
		{"packet loss", RoleNetwork, Input{Context: []string{"packet loss zone-a -> zone-b: 35%"}},
			[]want{{CategoryNetworkPartition, StanceSupports}}, nil},
		{"kafka lag", RoleMetrics, Input{Context: []string{"consumer lag on topic payments grew 2,000 -> 450,000"}},
			[]want{{CategoryQueueBacklog, StanceSupports}}, nil},
		{"no deploys", RoleDeployments, Input{Context: []string{"No deploys today; last release was Monday."}},
			[]want{{CategoryBadDeployment, StanceRefutes}}, []want{{CategoryBadDeployment, StanceSupports}}},
		{"deploy after onset", RoleDeployments, Input{Metadata: map[string]any{"startsAt": "2025-01-02T10:00:00Z"},
			Context: []string{"2025-01-02T10:31:00Z api v2.1.0 deployed to production"}},
			[]want{{CategoryBadDeployment, StanceRefutes}}, []want{{CategoryBadDeployment, StanceSupports}}},
		{"deploy right before onset", RoleDeployments, Input{Service: "api", Context: []string{
			"2025-01-02T09:58:00Z api v2.1.0 deployed to production",
			"2025-01-02T10:00:12Z ERROR request failed: TypeError: x is undefined"}},
			[]want{{CategoryBadDeployment, StanceSupports}}, nil},
		{"rollback did not help", RoleDeployments, Input{Context: []string{"11:02 ops: rolled back to v1.4.2\n11:10 ops: errors continue at the same rate"}},
			[]want{{CategoryBadDeployment, StanceRefutes}}, []want{{CategoryBadDeployment, StanceSupports}}},
		{"rollback fixed it", RoleDeployments, Input{Context: []string{"11:02 ops: rolled back to v1.4.2\n11:06 ops: 5xx back to 0.1%"}},
			[]want{{CategoryBadDeployment, StanceSupports}}, nil},
		{"flag revert fixed it", RoleDeployments, Input{Context: []string{"12:40 sam: turned the checkout-v2 flag off\n12:43 sam: errors stopped"}},
			[]want{{CategoryConfigChange, StanceSupports}}, []want{{CategoryBadDeployment, StanceSupports}}},
		{"no in an error message is not a negation", RoleDatabase, Input{Context: []string{"FATAL:  no more connections allowed (max_client_conn)"}},
			[]want{{CategoryDBConnectionExhaustion, StanceSupports}}, []want{{CategoryDBConnectionExhaustion, StanceRefutes}}},
		{"readings after a mitigation rule nothing out", RoleDatabase, Input{Context: []string{"16:18 SELECT pg_terminate_backend(28811); lock waits 0"}},
			nil, []want{{CategoryDBLockContention, StanceRefutes}}},
		{"a revert that closed an earlier episode", RoleDeployments, Input{
			Description: "p99 latency 3.9 s since 11:05",
			Context:     []string{"09:20 CHG-7781 search.fuzzy.maxExpansions 50 -> 500; latency rose; reverted 09:34; latency back to normal 09:34-11:02"}},
			[]want{{CategoryConfigChange, StanceRefutes}}, []want{{CategoryConfigChange, StanceSupports}, {CategoryUpstreamDependency, StanceSupports}}},
		{"cpu throttling is not rate limiting", RoleMetrics, Input{Context: []string{"container_cpu_cfs_throttled_periods_total / periods: 4% -> 71% since 11:03"}},
			[]want{{CategoryCPUSaturation, StanceSupports}}, []want{{CategoryRateLimited, StanceSupports}}},
		{"a disk watermark 429 is not a rate limit", RoleLogs, Input{Context: []string{`{:status=>429, "reason"=>"index blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block]"}`}},
			[]want{{CategoryDiskFull, StanceSupports}}, []want{{CategoryRateLimited, StanceSupports}}},
		{"advice printed under an error is not evidence", RoleDatabase, Input{Context: []string{"You can address this by:\n  2. Tracking down slow queries and making sure they are running fast enough"}},
			nil, []want{{CategoryDBSlowQueries, StanceSupports}}},
		{"a signal explained away", RoleMetrics, Input{Context: []string{"14:03 ines: kafka lag is the risk team's own consumer, not ours."}},
			nil, []want{{CategoryQueueBacklog, StanceSupports}}},
		{"a revert undoes the change it names", RoleDeployments, Input{
			Description: "edge 404 ratio 51% since 09:04",
			Context: []string{"09:03:41 | gitlab CI | edge-config pipeline #1187 (MR !412) apply-consul-kv: OK, 2 keys written\n" +
				"09:25 | on-call | reverts MR !412 (pipeline #1189)\n09:26 | grafana | 404 ratio 0.5%"}},
			[]want{{CategoryConfigChange, StanceSupports}}, []want{{CategoryBadDeployment, StanceSupports}}},
		{"a renewed certificate", RoleNetwork, Input{Context: []string{"certbot: Congratulations, all renewals succeeded: /etc/letsencrypt/live/api.example.com/fullchain.pem"}},
			[]want{{CategoryCertificateExpired, StanceRefutes}}, []want{{CategoryCertificateExpired, StanceSupports}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := Investigate(tc.role, tc.in)
			if rep.AgentRole != tc.role {
				t.Fatalf("role %q", rep.AgentRole)
			}
			for _, w := range tc.want {
				if !has(rep.Findings, w.cat, w.stance) {
					t.Errorf("missing %s %s in %+v", w.stance, w.cat, rep.Findings)
				}
			}
			for _, w := range tc.notWant {
				if has(rep.Findings, w.cat, w.stance) {
					t.Errorf("unexpected %s %s in %+v", w.stance, w.cat, rep.Findings)
				}
			}
			for _, f := range rep.Findings {
				if !CitationValid(tc.in, f.Citation) {
					t.Errorf("invalid citation %q", f.Citation)
				}
			}
		})
	}
}

func TestInvestigateUnknownRole(t *testing.T) {
	rep := Investigate("oracle", Input{Context: []string{"no space left on device"}})
	if len(rep.Findings) != 0 {
		t.Fatalf("unknown role produced findings: %+v", rep.Findings)
	}
}

func TestCitationValid(t *testing.T) {
	in := Input{
		Title:       "api errors",
		Description: "5xx at 20%",
		Service:     "api",
		Tags:        map[string]string{"region": "eu-west-1"},
		Metadata:    map[string]any{"p95_ms": 1200.0},
		Context:     []string{"2025-01-01 ERROR   pool   exhausted\n  waiting=40"},
	}
	cases := []struct {
		c    string
		want bool
	}{
		{"ERROR pool exhausted", true},
		{"error   pool\texhausted   waiting=40", false}, // case matters, only whitespace is ignored
		{"ERROR pool exhausted waiting=40", true},
		{"pool exhausted; database melted", false},
		{"api errors", true},
		{"5xx at 20%", true},
		{"title", true},
		{"description", true},
		{"service", true},
		{"environment", false},
		{"tags.region", true},
		{"tags.team", false},
		{"metadata.p95_ms", true},
		{"metadata.p99_ms", false},
		{"context[0]", true},
		{"context[3]", false},
		{"", false},
		{"   ", false},
	}
	for _, tc := range cases {
		if got := CitationValid(in, tc.c); got != tc.want {
			t.Errorf("CitationValid(%q) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestSynthesizeDropsInvalid(t *testing.T) {
	in := Input{Title: "t", Context: []string{"x509: certificate has expired"}}
	reps := []AgentReport{{AgentRole: RoleNetwork, Findings: []Finding{
		{AgentRole: RoleNetwork, Category: CategoryCertificateExpired, Stance: StanceSupports, Strength: 0.9, Citation: "x509: certificate has expired"},
		{AgentRole: RoleNetwork, Category: CategoryDNSFailure, Stance: StanceSupports, Strength: 0.9, Citation: "NXDOMAIN for api.example"},
		{AgentRole: RoleNetwork, Category: "alien_invasion", Stance: StanceSupports, Strength: 0.9, Citation: "title"},
		{AgentRole: "astrology", Category: CategoryDiskFull, Stance: StanceSupports, Strength: 0.9, Citation: "title"},
		{AgentRole: RoleNetwork, Category: CategoryDiskFull, Stance: "maybe", Strength: 0.9, Citation: "title"},
		{AgentRole: RoleNetwork, Category: CategoryDiskFull, Stance: StanceSupports, Strength: 1.5, Citation: "title"},
		{AgentRole: RoleNetwork, Category: CategoryDiskFull, Stance: StanceSupports, Strength: 0.9, Citation: ""},
	}}}
	res := Synthesize(in, reps)
	if res.Dropped != 6 {
		t.Fatalf("dropped %d, want 6", res.Dropped)
	}
	for _, h := range res.Hypotheses {
		if h.Category == CategoryDNSFailure || h.Category == CategoryDiskFull {
			t.Fatalf("dropped finding became hypothesis %+v", h)
		}
	}
}

// TestSynthesizeRefusesAnInventedCulprit: a finding that blames an object
// the input never names is dropped like an uncited claim; one naming an
// object of the input carries its culprit and mechanism into the answer.
func TestSynthesizeRefusesAnInventedCulprit(t *testing.T) {
	line := `Pod shop/checkout-58f6d9c7b4-z9q2m (deployment/checkout) container checkout: waiting ImagePullBackOff: Back-off pulling image "registry.example.com/shop/checkout:2.15.1"`
	in := Input{Title: "Partial Service Unreachability", Gathered: []Excerpt{{Text: line}}}
	finding := func(c Culprit) Finding {
		return Finding{AgentRole: RoleInfrastructure, Category: CategoryImagePullFailure, Stance: StanceSupports, Strength: 0.9, Citation: line,
			Mechanism: "image_not_found", Culprit: &c}
	}
	res := Synthesize(in, []AgentReport{{AgentRole: RoleInfrastructure, Findings: []Finding{finding(Culprit{Kind: KindDeployment, Name: "payments-api", Namespace: "shop"})}}})
	if res.Dropped != 1 || res.Category != CategoryUnknown || res.Culprit != nil {
		t.Fatalf("an invented culprit was kept: dropped %d, %s %v", res.Dropped, res.Category, res.Culprit)
	}
	res = Synthesize(in, []AgentReport{{AgentRole: RoleInfrastructure, Findings: []Finding{finding(Culprit{Kind: KindDeployment, Name: "checkout", Namespace: "shop"})}}})
	if res.Dropped != 0 || res.Category != CategoryImagePullFailure || res.Culprit == nil || res.Culprit.String() != "deployment shop/checkout" ||
		res.Mechanism != "image_not_found" || len(res.Candidates) == 0 || res.Candidates[0].Culprit != res.Culprit || !strings.HasPrefix(res.RootCause, "deployment shop/checkout: ") {
		t.Fatalf("answer: %+v", res)
	}
	res = Synthesize(in, []AgentReport{{AgentRole: RoleInfrastructure, Findings: []Finding{{AgentRole: RoleInfrastructure, Category: CategoryImagePullFailure,
		Stance: StanceSupports, Strength: 0.9, Citation: line, Culprit: &Culprit{Kind: KindChange, Name: "chg_made_up"}}}}})
	if res.Dropped != 1 {
		t.Fatalf("a change no recorded change is was kept: %+v", res)
	}
}

func TestSynthesizeThinEvidenceIsUnknown(t *testing.T) {
	in := Input{Title: "latency blip", Context: []string{"p95 410 ms -> 640 ms for 3 minutes, recovered", "CPU 30%, no errors"}}
	for _, reps := range [][]AgentReport{nil, {{AgentRole: RoleMetrics, Findings: []Finding{
		{AgentRole: RoleMetrics, Category: CategoryCPUSaturation, Stance: StanceSupports, Strength: 0.4, Citation: "p95 410 ms -> 640 ms"},
	}}}} {
		res := Synthesize(in, reps)
		if res.Category != CategoryUnknown || res.Confidence > 0.3 {
			t.Fatalf("got %s %.2f, want unknown <= 0.3", res.Category, res.Confidence)
		}
		if len(res.RecommendedActions) == 0 || res.RootCause == "" {
			t.Fatal("unknown result lacks narrative or actions")
		}
	}
}

func TestSynthesizeNoDecisiveFindingCapsConfidence(t *testing.T) {
	in := Input{Service: "api", Context: []string{"node CPU 96%", "load average: 40 (8 vCPU)", "HPA replicas 10 / max 10"}}
	f := func(role, cite string) Finding {
		return Finding{AgentRole: role, Category: CategoryCPUSaturation, Stance: StanceSupports, Strength: 0.6, Citation: cite}
	}
	reps := []AgentReport{
		{AgentRole: RoleMetrics, Findings: []Finding{f(RoleMetrics, "node CPU 96%")}},
		{AgentRole: RoleInfrastructure, Findings: []Finding{f(RoleInfrastructure, "load average: 40 (8 vCPU)")}},
		{AgentRole: RoleLogs, Findings: []Finding{f(RoleLogs, "HPA replicas 10 / max 10")}},
	}
	res := Synthesize(in, reps)
	if res.Category != CategoryCPUSaturation {
		t.Fatalf("category %s", res.Category)
	}
	if res.Confidence > 0.5 {
		t.Fatalf("confidence %.2f without a decisive finding", res.Confidence)
	}
}

func TestSynthesizeRuledOutAndEvidence(t *testing.T) {
	in := Input{Service: "billing", Context: []string{
		"Lock wait timeout exceeded; try restarting transaction",
		"Innodb_row_lock_current_waits: 0 -> 140",
		"no slow queries, no deploys today",
	}}
	reps := []AgentReport{
		{AgentRole: RoleDatabase, Findings: []Finding{
			{Category: CategoryDBLockContention, Stance: StanceSupports, Strength: 0.85, Citation: "Lock wait timeout exceeded"},
			{Category: CategoryDBSlowQueries, Stance: StanceRefutes, Strength: 0.5, Citation: "no slow queries"},
		}},
		{AgentRole: RoleMetrics, Findings: []Finding{
			{Category: CategoryDBLockContention, Stance: StanceSupports, Strength: 0.75, Citation: "Innodb_row_lock_current_waits: 0 -> 140"},
		}},
		{AgentRole: RoleDeployments, Findings: []Finding{
			{Category: CategoryBadDeployment, Stance: StanceRefutes, Strength: 0.55, Citation: "no deploys today"},
			{Category: "", Stance: StanceSupports, Strength: 0.1, Citation: "no deploys today", Summary: "Nothing shipped."},
		}},
	}
	res := Synthesize(in, reps)
	if res.Category != CategoryDBLockContention || res.Confidence < 0.6 {
		t.Fatalf("got %s %.2f", res.Category, res.Confidence)
	}
	ruled := map[string]bool{}
	for _, h := range res.Hypotheses {
		ruled[h.Category] = h.RuledOut
	}
	if !ruled[CategoryDBSlowQueries] || !ruled[CategoryBadDeployment] || ruled[CategoryDBLockContention] {
		t.Fatalf("ruled out flags wrong: %+v", res.Hypotheses)
	}
	if res.Hypotheses[0].Category != CategoryDBLockContention {
		t.Fatalf("winner not first: %+v", res.Hypotheses)
	}
	var roles []string
	for _, e := range res.Evidence {
		roles = append(roles, e.AgentRole)
		if e.Content == "" {
			t.Fatalf("empty evidence for %s", e.AgentRole)
		}
	}
	// The evidence that decided the answer comes first.
	if !reflect.DeepEqual(roles, []string{RoleDatabase, RoleMetrics, RoleDeployments}) {
		t.Fatalf("evidence roles %v", roles)
	}
	if !strings.Contains(res.RootCause, "Lock wait timeout exceeded") {
		t.Fatalf("root cause does not quote evidence: %s", res.RootCause)
	}
	if !strings.Contains(strings.Join(res.RecommendedActions, " "), "billing") {
		t.Fatalf("actions do not name the service: %v", res.RecommendedActions)
	}
}

// TestEvidenceNamesEachFindingOnce: a finding two agents made, or one agent
// made twice, is one line of one entry naming both agents, led by the agent
// whose finding weighed most.
func TestEvidenceNamesEachFindingOnce(t *testing.T) {
	in := Input{Service: "billing", Context: []string{"FATAL: remaining connection slots are reserved for non-replication superuser connections"}}
	pool := Finding{Category: CategoryDBConnectionExhaustion, Stance: StanceSupports, Summary: "Connection slots are used up.",
		Citation: "remaining connection slots are reserved for non-replication superuser connections"}
	strong, weak := pool, pool
	strong.Strength, weak.Strength = 0.9, 0.6
	res := Synthesize(in, []AgentReport{
		{AgentRole: RoleDatabase, Findings: []Finding{weak, weak}},
		{AgentRole: RoleLogs, Findings: []Finding{strong}},
	})
	var lines int
	for _, e := range res.Evidence {
		lines += strings.Count(e.Content, "Connection slots are used up.")
	}
	if len(res.Evidence) != 1 || lines != 1 {
		t.Fatalf("the finding appears %d times in %d entries: %+v", lines, len(res.Evidence), res.Evidence)
	}
	if e := res.Evidence[0]; e.AgentRole != RoleLogs || !reflect.DeepEqual(e.AgentRoles, []string{RoleLogs, RoleDatabase}) {
		t.Fatalf("entry led by %s, agents %v", e.AgentRole, e.AgentRoles)
	}
}

func TestSynthesizeDeterministic(t *testing.T) {
	in := Input{Service: "web", Context: []string{
		"java.lang.OutOfMemoryError: Java heap space",
		"Reason: OOMKilled",
		"GC time 70% before restart; CPU 98%",
		"No deploys this week.",
	}}
	a := runAll(in)
	for i := 0; i < 5; i++ {
		if b := runAll(in); !reflect.DeepEqual(a, b) {
			t.Fatalf("non-deterministic:\n%+v\n%+v", a, b)
		}
	}
	if a.Category != CategoryMemoryExhaustion {
		t.Fatalf("category %s", a.Category)
	}
}

func TestLoadScenarioRejectsMalformed(t *testing.T) {
	good := `{"id":"x","alert":{"title":"t","description":"d","severity":"high","service":"s","environment":"p","tags":{},"metadata":{}},"context":["c"],"expected":{"category":"disk_full","agents":["infrastructure"],"rationale":"r"}}`
	cases := map[string]string{
		"good":          good,
		"bad json":      `{"id":`,
		"empty id":      strings.Replace(good, `"id":"x"`, `"id":""`, 1),
		"no title":      strings.Replace(good, `"title":"t"`, `"title":""`, 1),
		"no desc":       strings.Replace(good, `"description":"d"`, `"description":" "`, 1),
		"bad category":  strings.Replace(good, `"disk_full"`, `"gremlins"`, 1),
		"bad agent":     strings.Replace(good, `["infrastructure"]`, `["infrastructure","psychic"]`, 1),
		"no agents":     strings.Replace(good, `["infrastructure"]`, `[]`, 1),
		"dup agent":     strings.Replace(good, `["infrastructure"]`, `["logs","logs"]`, 1),
		"unknown field": strings.Replace(good, `"id":"x"`, `"id":"x","extra":1`, 1),
	}
	dir := t.TempDir()
	for name, body := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := LoadScenario(p)
		if name == "good" {
			if err != nil || s.ID != "x" || s.Input().Title != "t" {
				t.Fatalf("good scenario: %v %+v", err, s)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
	if _, err := LoadScenarios(dir); err == nil {
		t.Fatal("LoadScenarios accepted a directory with malformed files")
	}
	if _, err := LoadScenario(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestSelectAgents(t *testing.T) {
	cases := []struct {
		in   Input
		want []string
	}{
		{Input{Severity: "sev1", Title: "anything"}, Roles},
		{Input{Severity: "warning", Title: "p99 latency high"}, []string{RoleLogs, RoleMetrics, RoleNetwork}},
		{Input{Severity: "low", Title: "queue growing", Description: "nothing else"}, []string{RoleLogs, RoleMetrics}},
		{Input{Severity: "high", Title: "Postgres deadlock after deploy", Tags: map[string]string{"k8s": "pod"}},
			[]string{RoleDatabase, RoleDeployments, RoleInfrastructure, RoleLogs, RoleMetrics}},
	}
	for _, tc := range cases {
		if got := SelectAgents(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SelectAgents(%q) = %v, want %v", tc.in.Title, got, tc.want)
		}
	}
}

func TestNormalizeSeverity(t *testing.T) {
	cases := map[string]string{
		"SEV1": "critical", "p1": "critical", "crit": "critical", "Critical": "critical",
		"p2": "high", "error": "high", "major": "high",
		"warning": "medium", "sev-3": "medium",
		"minor": "low", "p4": "low",
		"info": "info", "": "medium", "weird": "medium",
	}
	for in, want := range cases {
		if got := NormalizeSeverity(in, "medium"); got != want {
			t.Errorf("NormalizeSeverity(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidCategoryAndRoles(t *testing.T) {
	if len(Categories) != 23 || !ValidCategory(CategoryUnknown) || ValidCategory("other") {
		t.Fatal("categories wrong")
	}
	if !reflect.DeepEqual(Roles, []string{"database", "deployments", "infrastructure", "logs", "metrics", "network"}) {
		t.Fatal("roles wrong")
	}
}

// TestMechanismOfWords: an answer whose findings name no mechanism takes
// it from the decisive evidence's own words.
func TestMechanismOfWords(t *testing.T) {
	for _, c := range []struct{ cat, cite, want string }{
		{CategoryMemoryExhaustion, "Last State: Terminated, Reason: OOMKilled", "oom_killed"},
		{CategoryMemoryExhaustion, "heap grows 40 MB an hour: a leak in the session cache", "memory_leak"},
		{CategoryCPUSaturation, "nr_throttled 4120 of 5000 periods", "cpu_throttled"},
		{CategoryCPUSaturation, "load average 31.2 on 8 cores", "cpu_overload"},
		{CategoryDiskFull, "No space left on device", MechanismOther},
	} {
		if got := mechanismOfWords(c.cat, c.cite); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.cat, c.cite, got, c.want)
		}
	}
}
