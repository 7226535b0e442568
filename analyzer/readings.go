package analyzer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Signals a Reading can carry. Each names one measurement the data-source query
// plans collect (docs/query-plans.md lists the queries behind each); the
// analyzer judges a reading by its signal, never by the words of its line.
const (
	// SignalMemoryUsage: Value is the peak working set in bytes, Limit the
	// memory limit.
	SignalMemoryUsage = "memory_usage"
	// SignalOOMKills: Value is the number of OOM kills in the window.
	SignalOOMKills = "oom_kills"
	// SignalRestarts: Value is the number of container restarts in the window.
	SignalRestarts = "restarts"
	// SignalTerminated: a container's last termination; Labels["reason"] names it.
	SignalTerminated = "terminated"
	// SignalCPUUsage: Value is the peak CPU use in cores, Limit the CPU limit.
	SignalCPUUsage = "cpu_usage"
	// SignalCPUThrottling: Value is the peak share (0..1) of CFS periods throttled.
	SignalCPUThrottling = "cpu_throttling"
	// SignalFilesystemFree: Value is the lowest free space in bytes, Limit the size.
	SignalFilesystemFree = "filesystem_free"
	// SignalInodesFree: Value is the lowest number of free inodes, Limit the total.
	SignalInodesFree = "inodes_free"
	// SignalHTTPErrorRatio: Value is the peak share (0..1) of 5xx answers.
	SignalHTTPErrorRatio = "http_error_ratio"
	// SignalHTTPLatency: Value is the peak p99 latency in seconds.
	SignalHTTPLatency = "http_latency_p99"
	// SignalProbeSuccess: Value is the lowest probe_success (0 or 1).
	SignalProbeSuccess = "probe_success"
	// SignalProbeResolved: Value is the lowest probe_ip_protocol; 0 means the
	// prober could not resolve the target's name.
	SignalProbeResolved = "probe_resolved"
	// SignalProbeHTTPStatus: Value is the HTTP status code a blackbox probe
	// last received (blackbox_exporter's probe_http_status_code; 0 when no
	// response came).
	SignalProbeHTTPStatus = "probe_http_status"
	// SignalCertExpiry: Value is the certificate's notAfter in Unix seconds,
	// judged against the reading's time.
	SignalCertExpiry = "cert_expiry"
	// SignalDNSLookup: Value is 1 when the name resolved, 0 when it did not
	// (Labels["error"] says why).
	SignalDNSLookup = "dns_lookup"
	// SignalTCPConnect: Value is 1 when a TCP connection opened, 0 when not
	// (Labels["error"] is "refused", "timeout", "unreachable" or the error).
	SignalTCPConnect = "tcp_connect"
	// SignalTLSHandshake: Value is 1 when the handshake and verification
	// succeeded, 0 when not (Labels["error"] says why).
	SignalTLSHandshake = "tls_handshake"
	// SignalDBConnections: Value is the peak number of connections, Limit
	// max_connections.
	SignalDBConnections = "db_connections"
	// SignalRoleConnections: Value is a role's (or database's) connections,
	// Limit its CONNECTION LIMIT.
	SignalRoleConnections = "role_connections"
	// SignalLockWait: one session waiting on a lock; Value is seconds waited,
	// Labels["blocked_by"] the blocking sessions.
	SignalLockWait = "lock_wait"
	// SignalLockWaits: Value is the number of sessions waiting on locks (from
	// an exporter, or 0 when a database reports none).
	SignalLockWaits = "lock_waits"
	// SignalSlowStatement: a statement running now; Value is its seconds so far.
	SignalSlowStatement = "slow_statement"
	// SignalStatementMeanTime: a statement's mean execution time in seconds
	// (pg_stat_statements).
	SignalStatementMeanTime = "statement_mean_time"
	// SignalCacheUp: Value is the lowest redis_up (0 or 1).
	SignalCacheUp = "cache_up"
	// SignalCacheEvictions: Value is the number of keys evicted in the window.
	SignalCacheEvictions = "cache_evictions"
	// SignalCacheHitRatio: Value is the lowest hit ratio (0..1), Baseline the
	// ratio at the start of the window.
	SignalCacheHitRatio = "cache_hit_ratio"
	// SignalConsumerLag: Value is the consumer group's lag at the end of the
	// window, Baseline at its start.
	SignalConsumerLag = "consumer_lag"
	// SignalDBLoadCPUShare: Value is the largest share (0..1) of a
	// database's load (its average active sessions) spent on CPU; the rest
	// waits on I/O, locks or the network.
	SignalDBLoadCPUShare = "db_load_cpu_share"
	// SignalFreeStorage: Value is a database's free storage in bytes at the
	// end of the window, Baseline at its start; the volume's size is not
	// known.
	SignalFreeStorage = "free_storage"
	// SignalReplicaLag: Value is how far a read replica is behind its
	// source at the end of the window, in seconds; Baseline at its start.
	SignalReplicaLag = "replica_lag"
	// SignalWriteLatency: Value is the peak latency of a database's disk
	// writes, in seconds; Baseline at the start of the window.
	SignalWriteLatency = "write_latency"
	// SignalLogErrors: Value is the number of error-level log lines in the
	// window, At the first of them.
	SignalLogErrors = "log_errors"
	// SignalContainerStatus: one container of a pod as the Kubernetes API
	// reports it; Value is its restart count, At its last termination (else
	// its start). Labels: pod, container, replicaset, phase, ready,
	// waiting (a waiting reason such as CrashLoopBackOff), reason and
	// exit_code (of the last termination).
	SignalContainerStatus = "container_status"
	// SignalRollout: one ReplicaSet of a Deployment; Value is its revision,
	// At its creation (when that revision rolled out). Labels: deployment,
	// replicaset, image, ready ("ready/desired" pods).
	SignalRollout = "rollout"

	// The state of a cluster's objects, as the Kubernetes API reports it
	// (docs/query-plans.md). Every one carries the object's namespace and
	// name, and "workload" (kind/name of the Deployment, StatefulSet or
	// DaemonSet that owns a pod) where there is one.

	// SignalPodPending: a pod not running; Labels: pod, workload, phase,
	// scheduled ("false" when the scheduler could not place it), reason and
	// message of its PodScheduled condition, claims (its PVCs),
	// node_selector, affinity (node, pod, anti), age.
	SignalPodPending = "pod_pending"
	// SignalK8sEvent: one event; Value is its count, At its last time.
	// Labels: object (Kind/name), workload, type, reason, message, first.
	SignalK8sEvent = "k8s_event"
	// SignalWorkload: a Deployment, StatefulSet or DaemonSet; Value is its
	// ready pods, Limit the desired. Labels: workload, condition (the first
	// failing condition: type, reason, message), serviceaccount and
	// serviceaccount_missing, images.
	SignalWorkload = "workload_status"
	// SignalServiceRouting: a Service; Value is its ready endpoints. Labels:
	// service, selector, matching (pods the selector matches), ready_pods,
	// issue ("selector", "target_port", "protocol", "no_endpoints") and
	// detail.
	SignalServiceRouting = "service_routing"
	// SignalEnvAddress: a workload's configured address that names no
	// Service of the namespace, or a port its Service does not serve.
	// Labels: workload, container, env, address, issue ("no_service",
	// "port"), detail.
	SignalEnvAddress = "env_address"
	// SignalNodeStatus: a node; Value is 1 when Ready, else 0. Labels: node,
	// ready (True, False, Unknown), reason, message, since, unschedulable,
	// taints, pressure (the pressure conditions that hold).
	SignalNodeStatus = "node_status"
	// SignalNodeAgent: a node agent or control-plane component of
	// kube-system; Value is 1 when it runs and is ready. Labels: component,
	// pod, node, issue ("not_ready", "waiting", "missing"), detail.
	SignalNodeAgent = "node_agent"
	// SignalQuota: one resource of a ResourceQuota; Value is used, Limit
	// hard. Labels: resourcequota, resource.
	SignalQuota = "quota_usage"
	// SignalVolumeClaim: a PersistentVolumeClaim; Value is 1 when Bound.
	// Labels: pvc, phase, storageclass, issue ("no_class", "no_volume").
	SignalVolumeClaim = "volume_claim"
)

