package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/replay"
)

// liveNow is the moment the live cases' systems are read; the replay moves
// it to the moment each pass runs. The alerts fire eight minutes before.
var liveNow = time.Date(2026, 11, 30, 3, 20, 0, 0, time.UTC)

// series is one Prometheus series over the 40 minutes before liveNow, a
// sample a minute, its value at m minutes before now given by at.
func series(metric string, labels map[string]string, at func(m float64) float64) replay.Series {
	s := replay.Series{Metric: metric, Labels: labels}
	for m := 40; m >= 0; m-- {
		s.Samples = append(s.Samples, replay.Sample{At: liveNow.Add(-time.Duration(m) * time.Minute), Value: at(float64(m))})
	}
	return s
}

func flat(v float64) func(float64) float64 { return func(float64) float64 { return v } }

// counter is a cumulative counter growing by rate(m) a second.
func counter(rate func(m float64) float64) func(float64) float64 {
	return func(m float64) float64 {
		total := 1e6
		for x := 40.0; x > m; x-- {
			total += 60 * rate(x)
		}
		return total
	}
}

// after is a before b from the onset (eight minutes before now) on.
func after(a, b float64) func(float64) float64 {
	return func(m float64) float64 {
		if m <= 8 {
			return b
		}
		return a
	}
}

