package analyzer

import "strings"

var labels = map[string]string{
	CategoryBadDeployment:          "a faulty deployment",
	CategoryConfigChange:           "a configuration or feature-flag change",
	CategoryDBConnectionExhaustion: "database connection exhaustion",
	CategoryDBSlowQueries:          "slow database queries",
	CategoryDBLockContention:       "database lock contention",
	CategoryMemoryExhaustion:       "memory exhaustion",
	CategoryCPUSaturation:          "CPU saturation",
	CategoryDiskFull:               "a full disk",
	CategoryCertificateExpired:     "an expired TLS certificate",
	CategoryDNSFailure:             "DNS resolution failure",
	CategoryNetworkPartition:       "a network partition",
	CategoryUpstreamDependency:     "a failing upstream dependency",
	CategoryRateLimited:            "rate limiting or quota exhaustion",
	CategoryQueueBacklog:           "a queue backlog",
	CategoryCacheFailure:           "a cache failure",
	CategoryUnknown:                "an undetermined cause",
	CategorySchedulingFailure:      "pods the scheduler cannot place",
	CategoryAdmissionRejected:      "pods refused at admission",
	CategoryImagePullFailure:       "an image that cannot be pulled",
	CategoryProbeFailure:           "a failing health probe",
	CategoryServiceMisrouting:      "traffic routed to no backend",
	CategoryNodeFailure:            "a failed node",
	CategoryNetworkDegradation:     "degraded network traffic",
}

var mechanism = map[string]string{
	CategoryBadDeployment:          "Symptoms began right after a release and are confined to what it changed.",
	CategoryConfigChange:           "Symptoms follow a configuration or feature-flag change rather than a code deploy.",
	CategoryDBConnectionExhaustion: "The database (or the client pool) has no free connections, so new requests are rejected or wait.",
	CategoryDBSlowQueries:          "Queries are expensive (scans, missing indexes, grown tables) and take seconds to complete.",
	CategoryDBLockContention:       "Otherwise cheap statements wait on locks held by other transactions.",
	CategoryMemoryExhaustion:       "Processes run out of memory and are killed or thrash in garbage collection.",
	CategoryCPUSaturation:          "Compute is pinned at its limit, so requests queue and time out.",
	CategoryDiskFull:               "A volume is out of space, so writes fail.",
	CategoryCertificateExpired:     "A TLS certificate passed its validity date and clients reject it.",
	CategoryDNSFailure:             "Names fail to resolve while the targets themselves are reachable.",
	CategoryNetworkPartition:       "Part of the network cannot reach the rest (packet loss, unreachable hosts).",
	CategoryUpstreamDependency:     "A dependency is failing or timing out, and the errors propagate.",
	CategoryRateLimited:            "Requests are rejected by a rate limit or quota.",
	CategoryQueueBacklog:           "Messages arrive faster than consumers process them, so the backlog grows.",
	CategoryCacheFailure:           "The cache stopped serving hits, so load falls through to the backing store.",
	CategorySchedulingFailure:      "The scheduler finds no node that fits the pods, so they stay Pending.",
	CategoryAdmissionRejected:      "The API server refuses to create the pods (a quota, a missing service account, a webhook or policy).",
	CategoryImagePullFailure:       "The kubelet cannot pull the container image, so the containers never start.",
	CategoryProbeFailure:           "A liveness or readiness probe that does not match the application fails, so the kubelet restarts the containers or takes them out of service.",
	CategoryServiceMisrouting:      "Requests are sent where no ready backend answers (a selector, port or address that matches nothing).",
	CategoryNodeFailure:            "A node, its agents or the control plane stopped working, taking its pods down with it.",
	CategoryNetworkDegradation:     "Traffic to the pods is slowed or loses packets, so probes and requests time out.",
}

func label(cat string) string {
	if l, ok := labels[cat]; ok {
		return l
	}
	return cat
}