// Units a Reading's value can be in; they decide how a line renders it.
const (
	UnitBytes   = "bytes"
	UnitCores   = "cores"
	UnitRatio   = "ratio"
	UnitSeconds = "seconds"
	UnitCount   = "count"
	UnitUnix    = "unixtime"
	UnitBool    = "bool"
	// UnitFlag is a condition that holds (1) or not (0).
	UnitFlag = "flag"
)

// Reading is one structured fact a data source returned: a value (and the
// limit it is measured against, when there is one) of one series at one time.
// Line is its quotable rendering, a line of the excerpt's text, so a finding
// built from the reading cites text the input really holds.
type Reading struct {
	Signal string  `json:"signal"`
	Value  float64 `json:"value"`
	// Limit is the ceiling Value is measured against; 0 means none is known.
	Limit float64 `json:"limit,omitempty"`
	// Baseline is the value at the start of the window, for signals judged by
	// their trend.
	Baseline *float64          `json:"baseline,omitempty"`
	Unit     string            `json:"unit,omitempty"`
	At       time.Time         `json:"at"`
	Labels   map[string]string `json:"labels,omitempty"`
	Line     string            `json:"line"`
}

// ReadingsText renders readings as the lines of an excerpt, in order.
func ReadingsText(rs []Reading) string {
	lines := make([]string, len(rs))
	for i, r := range rs {
		lines[i] = r.Line
	}
	return strings.Join(lines, "\n")
}