func labels(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// amAlert is an alert as the Alertmanager webhook turns it into an
// incident: the service from the rule's service label, else its job; the
// other labels as tags; the rule's expression in generatorURL.
func amAlert(title, service, expr string, tags map[string]string) analyzer.ScenarioAlert {
	return analyzer.ScenarioAlert{Title: title, Description: title, Severity: "critical", Service: service, Environment: "production", Tags: tags,
		Metadata: map[string]any{"startsAt": liveNow.Add(-8 * time.Minute).Format(time.RFC3339),
			"generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=" + url.QueryEscape(expr) + "&g0.tab=1"}}
}

func logLines(lbl map[string]string, lines ...string) replay.LogStream {
	st := replay.LogStream{Labels: lbl}
	for i, l := range lines {
		st.Lines = append(st.Lines, replay.LogLine{At: liveNow.Add(-7*time.Minute + time.Duration(i)*20*time.Second), Text: l})
	}
	return st
}

// liveCase is one case of the live-data set and the category it is.
func liveCase(id, category string, al analyzer.ScenarioAlert) replay.Scenario {
	now := liveNow
	s := replay.Scenario{AlertSource: "alertmanager", Now: &now}
	s.ID, s.Alert = id, al
	s.Expected = analyzer.Expected{Category: category, Agents: []string{analyzer.RoleMetrics}}
	return s
}

const gib = 1 << 30

// nodeFS is node_exporter's filesystem series of one mount, free going from
// start to end (shares of 500 GiB) over the window.
func nodeFS(instance, mount string, start, end float64) []replay.Series {
	l := labels("instance", instance, "job", "node", "device", "/dev/nvme1n1", "fstype", "ext4", "mountpoint", mount)
	return []replay.Series{
		series("node_filesystem_size_bytes", l, flat(500*gib)),
		series("node_filesystem_avail_bytes", l, func(m float64) float64 { return 500 * gib * (end + (start-end)*m/40) }),
		series("node_filesystem_files", l, flat(32e6)),
		series("node_filesystem_files_free", l, flat(30e6)),
	}
}

// cadvisor is the CPU and memory series of one container: CPU use against
// a quota of quota cores, the share of CFS periods throttled, memory
// against its limit.
func cadvisor(ns, pod, container string, cores, quota, throttled, mem, memLimit float64) []replay.Series {
	l := labels("namespace", ns, "pod", pod, "container", container, "image", "registry.example.com/"+container+":1.0", "job", "kubelet",
		"id", "/kubepods/burstable/pod-"+pod+"/"+container, "name", container, "instance", "10.0.3.7:10250")
	return []replay.Series{
		series("container_cpu_usage_seconds_total", l, counter(flat(cores))),
		series("container_spec_cpu_quota", l, flat(quota*100000)),
		series("container_spec_cpu_period", l, flat(100000)),
		series("container_cpu_cfs_periods_total", l, counter(flat(10))),
		series("container_cpu_cfs_throttled_periods_total", l, counter(flat(10*throttled))),
		series("container_memory_working_set_bytes", l, flat(mem)),
		series("container_spec_memory_limit_bytes", l, flat(memLimit)),
	}
}

// blackbox is blackbox_exporter's series of one probed target.
func blackbox(target string, success, status float64, certLeft time.Duration) []replay.Series {
	l := labels("instance", target, "job", "blackbox")
	return []replay.Series{
		series("probe_success", l, flat(success)),
		series("probe_http_status_code", l, flat(status)),
		series("probe_ip_protocol", l, flat(4)),
		series("probe_ssl_earliest_cert_expiry", l, flat(float64(liveNow.Add(certLeft).Unix()))),
	}
}

// kafkaLag is kafka_exporter's lag of one consumer group's partitions.
func kafkaLag(group, topic string, lag func(m float64) float64) []replay.Series {
	var out []replay.Series
	for p := 0; p < 3; p++ {
		out = append(out, series("kafka_consumergroup_lag", labels("consumergroup", group, "topic", topic, "partition", fmt.Sprint(p),
			"instance", "kafka-exporter:9308", "job", "kafka-exporter"), lag))
	}
	return out
}

// liveCases is the live-data development set: the series, clusters and logs
// are as the standard exporters, the Kubernetes API and a log agent give
// them; every alert is as its usual rule labels it.
func liveCases() []replay.Scenario {
	var out []replay.Scenario

	// A filesystem of the alert's own instance fills up; node_exporter
	// knows the host, not the service the rule names.
	disk := liveCase("live-disk-by-instance", analyzer.CategoryDiskFull, amAlert("Filesystem has less than 3% space left.", "orders-db",
		`(node_filesystem_avail_bytes{job="node",fstype!=""} / node_filesystem_size_bytes{job="node",fstype!=""} * 100 < 3 and node_filesystem_readonly{job="node",fstype!=""} == 0)`,
		labels("alertname", "NodeFilesystemAlmostOutOfSpace", "instance", "db-3.internal:9100", "job", "node", "device", "/dev/nvme1n1", "fstype", "ext4", "mountpoint", "/var/lib/postgresql")))
	disk.Series = append(append(nodeFS("db-3.internal:9100", "/var/lib/postgresql", 0.3, 0.02), nodeFS("db-3.internal:9100", "/", 0.7, 0.7)...), nodeFS("db-4.internal:9100", "/var/lib/postgresql", 0.6, 0.6)...)
	out = append(out, disk)

	// Decoy: another host's disk is full; the alert's pod is throttled.
	cpu := liveCase("live-disk-decoy-other-host", analyzer.CategoryCPUSaturation, amAlert("Processes experience elevated CPU throttling.", "",
		`sum(increase(container_cpu_cfs_throttled_periods_total{container!=""}[5m])) by (container, pod, namespace) / sum(increase(container_cpu_cfs_periods_total[5m])) by (container, pod, namespace) > (25 / 100)`,
		labels("alertname", "CPUThrottlingHigh", "namespace", "shop", "pod", "catalog-6b7c9d5f4-x2k4q", "container", "catalog")))
	cpu.Series = append(cadvisor("shop", "catalog-6b7c9d5f4-x2k4q", "catalog", 0.99, 1, 0.62, 300<<20, 1<<30), nodeFS("batch-2.internal:9100", "/data", 0.2, 0.01)...)
	out = append(out, cpu)

	// The alert's probe target presents a certificate that expired.
	cert := liveCase("live-blackbox-cert-expired", analyzer.CategoryCertificateExpired, amAlert("Probe failed", "blackbox", `probe_success == 0`,
		labels("alertname", "BlackboxProbeFailed", "instance", "https://pay.example.com/healthz")))
	cert.Series = append(blackbox("https://pay.example.com/healthz", 0, 0, -3*time.Hour), blackbox("https://shop.example.com/", 1, 200, 60*24*time.Hour)...)
	out = append(out, cert)

	// Decoy: the alert's probe target is healthy, another's certificate
	// expired; search's own dependency refuses it.
	search := liveCase("live-blackbox-decoy-healthy-target", analyzer.CategoryUpstreamDependency, amAlert("search answers 5xx", "search",
		`sum(rate(http_requests_total{service="search",code=~"5.."}[5m])) / sum(rate(http_requests_total{service="search"}[5m])) > 0.05`,
		labels("alertname", "SearchHighErrorRate", "instance", "https://search.example.com/")))
	search.Series = append(blackbox("https://search.example.com/", 1, 200, 60*24*time.Hour), blackbox("https://legacy.example.com/", 0, 0, -5*time.Hour)...)
	search.Series = append(search.Series,
		series("http_requests_total", labels("service", "search", "code", "200", "method", "GET", "handler", "/search", "job", "search"), counter(flat(120))),
		series("http_requests_total", labels("service", "search", "code", "503", "method", "GET", "handler", "/search", "job", "search"), counter(after(0, 40))))
	search.Logs = []replay.LogStream{logLines(labels("service_name", "search", "namespace", "web", "pod", "search-7c8d9f6b5-h7r2k", "container", "search"),
		`level=error ts=2026-11-30T03:13:02Z msg="ranking call failed" err="Post \"http://ranking.web.svc:8080/v1/rank\": dial tcp 10.96.14.20:8080: connect: connection refused"`,
		`level=error ts=2026-11-30T03:13:22Z msg="ranking call failed" err="Post \"http://ranking.web.svc:8080/v1/rank\": dial tcp 10.96.14.20:8080: connect: connection refused"`,
		`level=error ts=2026-11-30T03:13:42Z msg="request failed" status=503 path=/search upstream=ranking`)}
	out = append(out, search)

	// The alert's consumer group falls behind; another keeps up.
	lag := liveCase("live-kafka-lag", analyzer.CategoryQueueBacklog, amAlert("Consumer group lag is high", "kafka-exporter",
		`sum by (consumergroup, topic) (kafka_consumergroup_lag) > 10000`,
		labels("alertname", "KafkaConsumerGroupLagHigh", "consumergroup", "invoice-writer", "topic", "invoices", "instance", "kafka-exporter:9308")))
	lag.Series = append(kafkaLag("invoice-writer", "invoices", func(m float64) float64 { return 20 + 12000*(40-m)/40 }), kafkaLag("audit-sink", "audit", flat(12))...)
	out = append(out, lag)

	// Decoy: the alert's consumer group is healthy, another lags; the
	// service's database refuses connections.
	pool := liveCase("live-kafka-decoy-healthy-group", analyzer.CategoryDBConnectionExhaustion, amAlert("ledger-sync is slow", "ledger-sync",
		`histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service="ledger-sync"}[5m]))) > 2`,
		labels("alertname", "LedgerSyncLatencyHigh", "consumergroup", "ledger-projector")))
	pool.Series = append(kafkaLag("ledger-projector", "ledger", flat(8)), kafkaLag("audit-sink", "audit", func(m float64) float64 { return 50 + 9000*(40-m)/40 })...)
	pool.Logs = []replay.LogStream{logLines(labels("service_name", "ledger-sync", "namespace", "ledger", "pod", "ledger-sync-58d9c7b6f4-p9m3z"),
		`{"level":"error","ts":"2026-11-30T03:12:40Z","msg":"acquire connection","error":"failed to connect to `+"`"+`host=pg-ledger user=ledger database=ledger`+"`"+`: server error (FATAL: sorry, too many clients already (SQLSTATE 53300))"}`,
		`{"level":"error","ts":"2026-11-30T03:13:00Z","msg":"acquire connection","error":"failed to connect to `+"`"+`host=pg-ledger user=ledger database=ledger`+"`"+`: server error (FATAL: remaining connection slots are reserved for non-replication superuser connections (SQLSTATE 53300))"}`)}
	out = append(out, pool)

	// A rollout whose new pods alone crash, behind kube-state-metrics'
	// alert (its job became the service).
	w := clusterlab.NewWorld(liveNow)
	clusterlab.RolloutCrashLoop(w)
	rollout := liveCase("live-bad-rollout", analyzer.CategoryBadDeployment, amAlert("Pod is crash looping.", "kube-state-metrics",
		`max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff", job="kube-state-metrics"}[5m]) >= 1`,
		labels("alertname", "KubePodCrashLooping", "namespace", "shop", "pod", "checkout-5f4c7b9d8-z9q2m", "container", "checkout", "reason", "CrashLoopBackOff")))
	rollout.Kubernetes = &replay.Cluster{Objects: w.Objects()}
	podLog := func(pod string) map[string]string {
		return labels("namespace", "shop", "pod", pod, "container", "checkout", "app", "checkout", "service_name", "checkout")
	}
	rollout.Logs = []replay.LogStream{
		logLines(podLog("checkout-5f4c7b9d8-z9q2m"), `{"level":"info","msg":"starting checkout","version":"2.15.0"}`,
			`panic: runtime error: invalid memory address or nil pointer dereference`, `[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x9a4f2c]`,
			`goroutine 1 [running]:`, `main.(*pricing).load(0x0)`),
		logLines(podLog("checkout-7d9f8c6b5-x2k4q"), `{"level":"info","msg":"request served","path":"/checkout","status":200,"version":"2.14.0"}`)}
	out = append(out, rollout)

	// Decoy: cart's pods were OOM-killed for 25 minutes before a rollout.
	w = clusterlab.NewWorld(liveNow)
	clusterlab.OOMWithLaterRollout(w)
	oom := liveCase("live-rollout-after-onset", analyzer.CategoryMemoryExhaustion, amAlert("Pod is crash looping.", "kube-state-metrics",
		`max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff", job="kube-state-metrics"}[5m]) >= 1`,
		labels("alertname", "KubePodCrashLooping", "namespace", "shop", "pod", "cart-5b8c9d7f6-x2k4q", "container", "cart")))
	oom.Alert.Metadata["startsAt"] = liveNow.Add(-24 * time.Minute).Format(time.RFC3339)
	oom.Kubernetes = &replay.Cluster{Objects: w.Objects()}
	out = append(out, oom)

	// The alert's Redis is down; the other one is up.
	redis := liveCase("live-redis-down", analyzer.CategoryCacheFailure, amAlert("Redis down", "redis", `redis_up == 0`,
		labels("alertname", "RedisDown", "instance", "redis-sessions:6379")))
	redis.Series = []replay.Series{series("redis_up", labels("instance", "redis-sessions:6379", "job", "redis"), after(1, 0)),
		series("redis_up", labels("instance", "redis-cache:6379", "job", "redis"), flat(1))}
	out = append(out, redis)

	// A latency alert that fired for two minutes on a healthy service.
	healthy := liveCase("live-healthy", analyzer.CategoryUnknown, amAlert("catalog p99 latency high", "catalog",
		`histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service="catalog"}[5m]))) > 0.5`,
		labels("alertname", "CatalogLatencyHigh", "namespace", "shop", "pod", "catalog-6b7c9d5f4-x2k4q")))
	healthy.Series = append(cadvisor("shop", "catalog-6b7c9d5f4-x2k4q", "catalog", 0.2, 1, 0.01, 300<<20, 1<<30),
		series("http_requests_total", labels("service", "catalog", "code", "200", "job", "catalog"), counter(flat(80))))
	out = append(out, healthy)
	return out
}

// TestLiveDataIsAnsweredFromItsSeries runs the live-data development set
// through the real pipeline: series backfilled into a real Prometheus,
// clusters through the Kubernetes API replay, logs through Loki. Every case
// is answered in its category, and every fault's answer cites a data-source query that
// supports it: the disk of the alert's own instance, the certificate of its
// probe target, the lag of its consumer group, the rollout its pods came
// from. The decoys hold the fault next door (a full disk on another host, a
// healthy probe target beside an expired one, a healthy consumer group
// beside a lagging one, a rollout after the onset), and it is not blamed.
func TestLiveDataIsAnsweredFromItsSeries(t *testing.T) {
	if _, _, err := promlab.Binaries(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	commandEnv(t, t.TempDir())
	cases := liveCases()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env, stop, err := startEval(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, s := range cases {
		r, err := evalScenario(ctx, env, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		t.Logf("%s: %s %.2f (%s)", s.ID, r.got, r.confidence, r.culprit)
		if r.got != r.expected {
			t.Errorf("%s: answered %s %.2f, labelled %s\n%s", s.ID, r.got, r.confidence, r.expected, r.why)
			continue
		}
		if r.expected == analyzer.CategoryUnknown {
			continue
		}
		inv, err := env.a.Store.LatestInvestigation(ctx, r.tenantID, r.incidentID)
		if err != nil {
			t.Fatal(err)
		}
		cited := false
		for _, e := range inv.Evidence {
			if e.Source != nil && e.Source.Kind == analyzer.SourceDataSource && e.Source.Query != "" && strings.Contains(e.Content, "[supports "+r.expected+"]") {
				cited = true
			}
		}
		if !cited {
			t.Errorf("%s: %s answered without a data-source query supporting it: %+v", s.ID, r.got, inv.Evidence)
		}
	}
}
