package opensre

import (
	"context"
	"maps"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/replay"
)

const vendored = "../../cmd/causeway/testdata/opensre"

func caseOf(t *testing.T, suite, id string) Case {
	t.Helper()
	cases, err := Load(filepath.Join(vendored, suite))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %s/%s", suite, id)
	return Case{}
}

// TestLoadReadsBothSuites: the parent folder gives all 29 cases, each a
// snapshot with a now, an alert the format accepts and an answer key.
func TestLoadReadsBothSuites(t *testing.T) {
	cases, err := Load(vendored)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range cases {
		count[c.Suite]++
		s := c.Scenario
		if s.Now == nil || !s.Snapshot() || s.Alert.Title == "" || s.Alert.Description == "" || c.Answer.Category == "" {
			t.Errorf("%s: now %v, snapshot %t, alert %+v, answer %+v", s.ID, s.Now, s.Snapshot(), s.Alert, c.Answer)
		}
		for k := range answerKey {
			if _, ok := s.Alert.Metadata[k]; ok {
				t.Errorf("%s: the generator's %s reached the alert", s.ID, k)
			}
			if _, ok := s.Alert.Tags[k]; ok {
				t.Errorf("%s: the generator's %s reached the tags", s.ID, k)
			}
		}
	}
	if count["eks"] != 14 || count["rds_postgres"] != 15 {
		t.Fatalf("cases per suite: %v", count)
	}
}

// serve runs the snapshot's cluster and logs moved to now, and plans the
// pass's queries over them as a pass does: the alert's scope, every role.
func serve(t *testing.T, s replay.Scenario, now time.Time) (*datasources.Connector, []datasources.Config, datasources.Planned) {
	t.Helper()
	shift := now.Sub(*s.Now)
	conn := datasources.NewConnector(datasources.Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, GrantAll: true, QueryTimeout: 10 * time.Second})
	var cfgs []datasources.Config
	var srcs []datasources.Source
	add := func(ds datasources.Spec) {
		cfg, err := conn.Prepare(context.Background(), ds)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ID = "ds-" + cfg.Type
		cfgs = append(cfgs, cfg)
		srcs = append(srcs, datasources.Source{ID: cfg.ID, Name: cfg.Name, Type: cfg.Type, URL: cfg.URL, Settings: cfg.Settings})
	}
	if s.Kubernetes != nil {
		api, err := clusterlab.NewKubeAPI("token", s.Kubernetes.Objects, shift)
		if err != nil {
			t.Fatal(err)
		}
		ks := clusterlab.ServeKube(api)
		t.Cleanup(ks.Close)
		add(datasources.Spec{Name: "cluster", Type: datasources.TypeKubernetes, URL: ks.URL, Auth: &datasources.Auth{BearerToken: "token"},
			Settings: map[string]any{"caBundle": ks.CABundle}})
	}
	if len(s.Logs) > 0 {
		srv := httptest.NewServer(clusterlab.NewLoki("", s.LogStreams(shift)))
		t.Cleanup(srv.Close)
		add(datasources.Spec{Name: "logs", Type: datasources.TypeLoki, URL: srv.URL})
	}
	a := s.Alert
	sc := datasources.ScopeOf(datasources.Alert{Provider: s.AlertSource, Service: a.Service, Tags: a.Tags, Metadata: a.Metadata,
		Description: a.Description, CreatedAt: now}, now, 0)
	return conn, cfgs, datasources.Plan(srcs, sc, analyzer.Roles, 100)
}

func run(t *testing.T, conn *datasources.Connector, cfgs []datasources.Config, plan datasources.Planned) map[string]datasources.Result {
	t.Helper()
	out := map[string]datasources.Result{}
	for _, q := range plan.Queries {
		for _, cfg := range cfgs {
			if cfg.ID != q.DataSourceID {
				continue
			}
			res, err := conn.Run(context.Background(), cfg, q)
			if err != nil {
				t.Fatalf("%s: %v", q.Entry, err)
			}
			out[q.Entry] = res
		}
	}
	return out
}