var actionTemplates = map[string][]string{
	CategoryBadDeployment: {
		"Roll {svc} back to the last known-good release.",
		"Confirm the error rate returns to baseline after the rollback.",
		"Reproduce the failing path from the release diff and add a regression test before redeploying.",
	},
	CategoryConfigChange: {
		"Revert the configuration or feature-flag change on {svc} to its previous value.",
		"Confirm the symptoms stop after the revert.",
		"Fix and re-roll the change gradually, behind validation or a canary.",
	},
	CategoryDBConnectionExhaustion: {
		"Free connections for {svc}: cap per-instance pool sizes or put a pooler (PgBouncer/ProxySQL) in front of the database.",
		"Close idle connections and shorten connection lifetimes; check whether replica count multiplied the pools.",
		"Alert on connections used versus the database maximum.",
	},
	CategoryDBSlowQueries: {
		"Identify the slowest statements of {svc} (slow log, pg_stat_statements, EXPLAIN) and add the missing index or rewrite them.",
		"Shed or cache the expensive query path until the fix ships.",
		"Set statement timeouts so slow queries cannot pile up.",
	},
	CategoryDBLockContention: {
		"Find the blocking session (pg_locks / INNODB STATUS) and end the long-running transaction holding the locks.",
		"Move bulk updates of {svc}'s tables to small batches outside peak hours.",
		"Set lock and idle-in-transaction timeouts.",
	},
	CategoryMemoryExhaustion: {
		"Restart or scale {svc} to restore service, then cap the memory-hungry work (streaming, pagination, bounded caches).",
		"Take a heap profile or dump to find what grows.",
		"Review memory limits against real peak usage.",
	},
	CategoryCPUSaturation: {
		"Add capacity for {svc}: raise autoscaling maximums or CPU limits.",
		"Shed or rate-limit the traffic driving the load; profile the hottest code path.",
		"Alert on CPU throttling and autoscaler headroom.",
	},
	CategoryDiskFull: {
		"Free space on the full volume used by {svc} (rotate or delete logs, temp files) or expand it.",
		"Fix whatever stopped cleaning up (log rotation, retention, replication slots).",
		"Alert on disk usage well before 100%.",
	},
	CategoryCertificateExpired: {
		"Renew and deploy the expired certificate used by {svc}'s connection.",
		"Fix the automated renewal (issuer, cert-manager, ACME) that failed.",
		"Monitor certificate expiry dates with weeks of warning.",
	},
	CategoryDNSFailure: {
		"Restore name resolution for {svc}: check the cluster and upstream resolvers and restart failing DNS pods.",
		"Use a resolver fallback or cached answers while it recovers.",
		"Alert on resolver SERVFAIL/timeout rates.",
	},
	CategoryNetworkPartition: {
		"Shift {svc}'s traffic away from the isolated zone or hosts.",
		"Confirm connectivity with the cloud provider or network team.",
		"Re-balance once packet loss is back to zero.",
	},
	CategoryUpstreamDependency: {
		"Degrade gracefully: open circuit breakers, serve fallbacks or queue work for the failing dependency of {svc}.",
		"Contact the dependency's owner or provider and track their status.",
		"Replay deferred work once the dependency recovers.",
	},
	CategoryRateLimited: {
		"Reduce {svc}'s request rate to the provider: pause bulk jobs and honour Retry-After with backoff.",
		"Separate keys or quotas for batch and production traffic, or raise the quota.",
		"Alert on remaining-quota headers before it reaches zero.",
	},
	CategoryQueueBacklog: {
		"Scale {svc}'s consumers (and partitions) to exceed the incoming rate.",
		"Prioritize or shed non-urgent messages until the backlog drains.",
		"Alert on consumer lag and oldest-message age.",
	},
	CategoryCacheFailure: {
		"Restore the cache tier used by {svc} (failover, restart, memory policy) and warm it.",
		"Protect the backing store from the miss storm: request coalescing, rate limits.",
		"Alert on cache hit ratio and cache node health.",
	},
	CategorySchedulingFailure: {
		"Make room for {obj}: lower its resource requests, relax its placement rules, or add or uncordon nodes that fit it.",
		"Confirm its pods leave Pending and become Ready.",
	},
	CategoryAdmissionRejected: {
		"Fix what refuses {obj}: raise or free the quota, create the missing service account, or change the pod spec to meet the policy.",
		"Confirm the controller creates the missing pods.",
	},
	CategoryImagePullFailure: {
		"Point {obj} at an image that exists and that the cluster may pull (tag, registry credentials, registry reachability), or roll it back.",
		"Confirm its containers start.",
	},
	CategoryProbeFailure: {
		"Correct the probe of {obj} to the port, path and timing the application really serves.",
		"Confirm its pods stay Ready without restarts.",
	},
	CategoryServiceMisrouting: {
		"Fix {obj} so it reaches ready pods: its selector, its target port or protocol, or the address its callers use.",
		"Confirm the Service has ready endpoints and callers succeed.",
	},
	CategoryNodeFailure: {
		"Restore {obj} (kubelet, container runtime, kube-proxy or the control-plane component), or drain it and replace it.",
		"Confirm its pods are rescheduled or Ready again.",
	},
	CategoryNetworkDegradation: {
		"Find what slows or drops traffic to {obj} (network policy, CNI, a noisy node, a fault injected by a chaos tool) and remove it.",
		"Confirm probe and request latencies return to normal.",
	},
	CategoryUnknown: {
		"Keep monitoring {svc}; the evidence does not point to a specific cause.",
		"Collect logs, metrics and recent changes around the onset and run another investigation pass.",
	},
}

// actions are the recommended steps for a category, naming the service and
// the culprit.
func actions(cat, svc string, culprit *Culprit) []string {
	if svc == "" {
		svc = "the service"
	}
	obj := svc
	if culprit != nil {
		obj = culprit.String()
		if svc == "the service" {
			svc = obj
		}
	}
	out := []string{}
	for _, t := range actionTemplates[cat] {
		out = append(out, strings.NewReplacer("{svc}", svc, "{obj}", obj).Replace(t))
	}
	return out
}
