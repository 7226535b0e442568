package datasources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/causeway/causeway/clip"
)

// Tool is one query an LLM agent may call by name. A tool never carries a
// query text of the model's own: it names a plan entry (Plans) of one of the
// tenant's sources, so every call is a query Causeway would run itself —
// read-only by construction, scoped to the incident's service — and the model
// chooses only which source, which entry, which part of the window and, for
// probes, which of the known endpoints.
type Tool struct {
	Name        string
	Description string
	// Types are the source types the tool runs against.
	Types []string
	// Entries are the plan entries the role may choose, in plan order; a
	// tool with one entry takes no "entry" argument.
	Entries []string
	// Target is true for probes: the endpoint is an argument.
	Target bool
}

// Tool names, as the model sees them.
const (
	ToolQueryPrometheus = "query_prometheus"
	ToolQueryLogs       = "query_logs"
	ToolGetPods         = "get_pods"
	ToolGetEvents       = "get_events"
	ToolGetRollouts     = "get_rollouts"
	ToolGetCluster      = "get_cluster_objects"
	ToolQueryPostgres   = "query_postgres"
	ToolProbeEndpoint   = "probe_endpoint"
)

// toolDefs binds each tool to its source types and, for the Kubernetes
// tools, the one entry it runs.
var toolDefs = []struct {
	name, description string
	types             []string
	// entries, when set, are the only plan entries the tool runs.
	entries []string
	target  bool
}{
	{ToolQueryPrometheus, "Run one of the predefined PromQL queries for the incident's service over a part of the incident window.", []string{TypePrometheus}, nil, false},
	{ToolQueryLogs, "Read the service's error-level log lines (Loki or Elasticsearch) over a part of the incident window.", []string{TypeLoki, TypeElasticsearch}, nil, false},
	{ToolGetPods, "List the namespace's pods: phase, scheduling, waiting reasons, restarts, last termination reason and exit code, probes and ports of those in trouble.", []string{TypeKubernetes}, []string{"pods"}, false},
	{ToolGetEvents, "List the Kubernetes events of the service's namespace in the incident window.", []string{TypeKubernetes}, []string{"events"}, false},
	{ToolGetRollouts, "List the service's Deployments and ReplicaSets: images, revisions and rollout times.", []string{TypeKubernetes}, []string{"rollouts"}, false},
	{ToolGetCluster, "Read the namespace's other objects: workloads (ready against desired, failing conditions, service accounts), Services against the pods they select and the addresses workloads are configured with, nodes and kube-system agents, ResourceQuotas, PersistentVolumeClaims.",
		[]string{TypeKubernetes}, []string{"workloads", "services", "nodes", "quotas", "volumes"}, false},
	{ToolQueryPostgres, "Run one of the predefined read-only PostgreSQL diagnostic queries.", []string{TypePostgres}, nil, false},
	{ToolProbeEndpoint, "Probe one of the known endpoints: DNS resolution, TCP connect or TLS certificate.", []string{TypeProbe}, nil, true},
}

// ToolsFor lists the tools of role's domain: those with at least one plan
// entry the role reads on a source type the tenant connected.
func ToolsFor(role string, sourceTypes []string) []Tool {
	var out []Tool
	for _, d := range toolDefs {
		var entries []string
		for _, e := range Plans {
			if !slices.Contains(d.types, e.Type) || !slices.Contains(sourceTypes, e.Type) || !slices.Contains(e.Agents, role) {
				continue
			}
			if d.entries != nil && !slices.Contains(d.entries, e.ID) {
				continue
			}
			if !slices.Contains(entries, e.ID) {
				entries = append(entries, e.ID)
			}
		}
		if len(entries) > 0 {
			out = append(out, Tool{Name: d.name, Description: d.description, Types: d.types, Entries: entries, Target: d.target})
		}
	}
	return out
}