// Render sets r.Line from the reading itself: what was measured, the value
// against its limit or baseline, when, and the series it belongs to. The line
// is what evidence quotes, so it says everything a reader needs to check it.
func (r *Reading) Render(what string) {
	var b strings.Builder
	b.WriteString(what)
	b.WriteString(": ")
	b.WriteString(formatValue(r.Value, r.Unit, r.At))
	if r.Limit > 0 {
		fmt.Fprintf(&b, " of %s limit (%.0f%%)", formatValue(r.Limit, r.Unit, r.At), 100*r.Value/r.Limit)
	}
	if r.Baseline != nil {
		fmt.Fprintf(&b, ", %s at the start of the window", formatValue(*r.Baseline, r.Unit, r.At))
	}
	if !r.At.IsZero() {
		fmt.Fprintf(&b, " at %s", r.At.UTC().Format(time.RFC3339))
	}
	if s := labelString(r.Labels); s != "" {
		b.WriteString(" {")
		b.WriteString(s)
		b.WriteString("}")
	}
	r.Line = b.String()
}

func labelString(ls map[string]string) string {
	keys := sortedKeys(ls)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := ls[k]
		if len(v) > 160 {
			v = clip(v, 160)
		}
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	return strings.Join(parts, ", ")
}

func formatValue(v float64, unit string, at time.Time) string {
	switch unit {
	case UnitBytes:
		return formatBytes(v)
	case UnitRatio:
		return fmt.Sprintf("%.1f%%", 100*v)
	case UnitSeconds:
		if v < 1 {
			return fmt.Sprintf("%.0fms", v*1000)
		}
		return fmt.Sprintf("%.1fs", v)
	case UnitCores:
		return fmt.Sprintf("%.2f cores", v)
	case UnitUnix:
		t := time.Unix(int64(v), 0).UTC()
		s := t.Format(time.RFC3339)
		if !at.IsZero() {
			d := t.Sub(at)
			if d < 0 {
				s += " (" + formatDuration(-d) + " before)"
			} else {
				s += " (in " + formatDuration(d) + ")"
			}
		}
		return s
	case UnitBool:
		if v >= 1 {
			return "ok"
		}
		return "failed"
	case UnitFlag:
		if v >= 1 {
			return "yes"
		}
		return "no"
	case UnitCount:
		// Counts over a window are estimates (increase() extrapolates); a
		// reader expects whole events.
		if math.Abs(v) >= 1 {
			return fmt.Sprintf("%.0f", math.Round(v))
		}
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func formatBytes(v float64) string {
	const unit = 1024
	if math.Abs(v) < unit {
		return fmt.Sprintf("%.0f B", v)
	}
	exp, div := 0, float64(unit)
	for n := math.Abs(v) / unit; n >= unit && exp < 4; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", v/div, "KMGTP"[exp])
}

func formatDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.0fd", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.1fh", d.Hours())
	case d >= time.Minute:
		return fmt.Sprintf("%.0fm", d.Minutes())
	}
	return fmt.Sprintf("%.0fs", d.Seconds())
}

