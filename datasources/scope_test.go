package datasources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
)

var scopeNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestScopeFromAlerts(t *testing.T) {
	cases := []struct {
		name      string
		alert     Alert
		service   string
		labels    map[string]string
		onset     time.Time
		endpoints []string
	}{
		{
			name: "alertmanager labels, startsAt and the generator's matchers",
			alert: Alert{Provider: "alertmanager", Service: "checkout",
				Tags: map[string]string{"alertname": "HighErrorRate", "namespace": "shop", "pod": "checkout-1", "severity_ignored": ""},
				Metadata: map[string]any{"startsAt": "2026-05-01T11:50:00.123Z",
					"generatorURL": `http://prom:9090/graph?g0.expr=sum%28rate%28http_requests_total%7Bjob%3D%22checkout%22%2Ccode%3D~%225..%22%2Ccluster%3D%22eu-1%22%7D%5B5m%5D%29%29+%3E+1&g0.tab=1`}},
			service: "checkout",
			labels:  map[string]string{"namespace": "shop", "pod": "checkout-1", "cluster": "eu-1"},
			onset:   time.Date(2026, 5, 1, 11, 50, 0, 123e6, time.UTC),
		},
		{
			name: "the generator names the service the alert lacks",
			alert: Alert{Provider: "grafana", Metadata: map[string]any{
				"generatorURL": `http://prom/graph?g0.expr=up%7Bapp%3D%22cart%22%7D+%3D%3D+0`}, CreatedAt: scopeNow.Add(-3 * time.Minute)},
			service: "cart",
			labels:  map[string]string{},
			onset:   scopeNow.Add(-3 * time.Minute),
		},
		{
			name: "datadog tags become Prometheus labels; its date is epoch milliseconds",
			alert: Alert{Provider: "datadog", Service: "api",
				Tags:     map[string]string{"kube_namespace": "prod", "monitor": ""},
				Metadata: map[string]any{"date": "1777636500000", "scope": "pod_name:api-5,kube_cluster_name:eu"}},
			service: "api",
			labels: map[string]string{"namespace": "prod", "kube_namespace": "prod", "pod": "api-5", "pod_name": "api-5",
				"cluster": "eu", "kube_cluster_name": "eu"},
			onset: time.UnixMilli(1777636500000).UTC(),
		},
		{
			name: "cloudwatch dimensions and StateChangeTime",
			alert: Alert{Provider: "sns", Service: "orders-db",
				Tags:     map[string]string{"DBInstanceIdentifier": "orders-1", "Region": "us-east-1"},
				Metadata: map[string]any{"StateChangeTime": "2026-05-01T11:45:00.000+0000"}},
			service: "orders-db",
			labels:  map[string]string{"DBInstanceIdentifier": "orders-1", "dimension_DBInstanceIdentifier": "orders-1", "Region": "us-east-1"},
			onset:   time.Date(2026, 5, 1, 11, 45, 0, 0, time.UTC),
		},
		{
			name: "a blackbox alert names the endpoint it probes",
			alert: Alert{Provider: "alertmanager", Service: "payments",
				Tags: map[string]string{"instance": "https://pay.example.com/health", "job": "blackbox"}, CreatedAt: scopeNow},
			service:   "payments",
			labels:    map[string]string{"instance": "https://pay.example.com/health", "job": "blackbox"},
			onset:     scopeNow,
			endpoints: []string{"https://pay.example.com/health"},
		},
		{
			name:    "an onset in the future is not believed",
			alert:   Alert{Service: "x", Metadata: map[string]any{"startsAt": "2027-01-01T00:00:00Z"}, CreatedAt: scopeNow.Add(-time.Minute)},
			service: "x",
			labels:  map[string]string{},
			onset:   scopeNow.Add(-time.Minute),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := ScopeOf(c.alert, scopeNow, 0)
			if sc.Service != c.service || !reflect.DeepEqual(sc.Labels, c.labels) || !sc.Onset.Equal(c.onset) || !reflect.DeepEqual(sc.Endpoints, c.endpoints) {
				t.Fatalf("got service %q labels %v onset %s endpoints %v\nwant %q %v %s %v", sc.Service, sc.Labels, sc.Onset, sc.Endpoints, c.service, c.labels, c.onset, c.endpoints)
			}
			if !sc.End.Equal(scopeNow) || !sc.Start.Equal(c.onset.Add(-30*time.Minute)) {
				t.Fatalf("window %s – %s, want 30 min before the onset to now", sc.Start, sc.End)
			}
		})
	}
	old := ScopeOf(Alert{Service: "x", CreatedAt: scopeNow.Add(-72 * time.Hour)}, scopeNow, 0)
	if old.End.Sub(old.Start) != 24*time.Hour {
		t.Fatalf("a days-old onset: window %s, want the last 24 h", old.End.Sub(old.Start))
	}
}

