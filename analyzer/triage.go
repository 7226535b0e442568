package analyzer

import (
	"regexp"
	"sort"
	"strings"
)

// domainKeywords are the words that pull a specialist agent into triage.
var domainKeywords = map[string]*regexp.Regexp{
	RoleDatabase:       regexp.MustCompile(`(?i)\b(db|database|sql|postgres\w*|pg|mysql|mariadb|mongo\w*|query|queries|deadlock|lock|connections?|pool|redis|memcached|cache|dynamo\w*|cassandra|replica\w*)\b`),
	RoleDeployments:    regexp.MustCompile(`(?i)\b(deploy\w*|release\w*|rollout|rolled|rollback|version|upgrade\w*|config\w*|flag|feature|canary|helm|argocd|change\w*)\b`),
	RoleInfrastructure: regexp.MustCompile(`(?i)\b(pod|pods|node|nodes|k8s|kubernetes|container\w*|oom\w*|memory|cpu|disk|volume|restart\w*|crash\w*|host|instance|vm|autoscal\w*|hpa|evict\w*|heap|certificate|cert)\b`),
	RoleNetwork:        regexp.MustCompile(`(?i)\b(dns|resolve\w*|lookup|network|timeout|timeouts|timed|tls|ssl|x509|certificate|cert|upstream|gateway|connect\w*|unreachable|packet|latency|429|throttl\w*|rate|quota|provider|dependency|api|5\d\d|partition|zone|az|route)\b`),
}

// SelectAgents is triage: which agents to dispatch for an alert. Rules:
//   - a critical alert (after NormalizeSeverity) gets all six agents, because the
//     cost of a missed signal outweighs the cost of the extra agents;
//   - otherwise logs and metrics always run (every incident has both), plus each
//     specialist whose domain keywords appear in the title, description,
//     service name or tag keys/values (database: db/sql/query/pool/cache…;
//     deployments: deploy/release/rollback/config/flag…; infrastructure:
//     pod/node/memory/cpu/disk/restart…; network: dns/tls/timeout/upstream/429…).
//   - supplemental context counts like the alert: when a pass starts with a
//     pasted config diff or database log, the specialist for it must run even if
//     the alert's own words never named that domain.
//
// The result is a sorted, de-duplicated subset of Roles.
func SelectAgents(in Input) []string {
	if NormalizeSeverity(in.Severity, "medium") == "critical" {
		return append([]string(nil), Roles...)
	}
	var b strings.Builder
	b.WriteString(in.Title + "\n" + in.Description + "\n" + in.Service + "\n")
	for _, k := range sortedKeys(in.Tags) {
		b.WriteString(k + " " + in.Tags[k] + "\n")
	}
	for _, c := range in.Context {
		b.WriteString(c + "\n")
	}
	text := strings.NewReplacer("_", " ", "-", " ").Replace(b.String())
	set := map[string]bool{RoleLogs: true, RoleMetrics: true}
	for role, re := range domainKeywords {
		if re.MatchString(text) {
			set[role] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// NormalizeSeverity maps the free-text severities of monitoring tools (sev1,
// p2, crit, warning, error, …) onto critical|high|medium|low|info, so triage and
// filtering work on one scale. An empty or unrecognized value yields fallback.
func NormalizeSeverity(s, fallback string) string {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.NewReplacer("-", "", "_", "", " ", "").Replace(v)
	switch v {
	case "critical", "crit", "fatal", "emergency", "emerg", "alert", "disaster", "sev0", "sev1", "p0", "p1", "s0", "s1", "1", "urgent", "page":
		return "critical"
	case "high", "major", "error", "err", "sev2", "p2", "s2", "2", "severe":
		return "high"
	case "medium", "moderate", "warning", "warn", "average", "sev3", "p3", "s3", "3":
		return "medium"
	case "low", "minor", "sev4", "p4", "s4", "4", "notice":
		return "low"
	case "info", "informational", "information", "debug", "ok", "sev5", "p5", "s5", "5", "none":
		return "info"
	}
	return fallback
}
