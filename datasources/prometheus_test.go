package datasources

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func testConnector() *Connector {
	return NewConnector(Options{AllowNetworks: loopback, GrantAll: true, QueryTimeout: 10 * time.Second, ResultCap: 16 << 10})
}

var checkout = promlab.Target{Service: "checkout", Namespace: "shop", Endpoint: "https://checkout.shop.example", ConsumerGroup: "checkout-orders"}

// alertScope is the scope of an Alertmanager alert on checkout in shop that
// started ten minutes ago.
func alertScope(now time.Time) Scope {
	return ScopeOf(Alert{Provider: "alertmanager", Service: "checkout",
		Tags:     map[string]string{"alertname": "CheckoutDegraded", "namespace": "shop"},
		Metadata: map[string]any{"startsAt": now.Add(-10 * time.Minute).Format(time.RFC3339)}}, now, 0)
}

// runPlan plans every agent's queries of one source and runs them against
// the real server, returning the readings by plan entry.
func runPlan(t *testing.T, c *Connector, cfg Config, sc Scope) map[string]Result {
	t.Helper()
	p := Plan([]Source{{ID: cfg.ID, Name: cfg.Name, Type: cfg.Type, URL: cfg.URL, Settings: cfg.Settings}}, sc, analyzer.Roles, 100)
	if len(p.Queries) == 0 {
		t.Fatalf("nothing planned: %v", p.Notes)
	}
	out := map[string]Result{}
	for _, q := range p.Queries {
		res, err := c.Run(context.Background(), cfg, q)
		if err != nil {
			t.Fatalf("%s: %v\nquery: %s", q.Entry, err, q.Text)
		}
		out[q.Entry] = res
	}
	return out
}

func only(t *testing.T, res map[string]Result, entry string) analyzer.Reading {
	t.Helper()
	rs := res[entry].Readings
	if len(rs) != 1 {
		t.Fatalf("%s: %d readings, want 1: %+v", entry, len(rs), rs)
	}
	return rs[0]
}

func near(got, want, tolerance float64) bool {
	return math.Abs(got-want) <= tolerance*math.Abs(want)+1e-9
}