// Schema is the JSON schema of the tool's arguments.
func (t Tool) Schema() map[string]any {
	props := map[string]any{
		"dataSourceId": map[string]any{"type": "string", "description": "id of one of the listed data sources of type " + strings.Join(t.Types, " or ")},
		"start":        map[string]any{"type": "string", "format": "date-time", "description": "RFC 3339; inside the incident window; default its start"},
		"end":          map[string]any{"type": "string", "format": "date-time", "description": "RFC 3339; inside the incident window; default its end"},
	}
	required := []string{"dataSourceId"}
	if len(t.Entries) > 1 {
		props["entry"] = map[string]any{"type": "string", "enum": t.Entries, "description": "which predefined query to run"}
		required = append(required, "entry")
	}
	if t.Target {
		props["target"] = map[string]any{"type": "string", "description": "one of the endpoints listed for the data source"}
		required = append(required, "target")
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// toolArgs are every argument any tool takes.
type toolArgs struct {
	DataSourceID string `json:"dataSourceId"`
	Entry        string `json:"entry"`
	Start        string `json:"start"`
	End          string `json:"end"`
	Target       string `json:"target"`
}

// MaxToolArguments bounds a tool call's arguments; longer ones are refused
// unread, so what enters history stays small.
const MaxToolArguments = 2 << 10

// ResolveTool turns a model's tool call into the query it stands for, or says
// why it is refused: an unknown tool, arguments that are not the tool's JSON
// object, a source that is not one of sources (the tenant's own), a range
// outside sc's window, an endpoint the source does not probe. The query is
// planned exactly as gathering plans it, over the chosen part of the window;
// its Key is left for the caller to make unique.
func ResolveTool(tools []Tool, name, arguments string, role string, sources []Source, sc Scope) (Query, error) {
	i := slices.IndexFunc(tools, func(t Tool) bool { return t.Name == name })
	if i < 0 {
		return Query{}, fmt.Errorf("unknown tool %q", clipName(name))
	}
	t := tools[i]
	if len(arguments) > MaxToolArguments {
		return Query{}, fmt.Errorf("arguments longer than %d bytes", MaxToolArguments)
	}
	var a toolArgs
	dec := json.NewDecoder(bytes.NewReader([]byte(arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Query{}, fmt.Errorf("arguments are not a JSON object of this tool's parameters: %v", err)
	}
	if dec.More() {
		return Query{}, fmt.Errorf("arguments hold more than one JSON value")
	}
	si := slices.IndexFunc(sources, func(s Source) bool { return s.ID == a.DataSourceID })
	if a.DataSourceID == "" || si < 0 {
		return Query{}, fmt.Errorf("dataSourceId %q is not one of the listed data sources", clipName(a.DataSourceID))
	}
	src := sources[si]
	if !slices.Contains(t.Types, src.Type) {
		return Query{}, fmt.Errorf("data source %q is of type %s; %s reads %s", src.ID, src.Type, t.Name, strings.Join(t.Types, " or "))
	}
	entry := a.Entry
	if len(t.Entries) == 1 && entry == "" {
		entry = t.Entries[0]
	}
	if !slices.Contains(t.Entries, entry) {
		return Query{}, fmt.Errorf("entry %q is not one of %s", clipName(a.Entry), strings.Join(t.Entries, ", "))
	}
	if a.Target != "" && !t.Target {
		return Query{}, fmt.Errorf("%s takes no target", t.Name)
	}
	nsc := sc
	var err error
	if nsc.Start, err = rangeBound("start", a.Start, sc.Start, sc); err != nil {
		return Query{}, err
	}
	if nsc.End, err = rangeBound("end", a.End, sc.End, sc); err != nil {
		return Query{}, err
	}
	if !nsc.Start.Before(nsc.End) {
		return Query{}, fmt.Errorf("start must be before end")
	}
	k, ok := kinds[src.Type]
	if !ok {
		return Query{}, fmt.Errorf("data source %q is of a type this version cannot query", src.ID)
	}
	qs, notes := k.plan(src, nsc, []string{role})
	for _, q := range qs {
		if q.Entry != entry || (t.Target && q.Target != a.Target) {
			continue
		}
		q.Roles = []string{role}
		return q, nil
	}
	if t.Target {
		return Query{}, fmt.Errorf("target %q is not an endpoint this source probes with %s", clipName(a.Target), entry)
	}
	if len(notes) > 0 {
		return Query{}, fmt.Errorf("%s", strings.Join(notes, "; "))
	}
	return Query{}, fmt.Errorf("entry %s cannot run against data source %q", entry, src.ID)
}

// rangeBound parses one end of a requested range and refuses it outside the
// incident window.
func rangeBound(field, raw string, def time.Time, sc Scope) (time.Time, error) {
	if raw == "" {
		return def, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time", field, clipName(raw))
	}
	t = t.UTC()
	if t.Before(sc.Start) || t.After(sc.End) {
		return time.Time{}, fmt.Errorf("%s %s is outside the incident window %s to %s", field, t.Format(time.RFC3339),
			sc.Start.Format(time.RFC3339), sc.End.Format(time.RFC3339))
	}
	return t, nil
}

// clipName keeps a model-supplied value short in an error message.
func clipName(s string) string {
	return clip.To(s, 80)
}

// ProbeTargets lists the endpoints a probe source may be asked about in
// scope sc (its settings' targets and the endpoints the alert names), as
// probe_endpoint takes them; nil for other types.
func ProbeTargets(s Source, sc Scope) []string {
	if s.Type != TypeProbe {
		return nil
	}
	var out []string
	for _, t := range probeTargets(s, sc) {
		out = append(out, t.Address())
	}
	return out
}