func TestRenderPromQLEscapesAndNarrows(t *testing.T) {
	sc := Scope{Service: `we"ird.svc`, Labels: map[string]string{"namespace": "a.b"}, Start: scopeNow.Add(-40 * time.Minute), End: scopeNow}
	got := renderPromQL(PlanEntry{Query: `sum(<<increase(x{$S}[$W])>>)`}, sc, "team")
	want := `sum((increase(x{team="we\"ird.svc", namespace=~"a\\.b|"}[2400s]) or increase(x{pod=~"we\"ird\\.svc-.+", namespace=~"a\\.b|"}[2400s])))`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestExporterSeriesBelongByTheAlertsOwnLabels: a host-level exporter's
// series carry the host, the consumer group or the probe's target, not the
// service, so the alert's own value of those labels is a way to belong; a
// series of another host never is.
func TestExporterSeriesBelongByTheAlertsOwnLabels(t *testing.T) {
	queries := func(a Alert) map[string]string {
		sc := ScopeOf(a, scopeNow, 0)
		out := map[string]string{}
		qs, _ := planPrometheus(Source{ID: "ds", Name: "prom", Type: TypePrometheus}, sc, []string{analyzer.RoleMetrics, analyzer.RoleInfrastructure, analyzer.RoleNetwork, analyzer.RoleDatabase})
		for _, q := range qs {
			out[q.Entry] = q.Text
		}
		return out
	}
	disk := queries(Alert{Provider: "alertmanager", Service: "orders-db", Tags: map[string]string{"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "db-3:9100", "job": "node", "mountpoint": "/var/lib/postgresql"}})
	fs := disk["filesystem_free"]
	for _, want := range []string{`node_filesystem_avail_bytes{fstype!~"tmpfs|overlay|squashfs", instance="db-3:9100", job=~"node|", mountpoint=~"/var/lib/postgresql|"}`,
		`node_filesystem_avail_bytes{fstype!~"tmpfs|overlay|squashfs", mountpoint="/var/lib/postgresql", instance=~"db-3:9100|", job=~"node|"}`,
		`service="orders-db"`} {
		if !strings.Contains(fs, want) {
			t.Errorf("filesystem query lacks %s:\n%s", want, fs)
		}
	}
	if strings.Contains(fs, `instance=~".*"`) || strings.Contains(fs, `instance="`+"db-4") {
		t.Errorf("another host belongs: %s", fs)
	}

	lag := queries(Alert{Provider: "alertmanager", Tags: map[string]string{"alertname": "KafkaConsumerGroupLagHigh", "consumergroup": "invoice-writer", "topic": "invoices"}})
	if len(lag) != 1 || !strings.Contains(lag["kafka_consumer_lag"], `kafka_consumergroup_lag{consumergroup="invoice-writer", topic=~"invoices|"}`) {
		t.Fatalf("an alert naming only a consumer group plans %v", lag)
	}
	probe := queries(Alert{Provider: "alertmanager", Tags: map[string]string{"alertname": "BlackboxProbeFailed", "instance": "https://pay.example.com/healthz", "module": "http_2xx"}})
	if !strings.Contains(probe["probe_cert_expiry"], `probe_ssl_earliest_cert_expiry{instance="https://pay.example.com/healthz"}`) || probe["filesystem_free"] == "" {
		t.Fatalf("a probe target's alert plans %v", probe)
	}
	if strings.Contains(probe["memory_usage"], "instance") {
		t.Fatalf("an instance scopes a container query: %s", probe["memory_usage"])
	}

	// A namespace identifies the containers of an alert that names nothing
	// else; beside a service or a pod it only narrows.
	ns := queries(Alert{Provider: "alertmanager", Tags: map[string]string{"alertname": "KubeQuotaAlmostFull", "namespace": "shop"}})
	if !strings.Contains(ns["memory_usage"], `container_memory_working_set_bytes{container!="", container!="POD", namespace="shop"}`) {
		t.Fatalf("a namespace-only alert: %s", ns["memory_usage"])
	}
	svc := queries(Alert{Provider: "alertmanager", Service: "checkout", Tags: map[string]string{"namespace": "shop"}})
	if strings.Contains(svc["memory_usage"], `namespace="shop"`) {
		t.Fatalf("a service's alert reads its whole namespace: %s", svc["memory_usage"])
	}
	// node_exporter's own CPU counters, on the alert's host. The rule's
	// expression (node_load5 / count(node_cpu_seconds_total{mode="idle"}))
	// puts mode="idle" among the alert's labels; the entry's own mode
	// matcher decides that label, or the query reads nothing.
	load := queries(Alert{Provider: "alertmanager", Service: "catalog", Tags: map[string]string{"alertname": "NodeLoadHigh", "instance": "api-7:9100", "job": "node"},
		Metadata: map[string]any{"generatorURL": `http://prometheus:9090/graph?g0.expr=node_load5%7Bjob%3D%22node%22%7D+%2F+on+%28instance%29+count+by+%28instance%29+%28node_cpu_seconds_total%7Bmode%3D%22idle%22%7D%29+%3E+2`}})
	cpu := load["host_cpu_usage"]
	if !strings.Contains(cpu, `node_cpu_seconds_total{mode!~"idle|iowait|steal", instance="api-7:9100", job=~"node|"}`) ||
		!strings.Contains(cpu, `node_cpu_seconds_total{mode="idle", instance="api-7:9100", job=~"node|"`) {
		t.Errorf("host CPU of the alert's instance:\n%s", cpu)
	}
	if busy, _, _ := strings.Cut(cpu, `"reading", "value"`); strings.Contains(busy, `mode=~"idle|"`) {
		t.Errorf("the alert's mode contradicts the entry's own matcher:\n%s", cpu)
	}
	if !strings.Contains(load["host_memory_usage"], `node_memory_MemAvailable_bytes{instance="api-7:9100"`) {
		t.Errorf("host memory of the alert's instance:\n%s", load["host_memory_usage"])
	}
	// A label the entry writes that the alert's value satisfies still
	// narrows: one container of a pod.
	one := queries(Alert{Provider: "alertmanager", Service: "checkout", Tags: map[string]string{"container": "sidecar", "pod": "checkout-5c6b7d8f9-l2mzn"}})
	if !strings.Contains(one["memory_usage"], `container=~"sidecar|"`) {
		t.Errorf("the alert's container no longer narrows:\n%s", one["memory_usage"])
	}
	if none := queries(Alert{Provider: "alertmanager", Tags: map[string]string{"alertname": "Watchdog"}}); len(none) != 0 {
		t.Fatalf("an alert naming nothing plans %v", none)
	}
}

func TestPlanMergesSharedQueriesAndKeepsToTheBudget(t *testing.T) {
	sc := Scope{Service: "checkout", Start: scopeNow.Add(-time.Hour), End: scopeNow}
	srcs := []Source{{ID: "ds_b", Name: "pg", Type: TypePostgres, URL: "postgres://u@db/app"}, {ID: "ds_a", Name: "prom", Type: TypePrometheus, URL: "http://prom"}}
	p := Plan(srcs, sc, []string{analyzer.RoleInfrastructure, analyzer.RoleMetrics, analyzer.RoleDatabase}, 0)
	if p.Queries[0].DataSourceID != "ds_a" || p.Queries[len(p.Queries)-1].DataSourceID != "ds_b" {
		t.Fatalf("sources must run in id order")
	}
	for _, q := range p.Queries {
		if q.Entry == "memory_usage" && !reflect.DeepEqual(q.Roles, []string{analyzer.RoleInfrastructure, analyzer.RoleMetrics}) {
			t.Fatalf("memory is read by infrastructure and metrics: %v", q.Roles)
		}
		if q.Entry == "probe_success" {
			t.Fatalf("a network query was planned for agents that do not read it")
		}
		if q.Step != 30*time.Second && q.Type == TypePrometheus {
			t.Fatalf("step %s, want 30s for an hour", q.Step)
		}
	}
	cut := Plan(srcs, sc, analyzer.Roles, 5)
	if len(cut.Queries) != 5 || !strings.Contains(strings.Join(cut.Notes, ";"), "at most 5") {
		t.Fatalf("budget of 5: %d queries, notes %v", len(cut.Queries), cut.Notes)
	}
	none := Plan(srcs[1:], Scope{}, analyzer.Roles, 0)
	if len(none.Queries) != 0 || !strings.Contains(none.Notes[0], "names no service") {
		t.Fatalf("no service: %+v", none)
	}
}

func TestPrepareRefusesBadInputNamingTheField(t *testing.T) {
	c := testConnector()
	strict := NewConnector(Options{})
	cases := []struct {
		c     *Connector
		spec  Spec
		field string
	}{
		{c, Spec{Type: TypePrometheus, URL: "http://127.0.0.1:9090"}, "name"},
		{c, Spec{Name: "g", Type: "graphite", URL: "http://127.0.0.1:8080"}, "type"},
		{c, Spec{Name: "k", Type: TypeKubernetes, URL: "https://127.0.0.1:6443", Settings: map[string]any{"namespace": "Not_A_Namespace"}}, "settings.namespace"},
		{c, Spec{Name: "k", Type: TypeKubernetes, URL: "https://127.0.0.1:6443", Settings: map[string]any{"kubeconfig": "x"}}, "settings.kubeconfig"},
		{c, Spec{Name: "e", Type: TypeElasticsearch, URL: "http://127.0.0.1:9200", Settings: map[string]any{"serviceField": "a b"}}, "settings.serviceField"},
		{c, Spec{Name: "l", Type: TypeLoki, URL: "http://127.0.0.1:3100/?x=1"}, "url"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "ftp://127.0.0.1"}, "url"},
		{c, Spec{Name: "p", Type: TypePrometheus}, "url"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://u:pw@127.0.0.1:9090"}, "url"},
		{strict, Spec{Name: "p", Type: TypePrometheus, URL: "http://127.0.0.1:9090"}, "url"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://169.254.169.254/"}, "url"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Auth: &Auth{Username: "admin"}}, "auth.password"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Auth: &Auth{Password: "x"}}, "auth.username"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Auth: &Auth{}}, "auth"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Auth: &Auth{BearerToken: "t", Headers: map[string]string{"X-A": "b"}}}, "auth"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Auth: &Auth{Headers: map[string]string{"Bad Header": "b"}}}, "auth.headers"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Settings: map[string]any{"serviceLabel": "not a label"}}, "settings.serviceLabel"},
		{c, Spec{Name: "p", Type: TypePrometheus, URL: "http://localhost:9090", Settings: map[string]any{"step": 5}}, "settings.step"},
		{c, Spec{Name: "d", Type: TypePostgres, URL: "mysql://localhost/db"}, "url"},
		{c, Spec{Name: "d", Type: TypePostgres, URL: "postgres://u@localhost/db?host=10.0.0.1"}, "url"},
		{c, Spec{Name: "d", Type: TypePostgres, URL: "postgres://localhost/db"}, "url"},
		{c, Spec{Name: "d", Type: TypePostgres, URL: "postgres://u:p@localhost/db", Auth: &Auth{Username: "u", Password: "p"}}, "auth"},
		{c, Spec{Name: "d", Type: TypePostgres, URL: "postgres://u@localhost/db", Auth: &Auth{BearerToken: "t"}}, "auth"},
		{c, Spec{Name: "e", Type: TypeProbe, Settings: map[string]any{"targets": "x"}}, "settings.targets"},
		{c, Spec{Name: "e", Type: TypeProbe, Settings: map[string]any{"targets": []any{"ok.example:443", "ftp://x"}}}, "settings.targets[1]"},
		{c, Spec{Name: "e", Type: TypeProbe, Auth: &Auth{BearerToken: "t"}}, "auth"},
	}
	for _, tc := range cases {
		_, err := tc.c.Prepare(context.Background(), tc.spec)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: got %v, want a refusal naming %s", tc.spec, err, tc.field)
		}
	}
	ok, err := c.Prepare(context.Background(), Spec{Name: " prom ", Type: TypePrometheus, URL: "http://localhost:9090/",
		Auth: &Auth{Headers: map[string]string{"X-Scope-OrgID": "acme"}}, Settings: map[string]any{"serviceLabel": "app"}})
	if err != nil || ok.Name != "prom" || ok.URL != "http://localhost:9090" || ok.Auth.Headers["X-Scope-OrgID"] != "acme" {
		t.Fatalf("a good source: %+v, %v", ok, err)
	}
}

// TestQueryPlansAreDocumented keeps docs/query-plans.md in step with Plans:
// every entry and every metric it reads is named there.
func TestQueryPlansAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "query-plans.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, e := range Plans {
		if !strings.Contains(text, "`"+e.ID+"`") {
			t.Errorf("plan entry %s (%s) is not in docs/query-plans.md", e.ID, e.Type)
		}
		if e.Type == TypeKubernetes {
			for _, path := range strings.Fields(e.Query) {
				tail := path[strings.LastIndexByte(path, '/')+1:]
				if !strings.Contains(text, "`"+path+"`") && !strings.Contains(text, "`…/"+tail+"`") {
					t.Errorf("path %s of %s is not in docs/query-plans.md", path, e.ID)
				}
			}
		}
		if e.Type == TypePrometheus {
			row := docRow(text, e.ID)
			for _, l := range e.Identity {
				if !strings.Contains(row, "`"+l+"`") {
					t.Errorf("docs/query-plans.md's row of %s does not say it is matched by %s", e.ID, l)
				}
			}
			for _, m := range metricNames(e.Query) {
				if !strings.Contains(text, m) {
					t.Errorf("metric %s of %s is not in docs/query-plans.md", m, e.ID)
				}
			}
		}
	}
}

// docRow is the row of docs/query-plans.md's Prometheus table that documents
// entry id (the one with a "matched by" cell).
func docRow(doc, id string) string {
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "| `"+id+"` |") && strings.Count(l, " | ") == 4 {
			return l
		}
	}
	return ""
}

