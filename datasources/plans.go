package datasources

import (
	"github.com/causeway/causeway/analyzer"
)

// PlanEntry is one query of the plan: which agents read it, which kind of
// source answers it, the query, and the signal its readings carry. The plan
// is data, documented for users in docs/query-plans.md (a test keeps the two
// in step), so what Causeway asks of a tenant's systems is never hidden in code.
//
// Prometheus queries are written once for every service. `$S` stands for the
// service's label matchers; a part between `<<` and `>>` is repeated once per
// way a series can belong to the service (its service, app,
// app_kubernetes_io_name, job or container label, or a pod named after it)
// and the repetitions are joined with `or`. `$W` is the length of the window.
// A query that measures a value against a limit returns both, told apart by a
// `reading` label ("value" or "limit"), so the one query a reader re-runs
// shows both numbers.
type PlanEntry struct {
	ID     string
	Type   string
	Agents []string
	Signal string
	// What names the measurement in a reading's line; {label} stands for
	// the series' value of that label.
	What string
	Unit string
	// Query is PromQL (with the placeholders above), SQL, or a probe kind.
	Query string
	// Reduce picks a series' reading from its points over the window: "max",
	// "min" or "last"; a Baseline is the first point when Trend is set.
	Reduce string
	Trend  bool
	// Source names the exporter or view the query reads, for the docs.
	Source string
	// Identity are the labels the exporter gives a series to name what it
	// measures (a host's instance and mountpoint, a consumer group, a probe's
	// target, a pod). A series that carries the alert's own value of one of
	// them belongs to the alert whatever its service labels say: a host-level
	// exporter knows the host, not the service on it.
	Identity []string
}

// Reductions of PlanEntry.Reduce.
const (
	ReduceMax  = "max"
	ReduceMin  = "min"
	ReduceLast = "last"
)

// withLimit builds a query returning a value and the limit it is measured
// against, labelled apart.
func withLimit(value, limit string) string {
	return `label_replace(` + value + `, "reading", "value", "", "") or label_replace(` + limit + `, "reading", "limit", "", "")`
}

var (
	metricsInfra  = []string{analyzer.RoleInfrastructure, analyzer.RoleMetrics}
	metricsOnly   = []string{analyzer.RoleMetrics}
	infraOnly     = []string{analyzer.RoleInfrastructure}
	metricsDB     = []string{analyzer.RoleDatabase, analyzer.RoleMetrics}
	databaseOnly  = []string{analyzer.RoleDatabase}
	networkOnly   = []string{analyzer.RoleNetwork}
	networkMetric = []string{analyzer.RoleMetrics, analyzer.RoleNetwork}
	// The deployments agent reads logs and the cluster too: the first error
	// and the failing pods date the symptoms against a change.
	logsDeploy  = []string{analyzer.RoleDeployments, analyzer.RoleLogs}
	infraDeploy = []string{analyzer.RoleDeployments, analyzer.RoleInfrastructure}
	deployOnly  = []string{analyzer.RoleDeployments}
	// A cluster's pods and events say something to every agent that reads
	// the cluster: the node, the Service in front, the rollout.
	k8sWide      = []string{analyzer.RoleDeployments, analyzer.RoleInfrastructure, analyzer.RoleNetwork}
	infraNetwork = []string{analyzer.RoleInfrastructure, analyzer.RoleNetwork}
)

// The labels each exporter names what it measures by, most specific first.
var (
	// cAdvisor and kube-state-metrics: the pod (and, for an alert that names
	// no service, its namespace: the whole of what it fired on).
	podIdentity = []string{"pod", "namespace"}
	// node_exporter: the scrape target (the host) and the filesystem.
	nodeFSIdentity = []string{"instance", "mountpoint", "device"}
	// kubelet volume statistics: the claim.
	volumeIdentity = []string{"persistentvolumeclaim"}
	// blackbox_exporter: the probed target, relabelled to instance by the
	// multi-target pattern its documentation gives, or kept as target.
	probeIdentity = []string{"instance", "target"}
	// postgres_exporter and redis_exporter: the scrape target, which is
	// the server.
	instanceIdentity = []string{"instance"}
	// kafka_exporter: the consumer group and the topic.
	kafkaIdentity = []string{"consumergroup", "topic"}
	// Log agents on Kubernetes (Promtail, Alloy): the pod, whose workload's
	// streams a log query reads.
	logIdentity = []string{"pod"}
)