// ramp maps x from [lo, hi] onto [sLo, sHi], clipped: the further past a
// threshold a reading is, the more decisive it is.
func ramp(x, lo, hi, sLo, sHi float64) float64 {
	if hi == lo {
		return sHi
	}
	f := math.Max(0, math.Min(1, (x-lo)/(hi-lo)))
	return sLo + f*(sHi-sLo)
}

// judgement is what one reading says about one category. Its words are
// formatted only for the judgements that become findings: an answer may hold
// thousands of readings.
type judgement struct {
	cat    string
	stance string
	str    float64
	format string
	args   []any
	// over marks a refutation that stands even where another series
	// supports the category: it argues the category's own signal is a
	// symptom.
	over bool
}

func (j judgement) what() string { return fmt.Sprintf(j.format, j.args...) }

func supports(cat string, str float64, format string, a ...any) (judgement, bool) {
	return judgement{cat: cat, stance: StanceSupports, str: str, format: format, args: a}, true
}

func refutes(cat string, str float64, format string, a ...any) (judgement, bool) {
	return judgement{cat: cat, stance: StanceRefutes, str: str, format: format, args: a}, true
}

// describes is a finding that bears on no category: a symptom worth showing.
func describes(str float64, format string, a ...any) (judgement, bool) {
	return judgement{stance: StanceSupports, str: str, format: format, args: a}, true
}

// judge applies the general thresholds of each signal. Thresholds are about
// mechanisms (a resource at its limit, a certificate past its notAfter), not
// about any particular system, and a clearly healthy reading argues against
// its category so the synthesis can rule it out.
func judge(r *Reading) (judgement, bool) {
	for _, j := range signalJudges {
		if out, ok := j(r); ok {
			return out, true
		}
	}
	return judgement{}, false
}

// signalJudges split judge's signals by domain; each answers only for its own.
var signalJudges = [...]func(*Reading) (judgement, bool){judgeCompute, judgeDatabase, judgeNetwork, judgeFlow}

// useRatio is a reading's use of its limit, when it has one.
func useRatio(r *Reading) (float64, bool) {
	if r.Limit <= 0 {
		return 0, false
	}
	return r.Value / r.Limit, true
}

// against judges a use against its limit: from hi up it supports cat,
// stronger towards the limit (sLo to sHi); below lo it refutes at refStr.
func against(r *Reading, cat string, hi, lo, sLo, sHi, refStr float64, what string) (judgement, bool) {
	x, ok := useRatio(r)
	switch {
	case !ok:
	case x >= hi:
		return supports(cat, ramp(x, hi, 1, sLo, sHi), what, 100*x)
	case x < lo:
		return refutes(cat, refStr, what, 100*x)
	}
	return judgement{}, false
}

