package datasources

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Source is a data source as the planner sees it: no credential.
type Source struct {
	ID       string
	Name     string
	Type     string
	URL      string
	Settings map[string]any
}

// Planned is a pass's gathering plan: the queries to run and notes on what
// could not be planned (a source that needs a service the alert lacks, a plan
// cut at the budget).
type Planned struct {
	Queries []Query
	Notes   []string
}

// Plan chooses, for the agents of a pass, every query of every source the
// tenant connected, scoped to sc. Sources run in id order and entries in plan
// order, so the same incident always yields the same plan; a query two agents
// need runs once and both read it. At most maxQueries are planned.
func Plan(sources []Source, sc Scope, roles []string, maxQueries int) Planned {
	var p Planned
	srcs := slices.Clone(sources)
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].ID < srcs[j].ID })
	byKey := map[string]int{}
	add := func(q Query) bool {
		if i, ok := byKey[q.Key]; ok {
			p.Queries[i].Roles = unionRoles(p.Queries[i].Roles, q.Roles)
			return true
		}
		if maxQueries > 0 && len(p.Queries) >= maxQueries {
			return false
		}
		byKey[q.Key] = len(p.Queries)
		p.Queries = append(p.Queries, q)
		return true
	}
	dropped := 0
	for _, s := range srcs {
		k, ok := kinds[s.Type]
		if !ok {
			p.Notes = append(p.Notes, fmt.Sprintf("%s source %q is of a type this version cannot query", s.Type, s.Name))
			continue
		}
		qs, notes := k.plan(s, sc, roles)
		p.Notes = append(p.Notes, notes...)
		for _, q := range qs {
			if !add(q) {
				dropped++
			}
		}
	}
	if dropped > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d queries left out: a pass runs at most %d", dropped, maxQueries))
	}
	return p
}

// entriesFor lists the plan entries of a type that any of roles reads, with
// the roles that read each.
func entriesFor(typ string, roles []string) []struct {
	PlanEntry
	roles []string
} {
	var out []struct {
		PlanEntry
		roles []string
	}
	for _, e := range Plans {
		if e.Type != typ {
			continue
		}
		var rs []string
		for _, r := range e.Agents {
			if slices.Contains(roles, r) {
				rs = append(rs, r)
			}
		}
		if len(rs) > 0 {
			out = append(out, struct {
				PlanEntry
				roles []string
			}{e, rs})
		}
	}
	return out
}

