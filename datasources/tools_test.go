package datasources

import (
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
)

func TestResolveToolScopesCalls(t *testing.T) {
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sc := Scope{Service: "checkout", Labels: map[string]string{}, Start: end.Add(-30 * time.Minute), End: end}
	own := []Source{{ID: "ds_prom", Name: "prom", Type: TypePrometheus, Settings: map[string]any{}},
		{ID: "ds_pg", Name: "pg", Type: TypePostgres, Settings: map[string]any{}}}
	tools := ToolsFor(analyzer.RoleMetrics, []string{TypePrometheus, TypePostgres})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	// The metrics agent reads no PostgreSQL plan entry, so it gets no postgres tool.
	if strings.Join(names, ",") != ToolQueryPrometheus {
		t.Fatalf("metrics tools = %v, want only %s", names, ToolQueryPrometheus)
	}

	q, err := ResolveTool(tools, ToolQueryPrometheus, `{"dataSourceId":"ds_prom","entry":"memory_usage","start":"2026-03-01T11:50:00Z"}`, analyzer.RoleMetrics, own, sc)
	if err != nil {
		t.Fatal(err)
	}
	if q.Entry != "memory_usage" || q.DataSourceID != "ds_prom" || !q.Start.Equal(end.Add(-10*time.Minute)) || !q.End.Equal(end) ||
		!strings.Contains(q.Text, `container_memory_working_set_bytes{container!="", container!="POD", service="checkout"}`) {
		t.Fatalf("query = %+v", q)
	}

	for name, c := range map[string]struct{ tool, args, want string }{
		"another tenant's source": {ToolQueryPrometheus, `{"dataSourceId":"ds_other_tenant","entry":"memory_usage"}`, "not one of the listed data sources"},
		"before the window":       {ToolQueryPrometheus, `{"dataSourceId":"ds_prom","entry":"memory_usage","start":"2026-03-01T10:00:00Z"}`, "outside the incident window"},
		"after the window":        {ToolQueryPrometheus, `{"dataSourceId":"ds_prom","entry":"memory_usage","end":"2026-03-02T10:00:00Z"}`, "outside the incident window"},
		"reversed range":          {ToolQueryPrometheus, `{"dataSourceId":"ds_prom","entry":"memory_usage","start":"2026-03-01T11:59:00Z","end":"2026-03-01T11:50:00Z"}`, "start must be before end"},
		"malformed JSON":          {ToolQueryPrometheus, `{"dataSourceId":"ds_prom",`, "not a JSON object"},
		"free-form PromQL":        {ToolQueryPrometheus, `{"dataSourceId":"ds_prom","query":"up"}`, "not a JSON object"},
		"entry of another agent":  {ToolQueryPrometheus, `{"dataSourceId":"ds_prom","entry":"restarts"}`, "is not one of"},
		"wrong source type":       {ToolQueryPrometheus, `{"dataSourceId":"ds_pg","entry":"memory_usage"}`, "is of type postgres"},
		"tool not offered":        {ToolQueryPostgres, `{"dataSourceId":"ds_pg","entry":"connections"}`, "unknown tool"},
		"oversized arguments":     {ToolQueryPrometheus, `{"dataSourceId":"` + strings.Repeat("x", MaxToolArguments) + `"}`, "longer than"},
	} {
		if _, err := ResolveTool(tools, c.tool, c.args, analyzer.RoleMetrics, own, sc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.want)
		}
	}
}

func TestResolveToolProbeTargets(t *testing.T) {
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sc := Scope{Service: "api", Labels: map[string]string{}, Start: end.Add(-30 * time.Minute), End: end}
	own := []Source{{ID: "ds_probe", Name: "probe", Type: TypeProbe, Settings: map[string]any{"targets": []any{"https://api.example.com"}}}}
	tools := ToolsFor(analyzer.RoleNetwork, []string{TypeProbe})
	q, err := ResolveTool(tools, ToolProbeEndpoint, `{"dataSourceId":"ds_probe","entry":"tls","target":"api.example.com:443"}`, analyzer.RoleNetwork, own, sc)
	if err != nil {
		t.Fatal(err)
	}
	if q.Entry != "tls" || q.Target != "api.example.com:443" {
		t.Fatalf("query = %+v", q)
	}
	if _, err := ResolveTool(tools, ToolProbeEndpoint, `{"dataSourceId":"ds_probe","entry":"tcp","target":"10.0.0.1:5432"}`, analyzer.RoleNetwork, own, sc); err == nil ||
		!strings.Contains(err.Error(), "not an endpoint this source probes") {
		t.Fatalf("unknown target: err = %v", err)
	}
}