// judgeCompute weighs what a container, pod or host uses: memory, CPU and disk
// against their limits, OOM kills, restarts and how containers last ended.
func judgeCompute(r *Reading) (judgement, bool) {
	switch r.Signal {
	case SignalMemoryUsage:
		return against(r, CategoryMemoryExhaustion, 0.9, 0.6, 0.62, 0.9, 0.35, "memory at %.0f%% of its limit")
	case SignalOOMKills:
		if r.Value >= 1 {
			return supports(CategoryMemoryExhaustion, ramp(r.Value, 1, 3, 0.85, 0.93), "%s OOM kill(s) in the window", formatValue(r.Value, UnitCount, r.At))
		}
		return refutes(CategoryMemoryExhaustion, 0.3, "no OOM kills in the window")
	case SignalRestarts:
		if r.Value >= 1 {
			return describes(0.3, "%s container restart(s) in the window", formatValue(r.Value, UnitCount, r.At))
		}
	case SignalTerminated:
		if strings.EqualFold(r.Labels["reason"], "OOMKilled") {
			return supports(CategoryMemoryExhaustion, 0.9, "a container last terminated as OOMKilled")
		}
		if r.Labels["reason"] != "" {
			return describes(0.3, "a container last terminated with reason %s", r.Labels["reason"])
		}
	case SignalCPUUsage:
		return against(r, CategoryCPUSaturation, 0.9, 0.5, 0.55, 0.75, 0.3, "CPU use at %.0f%% of its limit")
	case SignalCPUThrottling:
		switch {
		case r.Value >= 0.25:
			return supports(CategoryCPUSaturation, ramp(r.Value, 0.25, 0.75, 0.65, 0.9), "CPU throttled in %.0f%% of CFS periods", 100*r.Value)
		case r.Value < 0.05:
			return refutes(CategoryCPUSaturation, 0.3, "CPU throttled in %.1f%% of CFS periods", 100*r.Value)
		}
	case SignalFilesystemFree, SignalInodesFree:
		what := "free disk space"
		if r.Signal == SignalInodesFree {
			what = "free inodes"
		}
		if x, ok := useRatio(r); ok {
			switch {
			case x <= 0.05:
				return supports(CategoryDiskFull, ramp(0.05-x, 0, 0.05, 0.7, 0.93), "%s down to %.1f%%", what, 100*x)
			case x >= 0.3:
				return refutes(CategoryDiskFull, 0.3, "%s at %.0f%%", what, 100*x)
			}
		}
	}
	return judgement{}, false
}

// judgeDatabase weighs the data tier: connections against max_connections,
// locks, slow statements, replica lag, storage and where the load goes.
func judgeDatabase(r *Reading) (judgement, bool) {
	switch r.Signal {
	case SignalDBLoadCPUShare:
		switch {
		case r.Value < 0.3:
			return judgement{cat: CategoryCPUSaturation, stance: StanceRefutes, str: 0.55, over: true,
				format: "the database's load %.0f%% on CPU at most: its sessions wait on I/O, locks or the network, so a busy CPU is a symptom", args: []any{100 * r.Value}}, true
		case r.Value >= 0.7:
			return supports(CategoryCPUSaturation, 0.6, "%.0f%% of the database's load on CPU", 100*r.Value)
		}
	case SignalFreeStorage:
		if r.Baseline == nil {
			break
		}
		base, left := *r.Baseline, r.Value
		switch {
		case left <= 1<<30 || (base > 0 && left <= 0.2*base && base-left >= 1<<30):
			return supports(CategoryDiskFull, ramp(base-left, 0, base, 0.72, 0.9), "free storage falling from %s to %s", formatBytes(base), formatBytes(left))
		case left >= 0.8*base && left > 5<<30:
			return refutes(CategoryDiskFull, 0.3, "free storage at %s (%s at the start of the window)", formatBytes(left), formatBytes(base))
		}
	case SignalReplicaLag:
		switch {
		case r.Value >= 300 || (r.Value >= 60 && r.Baseline != nil && r.Value >= 2*math.Max(*r.Baseline, 1)):
			return supports(CategoryQueueBacklog, ramp(r.Value, 60, 1800, 0.72, 0.88), "a read replica %s behind its source, replay outpaced by the writes", formatValue(r.Value, UnitSeconds, r.At))
		case r.Value < 30:
			return refutes(CategoryQueueBacklog, 0.3, "replica lag of %s", formatValue(r.Value, UnitSeconds, r.At))
		}
	case SignalWriteLatency:
		if r.Value >= 0.1 {
			return describes(0.4, "disk writes taking %s", formatValue(r.Value, UnitSeconds, r.At))
		}
	case SignalDBConnections:
		return against(r, CategoryDBConnectionExhaustion, 0.9, 0.5, 0.65, 0.92, 0.35, "connections at %.0f%% of max_connections")
	case SignalRoleConnections:
		// A role far from its own limit says nothing of the server's.
		return against(r, CategoryDBConnectionExhaustion, 0.9, 0, 0.65, 0.92, 0, "connections at %.0f%% of a CONNECTION LIMIT")
	case SignalLockWait:
		if r.Value >= 1 {
			return supports(CategoryDBLockContention, ramp(r.Value, 1, 60, 0.72, 0.92), "a session waiting %s on a lock held by another", formatValue(r.Value, UnitSeconds, r.At))
		}
	case SignalLockWaits:
		if r.Value >= 1 {
			return supports(CategoryDBLockContention, ramp(r.Value, 1, 10, 0.7, 0.88), "%s session(s) waiting on locks", formatValue(r.Value, UnitCount, r.At))
		}
		return refutes(CategoryDBLockContention, 0.35, "no session waiting on a lock")
	case SignalSlowStatement:
		switch {
		case r.Value >= 10:
			return supports(CategoryDBSlowQueries, ramp(r.Value, 10, 60, 0.8, 0.9), "a statement running for %s", formatValue(r.Value, UnitSeconds, r.At))
		case r.Value >= 5:
			return supports(CategoryDBSlowQueries, ramp(r.Value, 5, 10, 0.7, 0.8), "a statement running for %s", formatValue(r.Value, UnitSeconds, r.At))
		}
	case SignalStatementMeanTime:
		if r.Value >= 1 {
			return supports(CategoryDBSlowQueries, ramp(r.Value, 1, 10, 0.55, 0.8), "a statement taking %s on average", formatValue(r.Value, UnitSeconds, r.At))
		}
	}
	return judgement{}, false
}