func unionRoles(a, b []string) []string {
	out := slices.Clone(a)
	for _, r := range b {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// queryKey names a query within a pass.
func queryKey(sourceID, entryID, target string) string {
	k := sourceID + "/" + entryID
	if target != "" {
		k += "/" + target
	}
	return k
}

// Step of a range query: about 120 points over the window, never finer than
// 15 s (a usual scrape interval).
func rangeStep(start, end time.Time) time.Duration {
	step := end.Sub(start) / 120
	if step < 15*time.Second {
		step = 15 * time.Second
	}
	return step.Truncate(time.Second)
}

// Service matching: the labels that may name a service when the source sets
// no serviceLabel, in the order their variants are written.
var defaultServiceLabels = []string{"service", "app", "app_kubernetes_io_name", "job", "container"}

var (
	groupRe = regexp.MustCompile(`<<(.*?)>>`)
	// ownMatcherRe finds the label matchers an entry's query writes itself.
	ownMatcherRe = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")`)
)

// renderPromQL fills an entry's query for a service: each <<…>> group is
// repeated once per way a series can belong to the alert, joined by or;
// $S becomes that way's matcher plus the alert's narrowing matchers; $W the
// window; $RDS the matcher of the RDS instances the alert names. A series
// belongs by the service (each service label, or a pod named after it) or by
// one of the entry's identity labels carrying the alert's own value.
func renderPromQL(e PlanEntry, sc Scope, serviceLabel string) string {
	tmpl := e.Query
	type variant struct{ label, matcher string }
	var variants []variant
	if sc.Service != "" {
		labels := defaultServiceLabels
		if serviceLabel != "" {
			labels = []string{serviceLabel}
		}
		for _, l := range labels {
			variants = append(variants, variant{l, l + `="` + escapeLabelValue(sc.Service) + `"`})
		}
		variants = append(variants, variant{"pod", `pod=~"` + escapeLabelValue(regexp.QuoteMeta(sc.Service)) + `-.+"`})
	}
	for _, l := range identityOf(e, sc) {
		variants = append(variants, variant{l, l + `="` + escapeLabelValue(sc.Labels[l]) + `"`})
	}
	narrow := func(entryDecides map[string]bool, skip string) string {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(sc.Labels)) {
			if k == skip || entryDecides[k] {
				continue
			}
			// A series without the label matches the empty string, so the
			// alert's value narrows only the series that carry that label.
			parts = append(parts, k+`=~"`+escapeLabelValue(regexp.QuoteMeta(sc.Labels[k]))+`|"`)
		}
		return strings.Join(parts, ", ")
	}
	if len(sc.DBInstances) > 0 {
		tmpl = strings.ReplaceAll(tmpl, "$RDS", `dimension_DBInstanceIdentifier=~"`+dbInstancesPattern(sc)+`"`)
	}
	window := promDuration(sc.End.Sub(sc.Start))
	out := groupRe.ReplaceAllStringFunc(tmpl, func(g string) string {
		inner := g[2 : len(g)-2]
		alts := make([]string, len(variants))
		decides := contradicted(inner, sc.Labels)
		for i, v := range variants {
			m := v.matcher
			if n := narrow(decides, v.label); n != "" {
				m += ", " + n
			}
			alts[i] = strings.ReplaceAll(inner, "$S", m)
		}
		if len(alts) == 1 {
			return alts[0]
		}
		return "(" + strings.Join(alts, " or ") + ")"
	})
	return strings.ReplaceAll(out, "$W", window)
}

// contradicted lists the alert's labels whose value fails a matcher the
// entry's query writes on that label itself: the entry decides that label
// (node_exporter's mode!~"idle|…"), and the alert's value, often read from
// its rule's own expression (mode="idle"), would only empty the query.
func contradicted(query string, alert map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, m := range ownMatcherRe.FindAllStringSubmatch(query, -1) {
		value, ok := alert[m[1]]
		if !ok {
			continue
		}
		want, err := strconv.Unquote(m[3])
		if err != nil {
			continue
		}
		var match bool
		switch m[2] {
		case "=", "!=":
			match = value == want
		default:
			re, err := regexp.Compile("^(?:" + want + ")$")
			if err != nil {
				continue
			}
			match = re.MatchString(value)
		}
		if match == (m[2] == "!=" || m[2] == "!~") {
			out[m[1]] = true
		}
	}
	return out
}

// escapeLabelValue quotes a value for a PromQL string literal.
func escapeLabelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// promDuration renders d as a PromQL duration in whole seconds (at least 1m,
// the shortest window an increase() over scraped counters can see).
func promDuration(d time.Duration) string {
	if d < time.Minute {
		d = time.Minute
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// dbInstancesPattern is the alternation of the RDS instances the alert
// names, escaped for a label matcher's regular expression.
func dbInstancesPattern(sc Scope) string {
	quoted := make([]string, len(sc.DBInstances))
	for i, id := range sc.DBInstances {
		quoted[i] = regexp.QuoteMeta(id)
	}
	return escapeLabelValue(strings.Join(quoted, "|"))
}

// scopedBy tells whether an entry can be planned for the scope: an RDS
// entry ($RDS) needs the instances the alert names, any other a service or
// the alert's value of one of the entry's identity labels.
func scopedBy(e PlanEntry, sc Scope) bool {
	if strings.Contains(e.Query, "$RDS") {
		return len(sc.DBInstances) > 0
	}
	return sc.Service != "" || len(identityOf(e, sc)) > 0
}

// identityOf lists the entry's identity labels the alert carries a value
// of. A namespace identifies only when it is all the alert names: with a
// service or a pod, every other workload of the namespace is someone else's.
func identityOf(e PlanEntry, sc Scope) []string {
	var out []string
	for _, l := range e.Identity {
		if sc.Labels[l] == "" {
			continue
		}
		if l == "namespace" && (sc.Service != "" || len(out) > 0) {
			continue
		}
		out = append(out, l)
	}
	return out
}
