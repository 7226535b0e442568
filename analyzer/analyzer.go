// Package analyzer is Causeway's offline, deterministic incident analyzer.
//
// It stands in for the LLM when none is configured, so its answer is what users
// get by default. Six specialist agents (one per Role) read the alert and the
// supplemental context and emit evidence-bound Findings; Synthesize combines the
// reports of the agents that finished into a Result with a root-cause category
// from the closed set in Categories, a calibrated confidence, per-agent evidence, ranked
// hypotheses and recommended actions. The same Finding shape is produced by the
// LLM path, so Synthesize applies one set of evidence rules to both.
package analyzer

import (
	"sort"
	"strings"
	"time"
)

// Agent roles. They are the values of agentRole in the API, so they must stay
// stable across releases.
const (
	RoleDatabase       = "database"
	RoleDeployments    = "deployments"
	RoleInfrastructure = "infrastructure"
	RoleLogs           = "logs"
	RoleMetrics        = "metrics"
	RoleNetwork        = "network"
)

// Roles lists every agent role in sorted order (the names of RoleTable), so
// callers can dispatch and report agents in a deterministic order.
var Roles = roleNames()

// Root-cause categories (listed in docs/architecture.md). They are API values shared with the
// LLM path and with runbook matching, so they must not be renamed.
const (
	CategoryBadDeployment          = "bad_deployment"
	CategoryConfigChange           = "config_change"
	CategoryDBConnectionExhaustion = "db_connection_exhaustion"
	CategoryDBSlowQueries          = "db_slow_queries"
	CategoryDBLockContention       = "db_lock_contention"
	CategoryMemoryExhaustion       = "memory_exhaustion"
	CategoryCPUSaturation          = "cpu_saturation"
	CategoryDiskFull               = "disk_full"
	CategoryCertificateExpired     = "certificate_expired"
	CategoryDNSFailure             = "dns_failure"
	CategoryNetworkPartition       = "network_partition"
	CategoryUpstreamDependency     = "upstream_dependency"
	CategoryRateLimited            = "rate_limited"
	CategoryQueueBacklog           = "queue_backlog"
	CategoryCacheFailure           = "cache_failure"
	CategoryUnknown                = "unknown"

	// Kubernetes-native faults (docs/scenarios.md lists their mechanisms).
	CategorySchedulingFailure  = "scheduling_failure"
	CategoryAdmissionRejected  = "admission_rejected"
	CategoryImagePullFailure   = "image_pull_failure"
	CategoryProbeFailure       = "probe_failure"
	CategoryServiceMisrouting  = "service_misrouting"
	CategoryNodeFailure        = "node_failure"
	CategoryNetworkDegradation = "network_degradation"
)

// Categories lists every category in the documented order; it is
// the closed set both analysis paths must choose from.
var Categories = []string{
	CategoryBadDeployment, CategoryConfigChange, CategoryDBConnectionExhaustion,
	CategoryDBSlowQueries, CategoryDBLockContention, CategoryMemoryExhaustion,
	CategoryCPUSaturation, CategoryDiskFull, CategoryCertificateExpired,
	CategoryDNSFailure, CategoryNetworkPartition, CategoryUpstreamDependency,
	CategoryRateLimited, CategoryQueueBacklog, CategoryCacheFailure, CategoryUnknown,
	CategorySchedulingFailure, CategoryAdmissionRejected, CategoryImagePullFailure, CategoryProbeFailure,
	CategoryServiceMisrouting, CategoryNodeFailure, CategoryNetworkDegradation,
}

// Finding stances.
const (
	// StanceSupports marks evidence for a category.
	StanceSupports = "supports"
	// StanceRefutes marks evidence against a category (a negated or contradicting signal).
	StanceRefutes = "refutes"
)

// ValidCategory reports whether c is one of Categories, so LLM output and
// scenario labels can be checked against the closed set.
func ValidCategory(c string) bool {
	for _, k := range Categories {
		if k == c {
			return true
		}
	}
	return false
}

// ValidRole reports whether r is one of Roles, so reports from an unknown agent
// can be rejected instead of silently counted.
func ValidRole(r string) bool { return RoleOf(r) != nil }