// judgeNetwork weighs what probes and front doors see: 5xx ratios, latency,
// blackbox probes, certificates, DNS, TCP and TLS.
func judgeNetwork(r *Reading) (judgement, bool) {
	switch r.Signal {
	case SignalHTTPErrorRatio:
		if r.Value >= 0.01 {
			return describes(0.4, "%.1f%% of requests answered 5xx", 100*r.Value)
		}
	case SignalHTTPLatency:
		if r.Value >= 1 {
			return describes(0.3, "p99 latency of %s", formatValue(r.Value, UnitSeconds, r.At))
		}
	case SignalProbeSuccess:
		if r.Value < 1 {
			return describes(0.4, "a blackbox probe failing")
		}
	case SignalProbeHTTPStatus:
		// A status is what the target answered, not why: the symptom of a
		// cause the other series tell.
		switch {
		case r.Value == 0:
			return describes(0.3, "a blackbox probe receiving no HTTP response")
		case r.Value >= 400:
			return describes(0.3, "a blackbox probe answered HTTP %.0f", r.Value)
		}
	case SignalProbeResolved:
		if r.Value == 0 {
			return supports(CategoryDNSFailure, 0.75, "a blackbox probe unable to resolve its target")
		}
		return refutes(CategoryDNSFailure, 0.3, "a blackbox probe resolving its target")
	case SignalCertExpiry:
		if r.At.IsZero() {
			return judgement{}, false
		}
		left := time.Unix(int64(r.Value), 0).Sub(r.At)
		switch {
		case left <= 0:
			return supports(CategoryCertificateExpired, 0.95, "a TLS certificate expired %s before the check", formatDuration(-left))
		case left > 7*24*time.Hour:
			return refutes(CategoryCertificateExpired, 0.4, "a TLS certificate valid for another %s", formatDuration(left))
		}
	case SignalDNSLookup:
		if r.Value >= 1 {
			return refutes(CategoryDNSFailure, 0.35, "the name resolving")
		}
		return supports(CategoryDNSFailure, 0.88, "name resolution failing (%s)", r.Labels["error"])
	case SignalTCPConnect:
		if r.Value >= 1 {
			return refutes(CategoryNetworkPartition, 0.3, "TCP connections opening")
		}
		switch r.Labels["error"] {
		case "refused":
			return supports(CategoryUpstreamDependency, 0.55, "connections refused: nothing listens at the endpoint")
		case "timeout", "unreachable":
			return supports(CategoryNetworkPartition, 0.6, "the endpoint unreachable (%s)", r.Labels["error"])
		}
	case SignalTLSHandshake:
		if r.Value >= 1 {
			return refutes(CategoryCertificateExpired, 0.35, "the TLS handshake and certificate verification succeeding")
		}
		if strings.Contains(strings.ToLower(r.Labels["error"]), "certificate") {
			return supports(CategoryCertificateExpired, 0.55, "certificate verification failing")
		}
	}
	return judgement{}, false
}

