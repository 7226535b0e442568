package analyzer

import (
	"regexp"
	"slices"
	"strings"
)

// RoleSpec is one specialist agent: what triage, the gathering, the dashboard
// and the docs know about it. A new agent role is one row of RoleTable plus
// the query plans that list it (datasources/plans.go), its prompt
// (llm/prompt.go) and the rules that speak for it.
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
}

// RoleTable is every agent role, sorted by name.
var RoleTable = []RoleSpec{
	{Name: RoleDatabase, Domain: "the data tier: connections and pools, slow queries, locks, replication",
		Keywords:   regexp.MustCompile(`(?i)\b(db|database|sql|postgres\w*|pg|mysql|mariadb|mongo\w*|query|queries|deadlock|lock|connections?|pool|redis|memcached|cache|dynamo\w*|cassandra|replica\w*)\b`),
		Categories: []string{CategoryDBConnectionExhaustion, CategoryDBSlowQueries, CategoryDBLockContention, CategoryCacheFailure}},
	{Name: RoleDeployments, Domain: "change: releases, rollouts, flags, configuration, recorded changes",
		Keywords:   regexp.MustCompile(`(?i)\b(deploy\w*|release\w*|rollout|rolled|rollback|version|upgrade\w*|config\w*|flag|feature|canary|helm|argocd|change\w*)\b`),
		Categories: []string{CategoryBadDeployment, CategoryConfigChange, CategoryImagePullFailure, CategoryAdmissionRejected}},
	{Name: RoleInfrastructure, Domain: "compute and storage: hosts, containers, pods and nodes, the cluster's objects",
		Keywords: regexp.MustCompile(`(?i)\b(pod|pods|node|nodes|k8s|kubernetes|container\w*|oom\w*|memory|cpu|disk|volume|restart\w*|crash\w*|host|instance|vm|autoscal\w*|hpa|evict\w*|heap|certificate|cert)\b`),
		Categories: []string{CategoryMemoryExhaustion, CategoryCPUSaturation, CategoryDiskFull, CategorySchedulingFailure,
			CategoryProbeFailure, CategoryNodeFailure, CategoryImagePullFailure, CategoryAdmissionRejected}},
	{Name: RoleLogs, Domain: "log output: errors, exceptions, the first error that appears", Always: true,
		Categories: []string{CategoryBadDeployment, CategoryDBConnectionExhaustion, CategoryMemoryExhaustion, CategoryDiskFull,
			CategoryCertificateExpired, CategoryDNSFailure, CategoryUpstreamDependency}},
	{Name: RoleMetrics, Domain: "numeric telemetry: latency, errors, saturation against limits, lag", Always: true,
		Categories: []string{CategoryCPUSaturation, CategoryMemoryExhaustion, CategoryDiskFull, CategoryQueueBacklog,
			CategoryDBConnectionExhaustion, CategoryCacheFailure}},
	{Name: RoleNetwork, Domain: "communication: DNS, TLS, timeouts, packet loss, dependencies, rate limits",
		Keywords: regexp.MustCompile(`(?i)\b(dns|resolve\w*|lookup|network|timeout|timeouts|timed|tls|ssl|x509|certificate|cert|upstream|gateway|connect\w*|unreachable|packet|latency|429|throttl\w*|rate|quota|provider|dependency|api|5\d\d|partition|zone|az|route)\b`),
		Categories: []string{CategoryDNSFailure, CategoryCertificateExpired, CategoryNetworkPartition, CategoryUpstreamDependency,
			CategoryRateLimited, CategoryServiceMisrouting, CategoryNetworkDegradation}},
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