// logErrorFilter is the line filter of the log queries: error-level lines
// whatever the format (logfmt level=error, JSON "level":"ERROR", a Java
// exception, a Go panic).
const logErrorFilter = `(?i)(error|fatal|panic|exception|critical)`

// Plans lists every query the agents may run, by source type, in the order
// they run. Adding a source type is a client file plus its entries here.
var Plans = []PlanEntry{
	// Containers: cAdvisor (kubelet /metrics/cadvisor) and kube-state-metrics.
	{ID: "memory_usage", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalMemoryUsage,
		What: "memory working set", Unit: analyzer.UnitBytes, Reduce: ReduceMax, Source: "cAdvisor", Identity: podIdentity,
		Query: withLimit(
			`max by (namespace, pod, container) (<<container_memory_working_set_bytes{container!="", container!="POD", $S}>>)`,
			`max by (namespace, pod, container) (<<container_spec_memory_limit_bytes{container!="", container!="POD", $S}>> > 0)`)},
	{ID: "oom_kills", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalOOMKills,
		What: "OOM kills in the window", Unit: analyzer.UnitCount, Reduce: ReduceLast, Source: "cAdvisor", Identity: podIdentity,
		Query: `sum by (namespace, pod, container) (<<increase(container_oom_events_total{container!="", $S}[$W])>>)`},
	{ID: "last_terminated", Type: TypePrometheus, Agents: infraOnly, Signal: analyzer.SignalTerminated,
		What: "container last terminated as {reason}", Unit: analyzer.UnitFlag, Reduce: ReduceMax, Source: "kube-state-metrics", Identity: podIdentity,
		Query: `max by (namespace, pod, container, reason) (<<kube_pod_container_status_last_terminated_reason{$S}>>) > 0`},
	{ID: "restarts", Type: TypePrometheus, Agents: infraOnly, Signal: analyzer.SignalRestarts,
		What: "container restarts in the window", Unit: analyzer.UnitCount, Reduce: ReduceLast, Source: "kube-state-metrics", Identity: podIdentity,
		Query: `sum by (namespace, pod, container) (<<increase(kube_pod_container_status_restarts_total{$S}[$W])>>)`},
	{ID: "cpu_throttling", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalCPUThrottling,
		What: "share of CFS periods throttled", Unit: analyzer.UnitRatio, Reduce: ReduceMax, Source: "cAdvisor", Identity: podIdentity,
		Query: `sum by (namespace, pod, container) (<<rate(container_cpu_cfs_throttled_periods_total{container!="", $S}[5m])>>)` +
			` / sum by (namespace, pod, container) (<<rate(container_cpu_cfs_periods_total{container!="", $S}[5m])>>)`},
	{ID: "cpu_usage", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalCPUUsage,
		What: "CPU use", Unit: analyzer.UnitCores, Reduce: ReduceMax, Source: "cAdvisor", Identity: podIdentity,
		Query: withLimit(
			`sum by (namespace, pod, container) (<<rate(container_cpu_usage_seconds_total{container!="", container!="POD", $S}[5m])>>)`,
			`sum by (namespace, pod, container) (<<container_spec_cpu_quota{container!="", container!="POD", $S}>> > 0)`+
				` / sum by (namespace, pod, container) (<<container_spec_cpu_period{container!="", container!="POD", $S}>>)`)},

	// Hosts and volumes: node_exporter and the kubelet's volume statistics.
	{ID: "filesystem_free", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalFilesystemFree,
		What: "free disk space", Unit: analyzer.UnitBytes, Reduce: ReduceMin, Source: "node_exporter", Identity: nodeFSIdentity,
		Query: withLimit(
			`min by (instance, device, mountpoint) (<<node_filesystem_avail_bytes{fstype!~"tmpfs|overlay|squashfs", $S}>>)`,
			`max by (instance, device, mountpoint) (<<node_filesystem_size_bytes{fstype!~"tmpfs|overlay|squashfs", $S}>>)`)},
	{ID: "inodes_free", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalInodesFree,
		What: "free inodes", Unit: analyzer.UnitCount, Reduce: ReduceMin, Source: "node_exporter", Identity: nodeFSIdentity,
		Query: withLimit(
			`min by (instance, device, mountpoint) (<<node_filesystem_files_free{fstype!~"tmpfs|overlay|squashfs", $S}>>)`,
			`max by (instance, device, mountpoint) (<<node_filesystem_files{fstype!~"tmpfs|overlay|squashfs", $S}>>)`)},
	// A host's CPU: the cores busy (every mode but idle, and iowait and
	// steal, in which the CPU waits rather than works) against the cores
	// node_exporter counts; its memory: MemTotal less MemAvailable, the
	// kernel's own estimate of what can be had without swapping.
	{ID: "host_cpu_usage", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalCPUUsage,
		What: "host CPU use", Unit: analyzer.UnitCores, Reduce: ReduceMax, Source: "node_exporter", Identity: instanceIdentity,
		Query: withLimit(
			`sum by (instance) (<<rate(node_cpu_seconds_total{mode!~"idle|iowait|steal", $S}[5m])>>)`,
			`count by (instance) (<<node_cpu_seconds_total{mode="idle", $S}>>)`)},
	{ID: "host_memory_usage", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalMemoryUsage,
		What: "host memory in use", Unit: analyzer.UnitBytes, Reduce: ReduceMax, Source: "node_exporter", Identity: instanceIdentity,
		Query: withLimit(
			`max by (instance) (<<node_memory_MemTotal_bytes{$S}>>) - max by (instance) (<<node_memory_MemAvailable_bytes{$S}>>)`,
			`max by (instance) (<<node_memory_MemTotal_bytes{$S}>>)`)},
	{ID: "volume_free", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalFilesystemFree,
		What: "free volume space", Unit: analyzer.UnitBytes, Reduce: ReduceMin, Source: "kubelet", Identity: volumeIdentity,
		Query: withLimit(
			`min by (namespace, persistentvolumeclaim) (<<kubelet_volume_stats_available_bytes{$S}>>)`,
			`max by (namespace, persistentvolumeclaim) (<<kubelet_volume_stats_capacity_bytes{$S}>>)`)},
	{ID: "volume_inodes_free", Type: TypePrometheus, Agents: metricsInfra, Signal: analyzer.SignalInodesFree,
		What: "free volume inodes", Unit: analyzer.UnitCount, Reduce: ReduceMin, Source: "kubelet", Identity: volumeIdentity,
		Query: withLimit(
			`min by (namespace, persistentvolumeclaim) (<<kubelet_volume_stats_inodes_free{$S}>>)`,
			`max by (namespace, persistentvolumeclaim) (<<kubelet_volume_stats_inodes{$S}>>)`)},

	// HTTP RED metrics, as Prometheus client libraries name them.
	{ID: "http_error_ratio", Type: TypePrometheus, Agents: networkMetric, Signal: analyzer.SignalHTTPErrorRatio,
		What: "share of HTTP requests answered 5xx", Unit: analyzer.UnitRatio, Reduce: ReduceMax, Source: "HTTP RED metrics",
		Query: `sum(<<rate(http_requests_total{code=~"5..", $S}[5m])>>) / sum(<<rate(http_requests_total{$S}[5m])>>)`},
	{ID: "http_latency_p99", Type: TypePrometheus, Agents: metricsOnly, Signal: analyzer.SignalHTTPLatency,
		What: "p99 HTTP latency", Unit: analyzer.UnitSeconds, Reduce: ReduceMax, Source: "HTTP RED metrics",
		Query: `histogram_quantile(0.99, sum by (le) (<<rate(http_request_duration_seconds_bucket{$S}[5m])>>))`},

	// Endpoints: blackbox_exporter.
	{ID: "probe_success", Type: TypePrometheus, Agents: networkOnly, Signal: analyzer.SignalProbeSuccess,
		What: "blackbox probe success", Unit: analyzer.UnitBool, Reduce: ReduceMin, Source: "blackbox_exporter", Identity: probeIdentity,
		Query: `min by (instance) (<<probe_success{$S}>>)`},
	{ID: "probe_dns", Type: TypePrometheus, Agents: networkOnly, Signal: analyzer.SignalProbeResolved,
		What: "blackbox probe IP protocol (0: name not resolved)", Unit: analyzer.UnitCount, Reduce: ReduceMin, Source: "blackbox_exporter", Identity: probeIdentity,
		Query: `min by (instance) (<<probe_ip_protocol{$S}>>)`},
	{ID: "probe_http_status", Type: TypePrometheus, Agents: networkOnly, Signal: analyzer.SignalProbeHTTPStatus,
		What: "blackbox probe HTTP status", Unit: analyzer.UnitCount, Reduce: ReduceLast, Source: "blackbox_exporter", Identity: probeIdentity,
		Query: `max by (instance) (<<probe_http_status_code{$S}>>)`},
	{ID: "probe_cert_expiry", Type: TypePrometheus, Agents: networkOnly, Signal: analyzer.SignalCertExpiry,
		What: "earliest certificate expiry", Unit: analyzer.UnitUnix, Reduce: ReduceLast, Source: "blackbox_exporter", Identity: probeIdentity,
		Query: `min by (instance) (<<probe_ssl_earliest_cert_expiry{$S}>>)`},

	// Datastores: postgres_exporter, redis_exporter, kafka_exporter.
	{ID: "pg_connections", Type: TypePrometheus, Agents: databaseOnly, Signal: analyzer.SignalDBConnections,
		What: "PostgreSQL connections", Unit: analyzer.UnitCount, Reduce: ReduceMax, Source: "postgres_exporter", Identity: instanceIdentity,
		Query: withLimit(
			`sum by (instance) (<<pg_stat_database_numbackends{$S}>>)`,
			`max by (instance) (<<pg_settings_max_connections{$S}>>)`)},
	{ID: "redis_up", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalCacheUp,
		What: "Redis up", Unit: analyzer.UnitBool, Reduce: ReduceMin, Source: "redis_exporter", Identity: instanceIdentity,
		Query: `min by (instance) (<<redis_up{$S}>>)`},
	{ID: "redis_evictions", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalCacheEvictions,
		What: "Redis keys evicted in the window", Unit: analyzer.UnitCount, Reduce: ReduceLast, Source: "redis_exporter", Identity: instanceIdentity,
		Query: `sum by (instance) (<<increase(redis_evicted_keys_total{$S}[$W])>>)`},
	{ID: "redis_hit_ratio", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalCacheHitRatio,
		What: "Redis keyspace hit ratio", Unit: analyzer.UnitRatio, Reduce: ReduceMin, Trend: true, Source: "redis_exporter", Identity: instanceIdentity,
		Query: `sum by (instance) (<<rate(redis_keyspace_hits_total{$S}[5m])>>) / (sum by (instance) (<<rate(redis_keyspace_hits_total{$S}[5m])>>)` +
			` + sum by (instance) (<<rate(redis_keyspace_misses_total{$S}[5m])>>))`},
	{ID: "kafka_consumer_lag", Type: TypePrometheus, Agents: metricsOnly, Signal: analyzer.SignalConsumerLag,
		What: "Kafka consumer group lag", Unit: analyzer.UnitCount, Reduce: ReduceLast, Trend: true, Source: "kafka_exporter", Identity: kafkaIdentity,
		Query: `sum by (consumergroup, topic) (<<kafka_consumergroup_lag{$S}>>)`},

	// Amazon RDS: the instance's CloudWatch metrics (AWS/RDS, Performance
	// Insights' DBLoad counters) as YACE exports them, matched by the
	// DBInstanceIdentifier dimension of the instances the alert names.
	{ID: "rds_cpu", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalCPUUsage,
		What: "RDS CPU utilization", Unit: analyzer.UnitRatio, Reduce: ReduceMax, Source: "CloudWatch AWS/RDS (YACE)",
		Query: withLimit(`max by (dimension_DBInstanceIdentifier) (aws_rds_cpuutilization_average{$RDS}) / 100`,
			`max by (dimension_DBInstanceIdentifier) (aws_rds_cpuutilization_average{$RDS}) * 0 + 1`)},
	{ID: "rds_load_cpu_share", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalDBLoadCPUShare,
		What: "share of RDS database load on CPU", Unit: analyzer.UnitRatio, Reduce: ReduceMax, Source: "CloudWatch AWS/RDS DBLoadCPU, DBLoad (YACE)",
		Query: `sum by (dimension_DBInstanceIdentifier) (aws_rds_dbload_cpu_average{$RDS}) / sum by (dimension_DBInstanceIdentifier) (aws_rds_dbload_average{$RDS} > 0.5)`},
	{ID: "rds_free_storage", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalFreeStorage,
		What: "RDS free storage", Unit: analyzer.UnitBytes, Reduce: ReduceLast, Trend: true, Source: "CloudWatch AWS/RDS FreeStorageSpace (YACE)",
		Query: `min by (dimension_DBInstanceIdentifier) (aws_rds_free_storage_space_minimum{$RDS}) or min by (dimension_DBInstanceIdentifier) (aws_rds_free_storage_space_average{$RDS})`},
	{ID: "rds_replica_lag", Type: TypePrometheus, Agents: metricsDB, Signal: analyzer.SignalReplicaLag,
		What: "RDS replica lag", Unit: analyzer.UnitSeconds, Reduce: ReduceLast, Trend: true, Source: "CloudWatch AWS/RDS ReplicaLag (YACE)",
		Query: `max by (dimension_DBInstanceIdentifier) (aws_rds_replica_lag_maximum{$RDS}) or max by (dimension_DBInstanceIdentifier) (aws_rds_replica_lag_average{$RDS})`},
	{ID: "rds_connections", Type: TypePrometheus, Agents: databaseOnly, Signal: analyzer.SignalDBConnections,
		What: "RDS database connections", Unit: analyzer.UnitCount, Reduce: ReduceMax, Trend: true, Source: "CloudWatch AWS/RDS DatabaseConnections (YACE)",
		Query: `max by (dimension_DBInstanceIdentifier) (aws_rds_database_connections_maximum{$RDS}) or max by (dimension_DBInstanceIdentifier) (aws_rds_database_connections_average{$RDS})`},
	{ID: "rds_write_latency", Type: TypePrometheus, Agents: databaseOnly, Signal: analyzer.SignalWriteLatency,
		What: "RDS write latency", Unit: analyzer.UnitSeconds, Reduce: ReduceMax, Trend: true, Source: "CloudWatch AWS/RDS WriteLatency (YACE)",
		Query: `max by (dimension_DBInstanceIdentifier) (aws_rds_write_latency_average{$RDS})`},

	// PostgreSQL itself, over a read-only session.
	{ID: "connections", Type: TypePostgres, Agents: databaseOnly, Signal: analyzer.SignalDBConnections,
		What: "client connections", Unit: analyzer.UnitCount, Source: "pg_stat_activity", Query: sqlConnections},
	{ID: "connection_limits", Type: TypePostgres, Agents: databaseOnly, Signal: analyzer.SignalRoleConnections,
		What: "connections against a CONNECTION LIMIT", Unit: analyzer.UnitCount, Source: "pg_roles, pg_database", Query: sqlConnectionLimits},
	{ID: "lock_waits", Type: TypePostgres, Agents: databaseOnly, Signal: analyzer.SignalLockWait,
		What: "session waiting on a lock", Unit: analyzer.UnitSeconds, Source: "pg_stat_activity, pg_blocking_pids", Query: sqlLockWaits},
	{ID: "long_running_statements", Type: TypePostgres, Agents: databaseOnly, Signal: analyzer.SignalSlowStatement,
		What: "statement running", Unit: analyzer.UnitSeconds, Source: "pg_stat_activity", Query: sqlLongRunning},
	{ID: "statement_stats", Type: TypePostgres, Agents: databaseOnly, Signal: analyzer.SignalStatementMeanTime,
		What: "statement mean time", Unit: analyzer.UnitSeconds, Source: "pg_stat_statements (when installed)", Query: sqlStatementStats},

	// Logs: Loki (LogQL; $S is the stream selector's matchers).
	{ID: "error_lines", Type: TypeLoki, Agents: logsDeploy, Signal: analyzer.SignalLogErrors,
		What: "error log line", Source: "log streams, earliest first", Identity: logIdentity,
		Query: `{$S} |~ "` + logErrorFilter + `"`},
	{ID: "error_count", Type: TypeLoki, Agents: logsDeploy, Signal: analyzer.SignalLogErrors,
		What: "error log lines in the window, first seen", Unit: analyzer.UnitCount, Reduce: ReduceLast, Source: "count_over_time", Identity: logIdentity,
		Query: `sum(count_over_time({$S} |~ "` + logErrorFilter + `" [1m]))`},

	// Logs: the RDS instances' own log groups (/aws/rds/instance/<id>/…, the
	// PostgreSQL log RDS exports) and the RDS event stream EventBridge
	// writes to CloudWatch Logs, as lambda-promtail ships them to Loki
	// (their log_group label), the lines naming the alert's instances.
	{ID: "rds_events", Type: TypeLoki, Agents: []string{analyzer.RoleDatabase, analyzer.RoleLogs}, Signal: analyzer.SignalLogErrors,
		What: "RDS event or log line", Source: "CloudWatch Logs via lambda-promtail, earliest first",
		Query: `{log_group=~"/aws/rds/.+|/aws/events/rds.*"} |~ "$RDS"`},

	// Logs: Elasticsearch or OpenSearch (the _search API).
	{ID: "error_messages", Type: TypeElasticsearch, Agents: logsDeploy, Signal: analyzer.SignalLogErrors,
		What: "error log lines in the window, first seen", Unit: analyzer.UnitCount, Source: "_search",
		Query: "error-level documents of the service in the window, earliest first"},

	// Kubernetes API, read-only: every object of the alert's namespace that
	// can be at fault, the nodes, and the kube-system pods that run them.
	// The first path of each entry is what it reads; the others add context.
	{ID: "pods", Type: TypeKubernetes, Agents: k8sWide, Signal: analyzer.SignalContainerStatus,
		What: "container restarts", Unit: analyzer.UnitCount, Source: "core/v1 Pods",
		Query: "/api/v1/namespaces/{namespace}/pods /apis/apps/v1/namespaces/{namespace}/replicasets"},
	{ID: "events", Type: TypeKubernetes, Agents: k8sWide, Signal: analyzer.SignalK8sEvent, Unit: analyzer.UnitCount, Source: "core/v1 Events",
		What: "event", Query: "/api/v1/namespaces/{namespace}/events /api/v1/namespaces/{namespace}/pods /apis/apps/v1/namespaces/{namespace}/replicasets"},
	{ID: "rollouts", Type: TypeKubernetes, Agents: deployOnly, Signal: analyzer.SignalRollout,
		What: "ReplicaSet revision", Unit: analyzer.UnitCount, Source: "apps/v1 Deployments and ReplicaSets, StatefulSets and ControllerRevisions",
		Query: "/apis/apps/v1/namespaces/{namespace}/deployments /apis/apps/v1/namespaces/{namespace}/replicasets " +
			"/apis/apps/v1/namespaces/{namespace}/statefulsets /apis/apps/v1/namespaces/{namespace}/controllerrevisions /api/v1/namespaces/{namespace}/pods"},
	{ID: "workloads", Type: TypeKubernetes, Agents: infraDeploy, Signal: analyzer.SignalWorkload, Unit: analyzer.UnitCount,
		What: "workload", Source: "apps/v1 Deployments, StatefulSets, DaemonSets; core/v1 ServiceAccounts",
		Query: "/apis/apps/v1/namespaces/{namespace}/deployments /apis/apps/v1/namespaces/{namespace}/statefulsets " +
			"/apis/apps/v1/namespaces/{namespace}/daemonsets /api/v1/namespaces/{namespace}/serviceaccounts"},
	{ID: "services", Type: TypeKubernetes, Agents: infraNetwork, Signal: analyzer.SignalServiceRouting, Unit: analyzer.UnitCount,
		What: "Service", Source: "core/v1 Services and Endpoints, discovery/v1 EndpointSlices, core/v1 Pods",
		Query: "/api/v1/namespaces/{namespace}/services /api/v1/namespaces/{namespace}/pods " +
			"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices /api/v1/namespaces/{namespace}/endpoints"},
	{ID: "nodes", Type: TypeKubernetes, Agents: infraNetwork, Signal: analyzer.SignalNodeStatus, Unit: analyzer.UnitFlag,
		What: "node", Source: "core/v1 Nodes, kube-system Pods and DaemonSets, node events",
		Query: "/api/v1/nodes /api/v1/namespaces/kube-system/pods /apis/apps/v1/namespaces/kube-system/daemonsets " +
			"/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind=Node"},
	{ID: "quotas", Type: TypeKubernetes, Agents: infraOnly, Signal: analyzer.SignalQuota, Unit: analyzer.UnitCount,
		What: "quota", Source: "core/v1 ResourceQuotas", Query: "/api/v1/namespaces/{namespace}/resourcequotas"},
	{ID: "volumes", Type: TypeKubernetes, Agents: infraOnly, Signal: analyzer.SignalVolumeClaim, Unit: analyzer.UnitFlag,
		What: "volume claim", Source: "core/v1 PersistentVolumeClaims and PersistentVolumes, storage/v1 StorageClasses",
		Query: "/api/v1/namespaces/{namespace}/persistentvolumeclaims /api/v1/persistentvolumes /apis/storage.k8s.io/v1/storageclasses"},

	// Endpoints probed directly: settings.targets and endpoints the alert names.
	{ID: "dns", Type: TypeProbe, Agents: networkOnly, Signal: analyzer.SignalDNSLookup,
		What: "DNS lookup", Unit: analyzer.UnitBool, Source: "system resolver", Query: probeDNS},
	{ID: "tcp", Type: TypeProbe, Agents: networkOnly, Signal: analyzer.SignalTCPConnect,
		What: "TCP connect", Unit: analyzer.UnitBool, Source: "TCP", Query: probeTCP},
	{ID: "tls", Type: TypeProbe, Agents: networkOnly, Signal: analyzer.SignalCertExpiry,
		What: "TLS certificate not after", Unit: analyzer.UnitUnix, Source: "TLS handshake", Query: probeTLS},
}

// entry returns the plan entry of a type by id.
func entry(typ, id string) (PlanEntry, bool) {
	for _, e := range Plans {
		if e.Type == typ && e.ID == id {
			return e, true
		}
	}
	return PlanEntry{}, false
}

// AgentsOf lists the agents that read a source type's answers, sorted: the
// agents worth dispatching for a tenant that connected such a source.
func AgentsOf(typ string) []string {
	var out []string
	for _, e := range Plans {
		if e.Type == typ {
			out = unionRoles(out, e.Agents)
		}
	}
	return out
}