// judgeFlow weighs logs, caches and queues: error lines, a cache down or
// thrashing, consumer lag growing.
func judgeFlow(r *Reading) (judgement, bool) {
	switch r.Signal {
	case SignalLogErrors:
		if r.Value >= 1 {
			return describes(0.35, "%s error log line(s) in the window, the first at %s", formatValue(r.Value, UnitCount, r.At), r.At.UTC().Format(time.RFC3339))
		}
	case SignalCacheUp:
		if r.Value < 1 {
			return supports(CategoryCacheFailure, 0.85, "the cache down")
		}
		return refutes(CategoryCacheFailure, 0.25, "the cache up")
	case SignalCacheEvictions:
		if r.Value >= 1 {
			return supports(CategoryCacheFailure, ramp(math.Log10(r.Value), 0, 4, 0.45, 0.7), "%s keys evicted in the window", formatValue(r.Value, UnitCount, r.At))
		}
	case SignalCacheHitRatio:
		if r.Baseline != nil && *r.Baseline-r.Value >= 0.3 {
			return supports(CategoryCacheFailure, ramp(*r.Baseline-r.Value, 0.3, 0.8, 0.72, 0.9), "the cache hit ratio falling from %.0f%% to %.0f%%", 100**r.Baseline, 100*r.Value)
		}
		if r.Value >= 0.8 {
			return refutes(CategoryCacheFailure, 0.3, "the cache hit ratio at %.0f%%", 100*r.Value)
		}
	case SignalConsumerLag:
		base := 0.0
		if r.Baseline != nil {
			base = *r.Baseline
		}
		growth := r.Value - base
		switch {
		case growth >= 100 && r.Value >= 2*math.Max(base, 1):
			return supports(CategoryQueueBacklog, ramp(math.Log10(r.Value/math.Max(base, 1)), math.Log10(2), 2, 0.7, 0.9), "consumer lag growing from %s to %s", formatValue(base, UnitCount, r.At), formatValue(r.Value, UnitCount, r.At))
		case growth <= 0 && r.Value < 1000:
			return refutes(CategoryQueueBacklog, 0.3, "consumer lag steady at %s", formatValue(r.Value, UnitCount, r.At))
		}
	}
	return judgement{}, false
}

func firstOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// readingsPerSignal bounds the findings one signal yields in one agent's
// report: the most decisive readings carry the argument; more of the same
// would crowd other signals out.
const readingsPerSignal = 3

// readingHits judges every quoted reading of the excerpts the role reads.
func readingHits(readings []*Reading, role string) []hit {
	type kept struct {
		j judgement
		r *Reading
	}
	// The most decisive readings of each signal and stance, in the order
	// they were first seen: enough to carry the argument without crowding
	// other signals out of the report.
	type key struct{ signal, cat, stance string }
	best := map[key][]kept{}
	var order []key
	supported := map[string]bool{}
	for _, r := range readings {
		j, ok := judge(r)
		if !ok {
			continue
		}
		if j.stance == StanceSupports && j.cat != "" {
			supported[j.cat] = true
		}
		k := key{r.Signal, j.cat, j.stance}
		list, seen := best[k]
		if !seen {
			order = append(order, k)
		}
		// Insert by strength, keeping the first seen ahead on a tie.
		at := len(list)
		for at > 0 && list[at-1].j.str < j.str {
			at--
		}
		if at < readingsPerSignal {
			list = append(list, kept{})
			copy(list[at+1:], list[at:])
			list[at] = kept{j, r}
			if len(list) > readingsPerSignal {
				list = list[:readingsPerSignal]
			}
			best[k] = list
		} else if !seen {
			best[k] = list
		}
	}
	var out []hit
	for _, key := range order {
		for _, k := range best[key] {
			// A healthy series does not rule out a problem another series
			// shows (one pod at its memory limit, its neighbour idle; inodes
			// gone on a volume with bytes to spare), so readings refute a
			// category only when none supports it.
			if k.j.stance == StanceRefutes && supported[k.j.cat] && !k.j.over {
				continue
			}
			h := hit{cat: k.j.cat, stance: k.j.stance, str: k.j.str, what: k.j.what(), roles: []string{role}, citation: k.r.Line, stated: true}
			if h.stance == StanceSupports && h.cat != "" {
				h.culprit = readingCulprit(k.r)
			}
			out = append(out, h)
		}
	}
	return out
}

