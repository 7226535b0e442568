package promlab

import (
	"time"
)

// A scenario is a service's series under the standard exporters: cAdvisor,
// kube-state-metrics, node_exporter, blackbox_exporter, postgres_exporter,
// redis_exporter, kafka_exporter and HTTP RED metrics. Healthy is a service
// with nothing wrong; each problem scenario is Healthy with the series of one
// failing mechanism replaced, so a test sees the problem among normal noise.

// Target names the service a scenario is about and where it runs.
type Target struct {
	Service   string
	Namespace string
	// Endpoint is the URL blackbox_exporter probes.
	Endpoint string
	// ConsumerGroup is the service's Kafka consumer group.
	ConsumerGroup string
}

func (t Target) pod() string { return t.Service + "-7d9f8c6b5-x2k4q" }

func (t Target) container() map[string]string {
	return map[string]string{"namespace": t.Namespace, "pod": t.pod(), "container": t.Service, "job": "kubelet", "instance": "10.0.3.17:10250"}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func constant(v float64) func(time.Duration) float64 { return func(time.Duration) float64 { return v } }

// counter grows at rate per second, switching to rate2 for the last `since`.
func counter(rate, rate2 float64, since, span time.Duration) func(time.Duration) float64 {
	return func(ago time.Duration) float64 {
		elapsed := (span - ago).Seconds()
		switchAt := (span - since).Seconds()
		if elapsed <= switchAt {
			return rate * elapsed
		}
		return rate*switchAt + rate2*(elapsed-switchAt)
	}
}

// ramp goes linearly from a to b over the last `over`, flat at a before.
func ramp(a, b float64, over time.Duration) func(time.Duration) float64 {
	return func(ago time.Duration) float64 {
		if ago >= over {
			return a
		}
		return a + (b-a)*float64(over-ago)/float64(over)
	}
}

// step is a before `since` ago and b after.
func step(a, b float64, since time.Duration) func(time.Duration) float64 {
	return func(ago time.Duration) float64 {
		if ago > since {
			return a
		}
		return b
	}
}

// span is how far back scenarios are written (Options.Span default).
const span = 90 * time.Minute

const gib = 1 << 30

// Healthy is t's series with nothing wrong: memory at a third of its limit,
// no throttling, roomy disks, probes passing with a certificate valid for
// months, few database connections, a warm cache and a steady consumer lag.
func Healthy(t Target) []Series {
	c := t.container()
	svc := map[string]string{"service": t.Service}
	node := map[string]string{"service": t.Service, "job": "node", "instance": "node-3:9100", "device": "/dev/nvme1n1", "mountpoint": "/var/lib/" + t.Service, "fstype": "ext4"}
	probe := map[string]string{"service": t.Service, "job": "blackbox", "instance": t.Endpoint}
	pg := with(svc, "job", "postgres", "instance", "pg-1:9187")
	redis := with(svc, "job", "redis", "instance", "redis-1:9121")
	kafka := with(svc, "job", "kafka-exporter", "instance", "kafka-exporter:9308", "consumergroup", t.ConsumerGroup, "topic", "orders")
	http := with(svc, "job", t.Service, "method", "GET")
	return []Series{
		{Metric: "container_memory_working_set_bytes", Labels: c, Value: constant(0.35 * gib)},
		{Metric: "container_spec_memory_limit_bytes", Labels: c, Value: constant(1 * gib)},
		{Metric: "container_oom_events_total", Labels: c, Value: constant(0)},
		{Metric: "kube_pod_container_status_restarts_total", Labels: with(c, "job", "kube-state-metrics", "instance", "ksm:8080"), Value: constant(0)},
		{Metric: "container_cpu_usage_seconds_total", Labels: c, Value: counter(0.2, 0.2, 0, span)},
		{Metric: "container_cpu_cfs_periods_total", Labels: c, Value: counter(10, 10, 0, span)},
		{Metric: "container_cpu_cfs_throttled_periods_total", Labels: c, Value: counter(0.05, 0.05, 0, span)},
		{Metric: "container_spec_cpu_quota", Labels: c, Value: constant(200000)},
		{Metric: "container_spec_cpu_period", Labels: c, Value: constant(100000)},
		{Metric: "node_filesystem_avail_bytes", Labels: node, Value: constant(61 * gib)},
		{Metric: "node_filesystem_size_bytes", Labels: node, Value: constant(100 * gib)},
		{Metric: "node_filesystem_files_free", Labels: node, Value: constant(5_800_000)},
		{Metric: "node_filesystem_files", Labels: node, Value: constant(6_553_600)},
		{Metric: "http_requests_total", Labels: with(http, "code", "200"), Value: counter(50, 50, 0, span)},
		{Metric: "http_requests_total", Labels: with(http, "code", "500"), Value: counter(0.05, 0.05, 0, span)},
		{Metric: "probe_success", Labels: probe, Value: constant(1)},
		{Metric: "probe_ip_protocol", Labels: probe, Value: constant(4)},
		{Metric: "probe_ssl_earliest_cert_expiry", Labels: probe, Value: constant(float64(time.Now().Add(60 * 24 * time.Hour).Unix()))},
		{Metric: "pg_stat_database_numbackends", Labels: with(pg, "datname", "app"), Value: constant(18)},
		{Metric: "pg_settings_max_connections", Labels: pg, Value: constant(200)},
		{Metric: "redis_up", Labels: redis, Value: constant(1)},
		{Metric: "redis_evicted_keys_total", Labels: redis, Value: constant(0)},
		{Metric: "redis_keyspace_hits_total", Labels: redis, Value: counter(950, 950, 0, span)},
		{Metric: "redis_keyspace_misses_total", Labels: redis, Value: counter(50, 50, 0, span)},
		{Metric: "kafka_consumergroup_lag", Labels: with(kafka, "partition", "0"), Value: constant(20)},
		{Metric: "kafka_consumergroup_lag", Labels: with(kafka, "partition", "1"), Value: constant(24)},
	}
}

// replace swaps the series of the named metrics for those given.
func replace(base []Series, repl ...Series) []Series {
	names := map[string]bool{}
	for _, r := range repl {
		names[r.Metric] = true
	}
	out := make([]Series, 0, len(base)+len(repl))
	for _, s := range base {
		if !names[s.Metric] {
			out = append(out, s)
		}
	}
	return append(out, repl...)
}

// MemoryExhaustion: the working set climbs to its limit over the last 20
// minutes; the container is OOM-killed twice and restarted.
func MemoryExhaustion(t Target) []Series {
	c := t.container()
	ksm := with(c, "job", "kube-state-metrics", "instance", "ksm:8080")
	return replace(Healthy(t),
		Series{Metric: "container_memory_working_set_bytes", Labels: c, Value: ramp(0.4*gib, 0.995*gib, 20*time.Minute)},
		Series{Metric: "container_oom_events_total", Labels: c, Value: step(0, 2, 8*time.Minute)},
		Series{Metric: "kube_pod_container_status_restarts_total", Labels: ksm, Value: step(0, 2, 8*time.Minute)},
		Series{Metric: "kube_pod_container_status_last_terminated_reason", Labels: with(ksm, "reason", "OOMKilled"), Value: step(0, 1, 8*time.Minute)},
	)
}

// CPUThrottling: for the last 20 minutes the container uses its whole CPU
// limit and two thirds of its CFS periods are throttled.
func CPUThrottling(t Target) []Series {
	c := t.container()
	return replace(Healthy(t),
		Series{Metric: "container_cpu_usage_seconds_total", Labels: c, Value: counter(0.3, 1.98, 20*time.Minute, span)},
		Series{Metric: "container_cpu_cfs_throttled_periods_total", Labels: c, Value: counter(0.05, 6.5, 20*time.Minute, span)},
	)
}

// InodeExhaustion: the service's volume runs out of inodes while bytes stay
// plentiful, as with millions of small files.
func InodeExhaustion(t Target) []Series {
	node := map[string]string{"service": t.Service, "job": "node", "instance": "node-3:9100", "device": "/dev/nvme1n1", "mountpoint": "/var/lib/" + t.Service, "fstype": "ext4"}
	return replace(Healthy(t),
		Series{Metric: "node_filesystem_files_free", Labels: node, Value: ramp(900_000, 37, 25*time.Minute)},
	)
}

// CertificateExpired: the endpoint's certificate expired yesterday and the
// blackbox probe has failed since.
func CertificateExpired(t Target) []Series {
	probe := map[string]string{"service": t.Service, "job": "blackbox", "instance": t.Endpoint}
	expired := float64(time.Now().Add(-26 * time.Hour).Unix())
	return replace(Healthy(t),
		Series{Metric: "probe_ssl_earliest_cert_expiry", Labels: probe, Value: constant(expired)},
		Series{Metric: "probe_success", Labels: probe, Value: step(1, 0, 20*time.Minute)},
	)
}

// ConsumerLag: the consumer group falls behind, its lag growing from a few
// hundred messages to tens of thousands over the last 25 minutes.
func ConsumerLag(t Target) []Series {
	kafka := map[string]string{"service": t.Service, "job": "kafka-exporter", "instance": "kafka-exporter:9308", "consumergroup": t.ConsumerGroup, "topic": "orders"}
	return replace(Healthy(t),
		Series{Metric: "kafka_consumergroup_lag", Labels: with(kafka, "partition", "0"), Value: ramp(150, 41000, 25*time.Minute)},
		Series{Metric: "kafka_consumergroup_lag", Labels: with(kafka, "partition", "1"), Value: ramp(170, 39500, 25*time.Minute)},
	)
}