// TestEKSCaseReadsThroughCausewaysClients: the OOM crash-loop case's objects,
// served by the API replay, come back through Causeway's own kubernetes
// client as the fixture states them: the looping pod's restarts, waiting
// reason and last termination, its ReplicaSet's revision, its events in the
// window.
func TestEKSCaseReadsThroughCausewaysClients(t *testing.T) {
	c := caseOf(t, "eks", "001-oomkilled-crashloop")
	now := time.Now().UTC().Truncate(time.Second)
	conn, cfgs, plan := serve(t, c.Scenario, now)
	res := run(t, conn, cfgs, plan)
	var looping *analyzer.Reading
	for i, r := range res["pods"].Readings {
		if r.Labels["pod"] == "payments-api-7f9dd8b6c4-x7gr9" {
			looping = &res["pods"].Readings[i]
		}
	}
	if len(res["pods"].Readings) != 3 || looping == nil || looping.Value != 8 || looping.Labels["waiting"] != "CrashLoopBackOff" ||
		looping.Labels["reason"] != "OOMKilled" || looping.Labels["exit_code"] != "137" || looping.Labels["replicaset"] != "payments-api-7f9dd8b6c4" {
		t.Fatalf("pods: %+v", res["pods"].Readings)
	}
	rollouts := res["rollouts"].Readings
	if len(rollouts) != 1 || rollouts[0].Value != 1 || rollouts[0].Labels["replicaset"] != "payments-api-7f9dd8b6c4" || rollouts[0].Labels["ready"] != "2/3" {
		t.Fatalf("rollouts: %+v", rollouts)
	}
	// The BackOff event ended 10 s before now; the FailedMount one, days
	// before, is out of the window.
	events := analyzer.ReadingsText(res["events"].Readings)
	if !strings.Contains(events, "Warning BackOff Pod/payments-api-7f9dd8b6c4-x7gr9") || strings.Contains(events, "FailedMount") {
		t.Fatalf("events: %s", events)
	}
}

// TestEKSLogsAreLabelledAsShippersLabelThem: container lines carry the
// labels Promtail's kubernetes-pods job and Loki give them, so Causeway's
// log query finds the DNS case's errors by the alert's service; kubelet and
// control-plane lines carry their shippers' labels.
func TestEKSLogsAreLabelledAsShippersLabelThem(t *testing.T) {
	c := caseOf(t, "eks", "006-dns-resolution-failure")
	pod := map[string]string{"namespace": "payments", "pod": "payments-api-7f9dd8b6c4-x7gr9", "container": "payments-api", "app": "payments-api",
		"job": "payments/payments-api", "node_name": "ip-10-0-1-42.us-east-1.compute.internal", "service_name": "payments-api"}
	if !slices.ContainsFunc(c.Scenario.Logs, func(l replay.LogStream) bool { return maps.Equal(l.Labels, pod) }) {
		t.Fatalf("no stream labelled %v: %+v", pod, c.Scenario.Logs)
	}
	now := time.Now().UTC().Truncate(time.Second)
	conn, cfgs, plan := serve(t, c.Scenario, now)
	res := run(t, conn, cfgs, plan)
	if lines := res["error_lines"].Text; !strings.Contains(lines, "payments-api-7f9dd8b6c4-x7gr9: Error: getaddrinfo ENOTFOUND postgres.production.svc.cluster.local") {
		t.Fatalf("error lines: %q", lines)
	}

	streams := caseOf(t, "eks", "008-deployment-rollout-stuck").Scenario.Logs
	kubelet := map[string]string{"job": "systemd-journal", "unit": "kubelet.service", "hostname": "ip-10-0-1-42.us-east-1.compute.internal", "service_name": "systemd-journal"}
	control := map[string]string{"log_group": "/aws/eks/payments-prod-eks/cluster", "log_type": "cloudwatch", "promtail": "lambda-promtail", "service_name": "unknown_service"}
	for _, want := range []map[string]string{kubelet, control} {
		if !slices.ContainsFunc(streams, func(l replay.LogStream) bool { return maps.Equal(l.Labels, want) }) {
			t.Errorf("no stream labelled %v", want)
		}
	}
	// The pod's own log covers 10:30:01; Datadog's copies of it are not
	// added again, and `kubectl logs` annotations are no lines.
	for _, l := range streams {
		if l.Labels["pod"] == "payments-api-newrs-7c-001" {
			for _, line := range l.Lines {
				if strings.HasPrefix(line.Text, "[payments-api]") || strings.HasPrefix(line.Text, "[container") || strings.HasPrefix(line.Text, "[kubelet") {
					t.Errorf("line %q", line.Text)
				}
			}
			if len(l.Lines) != 4 {
				t.Errorf("pod log lines: %+v", l.Lines)
			}
		}
	}
}