// quotedReadings are the readings whose line is still in their excerpt's
// text: only those can be cited, so only those may be judged.
func quotedReadings(gathered []Excerpt) []*Reading {
	var out []*Reading
	for gi := range gathered {
		g := &gathered[gi]
		if len(g.Readings) == 0 {
			continue
		}
		inText := linesOf(g.Text, g.Readings)
		for ri := range g.Readings {
			if inText(ri) {
				out = append(out, &g.Readings[ri])
			}
		}
	}
	return out
}

// linesOf tells which readings' lines are lines of text (the text may have
// been cut to a size cap, or differ from the rendering), so every citation
// holds. Text is normally the readings' lines in order, which is checked in
// one pass; anything else falls back to a set of the text's lines.
func linesOf(text string, rs []Reading) func(i int) bool {
	ok := make([]bool, len(rs))
	off, inOrder := 0, true
	for i, r := range rs {
		l := r.Line
		if l == "" || !strings.HasPrefix(text[off:], l) || (off+len(l) < len(text) && text[off+len(l)] != '\n') {
			inOrder = false
			break
		}
		ok[i] = true
		off += len(l) + 1
		if off >= len(text) {
			break
		}
	}
	if !inOrder {
		set := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			set[l] = true
		}
		for i, r := range rs {
			ok[i] = r.Line != "" && set[r.Line]
		}
	}
	return func(i int) bool { return ok[i] }
}

// rawLinesPerAgent bounds how many lines of raw gathered text (log lines a
// source returned, not measurements) one agent's text rules read: the rules
// cost about a millisecond a line, and a pass must stay fast whatever a
// source returns. The lines that report a problem are chosen, earliest
// first; the LLM path reads the excerpt whole, within its prompt bound.
const rawLinesPerAgent = 6

// problemWords pick, case-insensitively, the raw lines worth reading.
var problemWords = []string{"error", "fail", "fatal", "panic", "exception", "refused", "timeout", "timed out",
	"denied", "oom", "killed", "unavailable", "too many", "deadlock", "no space", "expired", "x509",
	"no such host", "nxdomain", "unreachable", "reset", "throttl", "evict", "lag", "full", "lock", "warn", "too frequent", "exhausted", "out of"}

// rawScanBytes bounds how much raw gathered text one agent searches for
// those lines: the default result cap keeps a whole pass's answers well
// under it.
const rawScanBytes = 256 << 10

// rawBudget is what is left of an agent's raw lines and of the text it may
// search for them.
type rawBudget struct{ left, scan int }

func newRawBudget() rawBudget { return rawBudget{left: rawLinesPerAgent, scan: rawScanBytes} }

// take returns the lines of text the text rules read, within the budget:
// the first lines that name a problem, in their order. Each word is found
// with one vectorized search of a lowercased copy, so a megabyte costs a few
// milliseconds.
func (b *rawBudget) take(text string) string {
	if b.left <= 0 || b.scan <= 0 || text == "" {
		return ""
	}
	if len(text) > b.scan {
		cut := strings.LastIndexByte(text[:b.scan], '\n')
		if cut < 0 {
			return ""
		}
		text = text[:cut]
	}
	b.scan -= len(text)
	lower := asciiLower(text)
	var starts []int
	for _, w := range problemWords {
		for off, found := 0, 0; found < b.left; found++ {
			i := strings.Index(lower[off:], w)
			if i < 0 {
				break
			}
			at := off + i
			starts = append(starts, strings.LastIndexByte(lower[:at], '\n')+1)
			next := strings.IndexByte(lower[at:], '\n')
			if next < 0 {
				break
			}
			off = at + next + 1
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	if len(starts) > b.left {
		starts = starts[:b.left]
	}
	b.left -= len(starts)
	lines := make([]string, len(starts))
	for i, st := range starts {
		e := strings.IndexByte(text[st:], '\n')
		if e < 0 {
			e = len(text) - st
		}
		lines[i] = text[st : st+e]
	}
	return strings.Join(lines, "\n")
}

// asciiLower lowercases ASCII letters only, so byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
