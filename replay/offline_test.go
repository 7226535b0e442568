package replay

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
	"github.com/causeway/causeway/datasources"
)

// offlineAnswer runs one snapshot scenario's cluster through the pass's own
// steps without Temporal: the Kubernetes replay over TLS, the kubernetes
// source's plan and client, the excerpts as the gathering activity stores
// them, triage's agents, each agent, then synthesis. It is the same path a
// pass takes, so a test of it is a test of the answer users get.
func offlineAnswer(t testing.TB, s Scenario) analyzer.Result {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	shift := now.Sub(*s.Now)
	api, err := clusterlab.NewKubeAPI("replay-token", s.Kubernetes.Objects, shift)
	if err != nil {
		t.Fatal(err)
	}
	ks := clusterlab.ServeKube(api)
	defer ks.Close()
	conn := datasources.NewConnector(datasources.Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, GrantAll: true})
	settings := map[string]any{"caBundle": ks.CABundle}
	maps.Copy(settings, s.Kubernetes.Settings)
	cfg, err := conn.Prepare(context.Background(), datasources.Spec{Name: "cluster", Type: datasources.TypeKubernetes, URL: ks.URL,
		Auth: &datasources.Auth{BearerToken: "replay-token"}, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds-cluster"
	md := s.ShiftedMetadata(shift)
	sc := datasources.ScopeOf(datasources.Alert{Provider: s.AlertSource, Service: s.Alert.Service, Tags: s.Alert.Tags, Metadata: md,
		Description: s.Alert.Description, CreatedAt: now}, now, 0)
	in := analyzer.BoundInput(analyzer.Input{Title: s.Alert.Title, Description: s.Alert.Description, Severity: s.Alert.Severity,
		Service: s.Alert.Service, Environment: s.Alert.Environment, Tags: s.Alert.Tags, Metadata: md, Context: analyzer.Excerpts(s.Context)})
	in.At = now
	roles := analyzer.SelectAgents(in)
	for _, r := range datasources.AgentsOf(datasources.TypeKubernetes) {
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	sort.Strings(roles)
	plan := datasources.Plan([]datasources.Source{{ID: cfg.ID, Name: cfg.Name, Type: cfg.Type, URL: cfg.URL, Settings: cfg.Settings}}, sc, roles, 60)
	for _, q := range plan.Queries {
		res, err := conn.Run(context.Background(), cfg, q)
		if err != nil {
			t.Logf("%s: %v", q.Entry, err)
			continue
		}
		text, measured := analyzer.ReadingsText(res.Readings), res.Text == ""
		if !measured {
			text = res.Text
		}
		if text == "" && res.Note != "" {
			text = "(" + res.Note + ")"
		}
		in.Gathered = append(in.Gathered, analyzer.Excerpt{Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: cfg.ID, Type: cfg.Type, Query: q.Text},
			Text: text, Roles: q.Roles, Readings: res.Readings, Measured: measured})
	}
	var reports []analyzer.AgentReport
	for _, r := range roles {
		reports = append(reports, analyzer.Investigate(r, in))
	}
	return analyzer.Synthesize(in, reports)
}