// metricNames are the series a PromQL template selects.
func metricNames(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return r == '(' || r == ' ' || r == '<' || r == '>' || r == ')' }) {
		if i := strings.IndexByte(f, '{'); i > 0 && strings.Contains(f[:i], "_") {
			out = append(out, f[:i])
		}
	}
	return out
}

// TestRDSInstancesScopeTheirQueries: an alert naming an RDS instance and its
// replica, with no service, gets the CloudWatch queries matched by the
// instances (as YACE labels the dimension) and the RDS log lines naming
// them; nothing else is planned for lack of a service.
func TestRDSInstancesScopeTheirQueries(t *testing.T) {
	now := time.Date(2026, 3, 28, 13, 20, 0, 0, time.UTC)
	sc := ScopeOf(Alert{Provider: "grafana", Tags: map[string]string{"db_instance_identifier": "reporting-prod", "read_replica": "reporting-prod-replica-1",
		"db_instance": "reporting-prod", "alertname": "RDSReplicaLagCritical"}, CreatedAt: now}, now, 0)
	if len(sc.DBInstances) != 2 || sc.DBInstances[0] != "reporting-prod" || sc.DBInstances[1] != "reporting-prod-replica-1" {
		t.Fatalf("instances: %v", sc.DBInstances)
	}
	p := Plan([]Source{{ID: "m", Name: "metrics", Type: TypePrometheus}, {ID: "l", Name: "logs", Type: TypeLoki}}, sc, analyzer.Roles, 100)
	var entries []string
	for _, q := range p.Queries {
		entries = append(entries, q.Entry)
		if !strings.Contains(q.Text, `reporting-prod|reporting-prod-replica-1`) {
			t.Errorf("%s: not scoped to the instances: %s", q.Entry, q.Text)
		}
	}
	if got := strings.Join(entries, ","); got != "rds_events,rds_cpu,rds_load_cpu_share,rds_free_storage,rds_replica_lag,rds_connections,rds_write_latency" {
		t.Fatalf("entries: %s", got)
	}
	if q := p.Queries[1].Text; !strings.Contains(q, `aws_rds_cpuutilization_average{dimension_DBInstanceIdentifier=~"reporting-prod|reporting-prod-replica-1"}`) {
		t.Fatalf("rds_cpu: %s", q)
	}
	sns := ScopeOf(Alert{Provider: "sns", Tags: map[string]string{"DBInstanceIdentifier": "orders-prod"}, CreatedAt: now}, now, 0)
	if len(sns.DBInstances) != 1 || sns.DBInstances[0] != "orders-prod" {
		t.Fatalf("a CloudWatch alarm's dimension: %v", sns.DBInstances)
	}
	if bad := ScopeOf(Alert{Tags: map[string]string{"db_instance": `x"} or vector(1) #`}, CreatedAt: now}, now, 0); len(bad.DBInstances) != 0 {
		t.Fatalf("an identifier RDS would refuse: %v", bad.DBInstances)
	}
}