// TestRDSCaseIsYACESeriesAndAnEventStream: CloudWatch metrics become YACE's
// series, Performance Insights' load becomes DBLoad and its CPU and non-CPU
// split, and RDS events become the EventBridge events lambda-promtail
// ships.
func TestRDSCaseIsYACESeriesAndAnEventStream(t *testing.T) {
	for _, tc := range []struct{ ns, metric, stat, want string }{
		{"AWS/RDS", "CPUUtilization", "Average", "aws_rds_cpuutilization_average"},
		{"AWS/RDS", "FreeStorageSpace", "Minimum", "aws_rds_free_storage_space_minimum"},
		{"AWS/RDS", "ReadIOPS", "Average", "aws_rds_read_iops_average"},
		{"AWS/RDS", "MaximumUsedTransactionIDs", "Maximum", "aws_rds_maximum_used_transaction_ids_maximum"},
		{"AWS/RDS", "ReadLatency", "p99", "aws_rds_read_latency_p99"},
		{"AWS/RDS", "DBLoad", "Average", "aws_rds_dbload_average"},
		{"AWS/RDS", "DBLoadNonCPU", "Average", "aws_rds_dbload_non_cpu_average"},
		{"AWS/ElastiCache", "CPUUtilization", "Average", "aws_elasticache_cpuutilization_average"},
	} {
		if got := YACEName(tc.ns, tc.metric, tc.stat); got != tc.want {
			t.Errorf("YACEName(%s, %s, %s) = %s, want %s", tc.ns, tc.metric, tc.stat, got, tc.want)
		}
	}
	c := caseOf(t, "rds_postgres", "002-connection-exhaustion")
	s := c.Scenario
	byName := map[string]replay.Series{}
	for _, st := range s.Series {
		byName[st.Metric+"/"+st.Labels["dimension_DBInstanceIdentifier"]] = st
	}
	conns := byName["aws_rds_database_connections_maximum/payments-prod"]
	wantLabels := map[string]string{"name": "arn:aws:rds:us-east-1:123456789012:db:payments-prod", "dimension_DBInstanceIdentifier": "payments-prod",
		"region": "us-east-1", "account_id": "123456789012"}
	if !maps.Equal(conns.Labels, wantLabels) || len(conns.Samples) != 15 || !conns.Samples[0].At.Equal(time.Date(2026, 3, 26, 11, 50, 0, 0, time.UTC)) {
		t.Fatalf("connections series: %+v", conns)
	}
	load, cpu, nonCPU := byName["aws_rds_dbload_average/payments-prod"], byName["aws_rds_dbload_cpu_average/payments-prod"], byName["aws_rds_dbload_non_cpu_average/payments-prod"]
	if len(load.Samples) != 15 || load.Samples[0].Value != 2.8 {
		t.Fatalf("db load: %+v", load)
	}
	// CPU waits are 0.7 of the window's 7.2 average active sessions.
	if d := cpu.Samples[0].Value - 2.8*0.7/7.2; d > 1e-9 || d < -1e-9 || nonCPU.Samples[0].Value+cpu.Samples[0].Value-2.8 > 1e-9 {
		t.Fatalf("db load split: cpu %+v, non-cpu %+v", cpu.Samples[0], nonCPU.Samples[0])
	}
	if len(s.Logs) != 1 || !maps.Equal(s.Logs[0].Labels, map[string]string{"log_group": "/aws/events/rds", "log_type": "cloudwatch", "promtail": "lambda-promtail", "service_name": "unknown_service"}) ||
		len(s.Logs[0].Lines) != 2 || !strings.Contains(s.Logs[0].Lines[1].Text, `"Message":"Application clients reported`) {
		t.Fatalf("event stream: %+v", s.Logs)
	}
	if !s.Now.Equal(time.Date(2026, 3, 26, 12, 6, 0, 0, time.UTC)) {
		t.Fatalf("now %v, want the last event's time", s.Now)
	}
}

