package analyzer

import (
	"regexp"
	"slices"
	"strings"
)

// RoleSpec is one specialist agent: what triage, the gathering, the LLM's
// prompt, the dashboard and the docs know about it. A new agent role is one
// row of RoleTable plus the query plans that list it (datasources/plans.go);
// the offline rules that speak for it come next.
type RoleSpec struct {
	// Name is the agentRole API value; it never changes.
	Name string
	// Domain is what the agent reads, in a few words for the dashboard and
	// the docs.
	Domain string
	// Always dispatches the agent on every incident: every incident has logs
	// and metrics worth reading.
	Always bool
	// Keywords pull the agent into triage when they appear in the alert, its
	// tags or the pasted context; nil for an agent that always runs.
	Keywords *regexp.Regexp
	// Categories are the root causes the agent's domain covers: the ones its
	// rules and its prompt speak to first.
	Categories []string
	// Brief opens the LLM agent's instructions: its domain and what to look
	// for. Keeping the domains distinct is what makes the agents independent
	// witnesses, which the synthesis rewards.
	Brief string
}

// RoleTable is every agent role, sorted by name.
var RoleTable = []RoleSpec{
	{Name: RoleDatabase, Domain: "the data tier: connections and pools, slow queries, locks, replication",
		Keywords:   regexp.MustCompile(`(?i)\b(db|database|sql|postgres\w*|pg|mysql|mariadb|mongo\w*|query|queries|deadlock|lock|connections?|pool|redis|memcached|cache|dynamo\w*|cassandra|replica\w*)\b`),
		Categories: []string{CategoryDBConnectionExhaustion, CategoryDBSlowQueries, CategoryDBLockContention, CategoryCacheFailure},
		Brief: `You are the DATABASE specialist. Your domain is the data tier: connection counts and pools, max_connections, slow queries and query plans, missing indexes, locks, lock waits and deadlocks, long-running transactions, replication lag, database CPU and storage.
Look for: whether the database is the origin of the failure or only a victim of load from elsewhere, and which database mechanism it is (connections, slow queries, or locks).`},
	{Name: RoleDeployments, Domain: "change: releases, rollouts, flags, configuration, recorded changes",
		Keywords:   regexp.MustCompile(`(?i)\b(deploy\w*|release\w*|rollout|rolled|rollback|version|upgrade\w*|config\w*|flag|feature|canary|helm|argocd|change\w*)\b`),
		Categories: []string{CategoryBadDeployment, CategoryConfigChange, CategoryImagePullFailure, CategoryAdmissionRejected},
		Brief: `You are the DEPLOYMENTS specialist. Your domain is change: code releases, rollouts, version bumps, feature flags, configuration and secret changes, infrastructure-as-code applies, migrations.
Look for: what changed, when, on which service, and whether the failure started right after it, involves what it changed, or went away on rollback. A change that merely happened nearby is not evidence; say so with a refuting or weak finding. Evidence that nothing changed refutes bad_deployment and config_change.`},
	{Name: RoleInfrastructure, Domain: "compute and storage: hosts, containers, pods and nodes, the cluster's objects",
		Keywords: regexp.MustCompile(`(?i)\b(pod|pods|node|nodes|k8s|kubernetes|container\w*|oom\w*|memory|cpu|disk|volume|restart\w*|crash\w*|host|instance|vm|autoscal\w*|hpa|evict\w*|heap|certificate|cert)\b`),
		Categories: []string{CategoryMemoryExhaustion, CategoryCPUSaturation, CategoryDiskFull, CategorySchedulingFailure,
			CategoryProbeFailure, CategoryNodeFailure, CategoryImagePullFailure, CategoryAdmissionRejected},
		Brief: `You are the INFRASTRUCTURE specialist. Your domain is the compute and storage the service runs on: hosts, VMs, containers, pods and nodes, OOM kills, restarts and crash loops, CPU throttling, disk and inode usage, evictions, autoscaling, capacity.
Look for: resource exhaustion on a named host or container (memory, CPU, disk), restarts and their exit reasons, and resources that are healthy and therefore rule a category out.`},
	{Name: RoleLogs, Domain: "log output: errors, exceptions, the first error that appears", Always: true,
		Categories: []string{CategoryBadDeployment, CategoryDBConnectionExhaustion, CategoryMemoryExhaustion, CategoryDiskFull,
			CategoryCertificateExpired, CategoryDNSFailure, CategoryUpstreamDependency},
		Brief: `You are the LOGS specialist. Your domain is application and system log output: error messages, exception types, stack traces, repeated log lines and the first error that appears.
Look for: explicit error text that names a mechanism ("too many connections", "connection pool exhausted", "deadlock detected", "lock wait timeout", "OutOfMemoryError", "OOMKilled", "No space left on device", "x509: certificate has expired", "no such host", "connection refused", "429 Too Many Requests", "context deadline exceeded"), which component logged it, and which error came first versus which errors are downstream consequences.`},
	{Name: RoleMetrics, Domain: "numeric telemetry: latency, errors, saturation against limits, lag", Always: true,
		Categories: []string{CategoryCPUSaturation, CategoryMemoryExhaustion, CategoryDiskFull, CategoryQueueBacklog,
			CategoryDBConnectionExhaustion, CategoryCacheFailure},
		Brief: `You are the METRICS specialist. Your domain is numeric telemetry: latency percentiles, error rates, throughput, CPU, memory, disk usage, connection-pool utilisation, queue depth and consumer lag, cache hit ratio, saturation against limits.
Look for: which metric moved first, values at or near a hard limit (100% CPU, memory at the container limit, disk at 100%, pool at max), numbers in the metadata and tags as well as in the context, and metrics that are normal and therefore rule a category out.`},
	{Name: RoleNetwork, Domain: "communication: DNS, TLS, timeouts, packet loss, dependencies, rate limits",
		Keywords: regexp.MustCompile(`(?i)\b(dns|resolve\w*|lookup|network|timeout|timeouts|timed|tls|ssl|x509|certificate|cert|upstream|gateway|connect\w*|unreachable|packet|latency|429|throttl\w*|rate|quota|provider|dependency|api|5\d\d|partition|zone|az|route)\b`),
		Categories: []string{CategoryDNSFailure, CategoryCertificateExpired, CategoryNetworkPartition, CategoryUpstreamDependency,
			CategoryRateLimited, CategoryServiceMisrouting, CategoryNetworkDegradation},
		Brief: `You are the NETWORK specialist. Your domain is communication between components and with the outside: DNS resolution, TLS handshakes and certificates, connection timeouts and resets, packet loss, partitions between zones or hosts, load balancers, calls to upstream and third-party dependencies, rate limits and quotas imposed by others.
Look for: which hop fails (name resolution, TLS, TCP, HTTP status from a dependency), whether the failing dependency is internal or external, and whether errors are throttling (429, quota) rather than outages.`},
}

// RoleOf is the row of role name, or nil for a name that is no agent.
func RoleOf(name string) *RoleSpec {
	i, ok := slices.BinarySearchFunc(RoleTable, name, func(r RoleSpec, n string) int { return strings.Compare(r.Name, n) })
	if !ok {
		return nil
	}
	return &RoleTable[i]
}

func roleNames() []string {
	out := make([]string, len(RoleTable))
	for i, r := range RoleTable {
		out[i] = r.Name
	}
	return out
}
