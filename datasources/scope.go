package datasources

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/config"
)

// Alert is the part of an incident a query scope is drawn from: what the
// monitoring tool said about where and when.
type Alert struct {
	// Provider is the webhook provider the alert came through ("" for a
	// manual incident).
	Provider    string
	Service     string
	Tags        map[string]string
	Metadata    map[string]any
	Description string
	CreatedAt   time.Time
}

// Scope is what every query of a pass is limited to: the incident's service,
// the alert's labels that narrow it, the endpoints it names, and the window
// around the onset.
type Scope struct {
	Service string
	// Labels are label matchers from the alert: a series that carries one of
	// these labels must carry the alert's value.
	Labels map[string]string
	// Endpoints are hosts or URLs the alert names, for probes.
	Endpoints []string
	// DBInstances are the Amazon RDS instances the alert names (the
	// instance and its read replicas), for the CloudWatch plans.
	DBInstances []string
	Onset       time.Time
	Start       time.Time
	End         time.Time
}

// Scope limits.
const (
	// maxWindow bounds the window of an incident whose onset is long past
	// (a re-investigation days later): the latest day is what matters.
	maxWindow = 24 * time.Hour
	// maxScopeLabels and maxEndpoints bound what an alert can add to queries.
	maxScopeLabels = 12
	maxEndpoints   = 5
)

// labelName is a valid Prometheus label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// notSeriesLabels are alert labels that describe the alert, not the series it
// fired on, so they never narrow a query. A blackbox_exporter (or
// snmp_exporter) module says how a target was probed, not which target: the
// certificate another module of the same target read is that target's too.
var notSeriesLabels = map[string]bool{
	"alertname": true, "severity": true, "priority": true, "alertstate": true,
	"service": true, "env": true, "environment": true, "module": true,
}

// datadogTags maps Datadog's tag names onto the Prometheus labels of the same
// thing, so a Datadog alert narrows Prometheus queries too.
var datadogTags = map[string]string{
	"kube_namespace":      "namespace",
	"pod_name":            "pod",
	"kube_container_name": "container",
	"container_name":      "container",
	"kube_cluster_name":   "cluster",
	"consumer_group":      "consumergroup",
}

// endpointKeys are tag and metadata keys whose value names an endpoint.
var endpointKeys = []string{"instance", "target", "url", "endpoint", "host", "hostname", "address", "server"}

// onsetKeys are the metadata keys providers keep the alert's start in, most
// specific first: Alertmanager/Grafana, CloudWatch, Azure, GCP, PagerDuty,
// New Relic, Datadog.
var onsetKeys = []string{"startsAt", "StateChangeTime", "firedDateTime", "started_at", "occurred_at", "createdAt", "date"}