// tableRow is a row of docs/opensre.md's mapping table, finerRow one of its
// finer names' table.
var (
	tableRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| (.+) \\| `([a-z_]+)` \\|$")
	finerRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|$")
)

// TestMappingTableMatchesTheDocs: the table in docs/opensre.md and Mappings
// are the same rows, every Causeway category and mechanism has its row,
// and the finer names' table is FinerNames.
func TestMappingTableMatchesTheDocs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "opensre.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc []Mapping
	finer := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if m := finerRow.FindStringSubmatch(line); m != nil {
			for _, part := range strings.Split(m[2], ", ") {
				finer[m[1]] = append(finer[m[1]], strings.Trim(part, "`"))
			}
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[2] == "—" {
			doc = append(doc, Mapping{Category: m[1], OpenSRE: m[3]})
			continue
		}
		var mechs []string
		for _, part := range strings.Split(m[2], ", ") {
			mechs = append(mechs, strings.Trim(part, "`"))
		}
		doc = append(doc, Mapping{Category: m[1], Mechanisms: mechs, OpenSRE: m[3]})
	}
	if len(doc) != len(Mappings) {
		t.Fatalf("docs have %d rows, Mappings %d", len(doc), len(Mappings))
	}
	for i := range doc {
		if doc[i].Category != Mappings[i].Category || doc[i].OpenSRE != Mappings[i].OpenSRE || !slices.Equal(doc[i].Mechanisms, Mappings[i].Mechanisms) {
			t.Errorf("row %d: docs %+v, code %+v", i, doc[i], Mappings[i])
		}
	}
	for _, cat := range analyzer.Categories {
		if OpenSRECategory(cat, "") == "unknown" && cat != analyzer.CategoryUnknown {
			t.Errorf("category %s has no row", cat)
		}
		for _, mech := range analyzer.Mechanisms[cat] {
			found := false
			for _, m := range Mappings {
				found = found || (m.Category == cat && (m.Mechanisms == nil || slices.Contains(m.Mechanisms, mech)))
			}
			if !found {
				t.Errorf("%s/%s has no row", cat, mech)
			}
		}
	}
	if OpenSRECategory(analyzer.CategorySchedulingFailure, "node_selector_mismatch") != "configuration_error" ||
		OpenSRECategory(analyzer.CategorySchedulingFailure, "") != "resource_exhaustion" ||
		OpenSRECategory(analyzer.CategoryImagePullFailure, analyzer.MechanismOther) != "configuration_error" {
		t.Error("mechanism rows are not applied")
	}
	if len(finer) != len(FinerNames) {
		t.Fatalf("finer names: docs %v, code %v", finer, FinerNames)
	}
	for name, cats := range FinerNames {
		if !slices.Equal(finer[name], cats) {
			t.Errorf("finer name %s: docs %v, code %v", name, finer[name], cats)
		}
	}
	a := Answer{Category: "resource_exhaustion", ForbiddenCategories: []string{"cpu_saturation", "healthy"}}
	if !a.Forbidden(analyzer.CategoryCPUSaturation, "") || a.Forbidden(analyzer.CategoryDiskFull, "") || !a.Accepts("resource_exhaustion") {
		t.Error("forbidden or accepted answers misjudged")
	}
}