// Input is everything an agent may look at: the alert fields and the
// supplemental context pasted by the on-call engineer.
type Input struct {
	Title       string
	Description string
	Severity    string
	Service     string
	Environment string
	Tags        map[string]string
	// Metadata is JSON-decoded (numbers are float64).
	Metadata map[string]any
	// Context holds the supplemental context entries (multi-line text), in the order given.
	Context []string
	// Gathered holds what Causeway itself collected for the incident (data
	// source query results, recorded changes). Agents read it like Context;
	// evidence quoting it names where it came from.
	Gathered []Excerpt
	// Changes are the changes the tenant recorded around the onset, for the
	// incident's service and others (WithChanges also adds them to Gathered).
	Changes []Change
	// At is when the pass read its sources (zero when unknown): how old a
	// reading is, for signals whose age decides whether they still hold.
	At time.Time
}

// Finding is one claim of one agent. The LLM path produces the same struct, so
// the citation and category rules of Synthesize apply to both.
type Finding struct {
	AgentRole string `json:"agentRole"`
	// Category is the category the finding bears on ("" = descriptive only).
	Category string `json:"category"`
	// Stance is StanceSupports or StanceRefutes.
	Stance string `json:"stance"`
	// Strength is 0..1: how decisive this signal is.
	Strength float64 `json:"strength"`
	// Summary is one sentence.
	Summary string `json:"summary"`
	// Citation is a verbatim quote from the input (whitespace-insensitive) or a
	// field reference such as "title", "service", "tags.region", "metadata.p95_ms".
	Citation string `json:"citation"`
	// Mechanism says how the category's fault came about (Mechanisms), when
	// the finding can tell.
	Mechanism string `json:"mechanism,omitempty"`
	// Culprit is the object the finding blames, named as the input names it;
	// nil when the finding blames none.
	Culprit *Culprit `json:"culprit,omitempty"`
}

// AgentReport is the output of one agent; failed agents produce none.
type AgentReport struct {
	AgentRole string    `json:"agentRole"`
	Findings  []Finding `json:"findings"`
}

// CitationValid reports whether citation quotes or names the input. It is the
// rule that keeps answers evidence-bound: a quote must appear in a context
// entry, a gathered excerpt, the title or the description (whitespace and case of whitespace runs
// ignored), and a field reference must name a field that is present.
func CitationValid(in Input, citation string) bool {
	c := strings.TrimSpace(citation)
	if c == "" {
		return false
	}
	if ok, isRef := fieldRefValid(in, c); isRef {
		return ok
	}
	return holds(in, squash(c))
}

// holds reports whether the input's text — title, description, a context
// entry or a gathered excerpt — holds q, both with whitespace squashed.
func holds(in Input, q string) bool {
	if q == "" {
		return false
	}
	if strings.Contains(squash(in.Title), q) || strings.Contains(squash(in.Description), q) {
		return true
	}
	for _, e := range in.Context {
		if strings.Contains(squash(e), q) {
			return true
		}
	}
	for _, g := range in.Gathered {
		if strings.Contains(squash(g.Text), q) {
			return true
		}
	}
	return false
}

// fieldRefValid recognizes field references; isRef is false when c is not one.
func fieldRefValid(in Input, c string) (ok, isRef bool) {
	switch c {
	case "title":
		return strings.TrimSpace(in.Title) != "", true
	case "description":
		return strings.TrimSpace(in.Description) != "", true
	case "service":
		return strings.TrimSpace(in.Service) != "", true
	case "severity":
		return strings.TrimSpace(in.Severity) != "", true
	case "environment":
		return strings.TrimSpace(in.Environment) != "", true
	}
	if k, found := strings.CutPrefix(c, "tags."); found && k != "" && !strings.ContainsAny(k, " \t\n") {
		_, present := in.Tags[k]
		return present, true
	}
	if k, found := strings.CutPrefix(c, "metadata."); found && k != "" && !strings.ContainsAny(k, " \t\n") {
		_, present := in.Metadata[k]
		return present, true
	}
	if k, found := strings.CutPrefix(c, "context["); found {
		// "context[2]" names a whole entry.
		if n, rest, ok := cutIndex(k); ok && rest == "" {
			return n >= 0 && n < len(in.Context), true
		}
	}
	return false, false
}

func cutIndex(s string) (int, string, bool) {
	i := strings.IndexByte(s, ']')
	if i <= 0 {
		return 0, "", false
	}
	n := 0
	for _, r := range s[:i] {
		if r < '0' || r > '9' {
			return 0, "", false
		}
		n = n*10 + int(r-'0')
	}
	return n, s[i+1:], true
}

// squash removes all whitespace so quotes survive re-wrapping and indentation changes.
func squash(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