func TestPrometheusReadsAScenarioFromARealServer(t *testing.T) {
	series := promlab.MemoryExhaustion(checkout)
	// The same service in another namespace must be left out: the alert's
	// namespace label narrows every query.
	series = append(series, promlab.Series{Metric: "container_memory_working_set_bytes",
		Labels: map[string]string{"namespace": "staging", "pod": "checkout-aaa-bbb", "container": "checkout"},
		Value:  func(time.Duration) float64 { return 5 }})
	srv := testenv.Prometheus(t, series)
	c := testConnector()
	cfg, err := c.Prepare(context.Background(), Spec{Name: "prom", Type: TypePrometheus, URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds_prom"
	res := runPlan(t, c, cfg, alertScope(time.Now()))

	mem := only(t, res, "memory_usage")
	if !near(mem.Value, 0.995*(1<<30), 0.02) || mem.Limit != 1<<30 || mem.Labels["pod"] != "checkout-7d9f8c6b5-x2k4q" || mem.Labels["namespace"] != "shop" {
		t.Errorf("memory reading %+v, want a peak near 0.995 GiB of a 1 GiB limit in shop", mem)
	}
	if oom := only(t, res, "oom_kills"); !near(oom.Value, 2, 0.02) {
		t.Errorf("oom kills %v, want 2", oom.Value)
	}
	if term := only(t, res, "last_terminated"); term.Labels["reason"] != "OOMKilled" {
		t.Errorf("last termination %+v, want OOMKilled", term)
	}
	if thr := only(t, res, "cpu_throttling"); !near(thr.Value, 0.005, 0.05) {
		t.Errorf("throttling %v, want 0.005", thr.Value)
	}
	if cpu := only(t, res, "cpu_usage"); !near(cpu.Value, 0.2, 0.05) || cpu.Limit != 2 {
		t.Errorf("cpu %+v, want 0.2 of 2 cores", cpu)
	}
	if fs := only(t, res, "inodes_free"); fs.Value != 5_800_000 || fs.Limit != 6_553_600 {
		t.Errorf("inodes %+v", fs)
	}
	if errs := only(t, res, "http_error_ratio"); !near(errs.Value, 0.05/50.05, 0.05) {
		t.Errorf("error ratio %v", errs.Value)
	}
	if cert := only(t, res, "probe_cert_expiry"); time.Unix(int64(cert.Value), 0).Before(time.Now().Add(59 * 24 * time.Hour)) {
		t.Errorf("cert expiry %v, want two months ahead", cert.Value)
	}
	if lag := only(t, res, "kafka_consumer_lag"); lag.Value != 44 || lag.Baseline == nil || *lag.Baseline != 44 {
		t.Errorf("lag %+v, want a steady 44", lag)
	}
	if hr := only(t, res, "redis_hit_ratio"); !near(hr.Value, 0.95, 0.01) {
		t.Errorf("hit ratio %v", hr.Value)
	}
	if len(res["volume_free"].Readings) != 0 || res["volume_free"].Note == "" {
		t.Errorf("a plan entry with no matching series should say so: %+v", res["volume_free"])
	}
	for entry, r := range res {
		for _, rd := range r.Readings {
			if rd.Line == "" || rd.At.IsZero() {
				t.Errorf("%s: reading without a line or time: %+v", entry, rd)
			}
		}
	}
}

func TestServiceMatchingFollowsTheExporters(t *testing.T) {
	v := func(x float64) func(time.Duration) float64 { return func(time.Duration) float64 { return x } }
	series := []promlab.Series{
		{Metric: "redis_up", Labels: map[string]string{"app": "cart", "instance": "a"}, Value: v(1)},
		{Metric: "redis_up", Labels: map[string]string{"app_kubernetes_io_name": "cart", "instance": "b"}, Value: v(1)},
		{Metric: "redis_up", Labels: map[string]string{"job": "cart", "instance": "c"}, Value: v(1)},
		{Metric: "redis_up", Labels: map[string]string{"pod": "cart-5f6d-abc", "instance": "d"}, Value: v(1)},
		{Metric: "redis_up", Labels: map[string]string{"team_service": "cart", "instance": "e"}, Value: v(1)},
		{Metric: "redis_up", Labels: map[string]string{"app": "cartography", "instance": "f"}, Value: v(0)},
		{Metric: "redis_up", Labels: map[string]string{"app": "cart", "cluster": "eu-2", "instance": "g"}, Value: v(0)},
	}
	srv := testenv.Prometheus(t, series)
	c := testConnector()
	now := time.Now()
	sc := ScopeOf(Alert{Service: "cart", Tags: map[string]string{"cluster": "eu-1"}, CreatedAt: now.Add(-5 * time.Minute)}, now, 0)
	instances := func(settings map[string]any) []string {
		cfg := Config{ID: "ds", Name: "p", Type: TypePrometheus, URL: srv.URL, Settings: settings}
		res := runPlan(t, c, cfg, sc)
		var got []string
		for _, r := range res["redis_up"].Readings {
			got = append(got, r.Labels["instance"])
		}
		return got
	}
	// service/app/app_kubernetes_io_name/job/container or a pod named after
	// the service; a series in another cluster than the alert's is left out,
	// one that carries no cluster label is not.
	if got := strings.Join(sortedStrings(instances(nil)), ","); got != "a,b,c,d" {
		t.Errorf("default matching found %s, want a,b,c,d", got)
	}
	if got := strings.Join(sortedStrings(instances(map[string]any{"serviceLabel": "team_service"})), ","); got != "d,e" {
		t.Errorf("serviceLabel matching found %s, want d,e", got)
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestPrometheusAuthTestAndFailures(t *testing.T) {
	srv := testenv.Prometheus(t, promlab.Healthy(checkout))
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var sawToken string
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawToken = r.Header.Get("Authorization")
		if sawToken != "Bearer s3cret-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer guarded.Close()
	c := testConnector()

	msg, err := c.Test(context.Background(), Config{Type: TypePrometheus, URL: guarded.URL, Auth: Auth{BearerToken: "s3cret-token"}})
	if err != nil || !strings.Contains(msg, "Prometheus 2.") {
		t.Fatalf("test with the token: %q, %v", msg, err)
	}
	_, err = c.Test(context.Background(), Config{Type: TypePrometheus, URL: guarded.URL, Auth: Auth{BearerToken: "wrong"}})
	if !errors.Is(err, ErrDenied) || !Permanent(err) {
		t.Fatalf("wrong token: %v, want a permanent ErrDenied", err)
	}

	q := Plan([]Source{{ID: "ds", Type: TypePrometheus, URL: srv.URL}}, alertScope(time.Now()), []string{analyzer.RoleMetrics}, 10).Queries[0]
	bad := q
	bad.Text = "sum(("
	if _, err := c.Run(context.Background(), Config{Type: TypePrometheus, URL: srv.URL}, bad); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("bad PromQL: %v, want ErrBadQuery", err)
	}

	down := "http://" + testenv.ClosedPort(t)
	_, err = c.Run(context.Background(), Config{Type: TypePrometheus, URL: down}, q)
	if err == nil || Permanent(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("a source that is down: %v, want a retryable connection refused", err)
	}

	strict := NewConnector(Options{})
	if _, err := strict.Run(context.Background(), Config{Type: TypePrometheus, URL: srv.URL}, q); !Permanent(err) || !errors.Is(err, ErrBlocked) {
		t.Fatalf("loopback outside the allowed networks: %v, want a permanent ErrBlocked", err)
	}
}