// ScopeOf derives the scope from the alert: its service, the labels, tags
// and dimensions it carries (and the label matchers of the expression behind
// a generatorURL), the endpoints it names, and the window from lookback
// before the onset (the alert's start, else the incident's creation) to now.
func ScopeOf(a Alert, now time.Time, lookback time.Duration) Scope {
	if lookback <= 0 {
		lookback = config.ProductionDefaults().DataSourceLookback
	}
	sc := Scope{Service: strings.TrimSpace(a.Service), Labels: map[string]string{}}
	add := func(k, v string) {
		v = strings.TrimSpace(v)
		if v == "" || !labelName.MatchString(k) || notSeriesLabels[k] || strings.HasPrefix(k, "__") || len(v) > 256 {
			return
		}
		if serviceLabels[k] && v == sc.Service {
			return // the service itself, matched already
		}
		if _, dup := sc.Labels[k]; !dup && len(sc.Labels) < maxScopeLabels {
			sc.Labels[k] = v
		}
	}
	if gen, ok := a.Metadata["generatorURL"].(string); ok {
		for _, m := range equalityMatchers(exprOf(gen)) {
			if sc.Service == "" && serviceLabels[m[0]] {
				sc.Service = m[1]
			}
			add(m[0], m[1])
		}
	}
	tags := a.Tags
	if scope, ok := a.Metadata["scope"].(string); ok && a.Provider == "datadog" {
		// A multi-alert monitor's group ("kube_namespace:shop,pod_name:x")
		// says where this alert fired, like tags do.
		tags = map[string]string{}
		for k, v := range a.Tags {
			tags[k] = v
		}
		for _, part := range strings.Split(scope, ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(part), ":"); ok {
				tags[k] = v
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		v := tags[k]
		if mapped, ok := datadogTags[k]; ok {
			add(mapped, v)
		}
		if a.Provider == "sns" && k != "Region" && k != "AWSAccountId" {
			// CloudWatch dimensions, as cloudwatch exporters label them.
			add("dimension_"+k, v)
		}
		add(k, v)
	}
	sc.Endpoints = endpointsOf(a)
	sc.DBInstances = dbInstancesOf(a, tags)
	sc.Onset = onsetOf(a)
	if sc.Onset.IsZero() || sc.Onset.After(now) {
		sc.Onset = a.CreatedAt
	}
	if sc.Onset.IsZero() || sc.Onset.After(now) {
		sc.Onset = now
	}
	sc.End = now.UTC()
	sc.Start = sc.Onset.Add(-lookback).UTC()
	if sc.End.Sub(sc.Start) > maxWindow {
		sc.Start = sc.End.Add(-maxWindow)
	}
	return sc
}

// serviceLabels are the labels that name a service across exporters.
var serviceLabels = map[string]bool{"service": true, "app": true, "app_kubernetes_io_name": true, "job": true, "container": true}

// exprOf is the PromQL expression of a Prometheus generatorURL
// (…/graph?g0.expr=…).
func exprOf(generatorURL string) string {
	u, err := url.Parse(generatorURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("g0.expr")
}

// matcherRe finds name="value" label matchers (only equality is exact
// enough to narrow another query with).
var matcherRe = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"`)

// equalityMatchers returns the name="value" matchers inside the selectors of
// expr, in order.
func equalityMatchers(expr string) [][2]string {
	var out [][2]string
	depth := 0
	start := 0
	for i, r := range expr {
		switch r {
		case '{':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				for _, m := range matcherRe.FindAllStringSubmatch(expr[start:i], -1) {
					if m[2] != "=" {
						continue
					}
					if v, err := strconv.Unquote(`"` + m[3] + `"`); err == nil {
						out = append(out, [2]string{m[1], v})
					}
				}
			}
		}
	}
	return out
}

// endpointsOf lists the endpoints an alert names in its labels or tags.
func endpointsOf(a Alert) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range endpointKeys {
		v := strings.TrimSpace(a.Tags[k])
		if v == "" {
			if s, ok := a.Metadata[k].(string); ok {
				v = strings.TrimSpace(s)
			}
		}
		if v == "" || seen[v] || len(out) == maxEndpoints {
			continue
		}
		if _, err := ParseTarget(v); err != nil {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// onsetOf reads the alert's start from the provider's metadata.
func onsetOf(a Alert) time.Time {
	for _, k := range onsetKeys {
		if t, ok := parseTime(a.Metadata[k]); ok {
			return t.UTC()
		}
	}
	return time.Time{}
}

// parseTime accepts the time formats providers use: RFC 3339, CloudWatch's
// "2006-01-02T15:04:05.000-0700", and Unix seconds or milliseconds.
func parseTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000-0700", "2006-01-02T15:04:05-0700", "2006-01-02 15:04:05"} {
			if t, err := time.Parse(layout, s); err == nil && t.Year() > 2000 {
				return t, true
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return parseTime(f)
		}
	case float64:
		switch {
		case x > 1e12: // milliseconds
			return time.UnixMilli(int64(x)), true
		case x > 1e9:
			return time.Unix(int64(x), 0), true
		}
	}
	return time.Time{}, false
}

// dbInstanceKeys are the labels, tags and CloudWatch dimensions that name an
// Amazon RDS instance: the DBInstanceIdentifier dimension as CloudWatch, SNS
// alarms and YACE write it, and the snake-case forms alert rules give it.
var dbInstanceKeys = []string{"dimension_DBInstanceIdentifier", "DBInstanceIdentifier", "db_instance_identifier", "dbinstance_identifier",
	"db_instance", "read_replica", "replica_identifier"}

// maxDBInstances bounds the instances one alert adds to the RDS queries.
const maxDBInstances = 4

// dbInstancesOf lists the RDS instances an alert names, in key order.
func dbInstancesOf(a Alert, tags map[string]string) []string {
	var out []string
	for _, k := range dbInstanceKeys {
		v := strings.TrimSpace(tags[k])
		if v == "" {
			v, _ = a.Metadata[k].(string)
			v = strings.TrimSpace(v)
		}
		if v != "" && rdsIdentifierRe.MatchString(v) && !slices.Contains(out, v) && len(out) < maxDBInstances {
			out = append(out, v)
		}
	}
	return out
}

// rdsIdentifierRe is a DB instance identifier as RDS allows it: a letter,
// then letters, digits and hyphens, at most 63.
var rdsIdentifierRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,62}$`)
