package analyzer

import (
	"strings"
)

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
// The roles and their words are RoleTable's. The result is a sorted,
// de-duplicated subset of Roles.
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
	var out []string
	for _, r := range RoleTable {
		if r.Always || r.Keywords.MatchString(text) {
			out = append(out, r.Name)
		}
	}
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
