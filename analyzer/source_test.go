package analyzer

import (
	"strings"
	"testing"
)

func TestSourceOf(t *testing.T) {
	prom := Source{Kind: SourceDataSource, DataSourceID: "ds_1", Type: "prometheus", Query: `container_memory_working_set_bytes{pod=~"api-.*"}`}
	in := Input{
		Title:   "api pods restarting",
		Tags:    map[string]string{"team": "core"},
		Context: []string{"kubectl describe: Reason: OOMKilled"},
		Gathered: []Excerpt{
			{Source: prom, Text: "api-7d9 memory 512Mi of limit 512Mi (100%)"},
		},
	}
	cases := []struct {
		citation string
		want     *Source
	}{
		{"Reason: OOMKilled", &Source{Kind: SourceContext}},
		{"memory 512Mi of limit 512Mi", &prom},
		{"pods restarting", &Source{Kind: SourceAlert}},
		{"tags.team", &Source{Kind: SourceAlert}},
		{"context[0]", &Source{Kind: SourceContext}},
		{"tags.missing", nil},
		{"nowhere in the input", nil},
	}
	for _, c := range cases {
		got := SourceOf(in, c.citation)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("SourceOf(%q) = %+v, want %+v", c.citation, got, c.want)
		}
	}
}

func TestGatheredExcerptsAreReadByTheirRolesAndCited(t *testing.T) {
	prom := Source{Kind: SourceDataSource, DataSourceID: "ds_1", Type: "prometheus", Query: "kube_pod_container_status_last_terminated_reason"}
	in := Input{
		Title:   "api pods restarting",
		Service: "api",
		Gathered: []Excerpt{{
			Source: prom,
			Text:   "api-7d9-x2 container api last terminated: Reason: OOMKilled, Exit Code: 137",
			Roles:  []string{RoleInfrastructure},
		}},
	}
	if rep := Investigate(RoleNetwork, in); has(rep.Findings, CategoryMemoryExhaustion, StanceSupports) {
		t.Fatalf("network agent read an excerpt meant for infrastructure: %+v", rep.Findings)
	}
	rep := Investigate(RoleInfrastructure, in)
	if !has(rep.Findings, CategoryMemoryExhaustion, StanceSupports) {
		t.Fatalf("infrastructure agent missed the gathered OOM kill: %+v", rep.Findings)
	}
	res := Synthesize(in, []AgentReport{rep})
	if res.Dropped != 0 {
		t.Fatalf("findings quoting a gathered excerpt were dropped: %d", res.Dropped)
	}
	var found bool
	for _, e := range res.Evidence {
		if e.Source != nil && *e.Source == prom && strings.Contains(e.Content, "OOMKilled") {
			found = true
		}
		if e.Source == nil {
			t.Errorf("evidence without a source: %+v", e)
		}
	}
	if !found {
		t.Fatalf("no evidence entry names the query it quotes: %+v", res.Evidence)
	}
}

func TestEvidenceIsGroupedBySource(t *testing.T) {
	in := Input{
		Title:   "checkout 5xx",
		Context: []string{"java.lang.OutOfMemoryError: Java heap space"},
		Gathered: []Excerpt{{
			Source: Source{Kind: SourceChange, ChangeID: "chg_9"},
			Text:   "2026-01-02T10:00:00Z deployment of checkout v2.4.1 by ci",
		}},
	}
	rep := AgentReport{AgentRole: RoleLogs, Findings: []Finding{
		{AgentRole: RoleLogs, Category: CategoryMemoryExhaustion, Stance: StanceSupports, Strength: 0.9, Summary: "heap", Citation: "OutOfMemoryError: Java heap space"},
		{AgentRole: RoleLogs, Category: CategoryBadDeployment, Stance: StanceSupports, Strength: 0.3, Summary: "deploy", Citation: "deployment of checkout v2.4.1"},
		{AgentRole: RoleLogs, Category: "", Stance: StanceSupports, Strength: 0.2, Summary: "symptom", Citation: "title"},
	}}
	res := Synthesize(in, []AgentReport{rep})
	kinds := map[string]int{}
	for _, e := range res.Evidence {
		if e.AgentRole != RoleLogs || e.Source == nil {
			t.Fatalf("unexpected evidence entry %+v", e)
		}
		kinds[e.Source.Kind]++
	}
	if kinds[SourceContext] != 1 || kinds[SourceChange] != 1 || kinds[SourceAlert] != 1 || len(res.Evidence) != 3 {
		t.Fatalf("want one entry per source (context, change, alert), got %+v", res.Evidence)
	}
}
