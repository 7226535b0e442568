package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/internal/clusterlab"
)

// offlineAnswer runs one snapshot scenario's cluster through the pass's own
// steps without Temporal: the Kubernetes replay over TLS, the kubernetes
// source's plan and client, the excerpts as the gathering activity stores
// them, triage's agents, each agent, then synthesis. It is the same path a
// pass takes, so a test of it is a test of the answer users get.
func offlineAnswer(t testing.TB, s Scenario) (analyzer.Result, time.Duration) {
	t.Helper()
	return offlineAnswerDebug(t, s, nil)
}

// offlineAnswerDebug is offlineAnswer, showing what the agents read and
// reported to show when it is set.
func offlineAnswerDebug(t testing.TB, s Scenario, show func(analyzer.Input, []analyzer.AgentReport)) (analyzer.Result, time.Duration) {
	t.Helper()
	start := time.Now()
	now := time.Now().UTC().Truncate(time.Second)
	shift := now.Sub(*s.Now)
	api, err := clusterlab.NewKubeAPI("replay-token", s.Kubernetes.Objects, shift)
	if err != nil {
		t.Fatal(err)
	}
	ks := clusterlab.ServeKube(api)
	defer ks.Close()
	conn := datasources.NewConnector(datasources.Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	settings := map[string]any{"caBundle": ks.CABundle}
	for k, v := range s.Kubernetes.Settings {
		settings[k] = v
	}
	cfg, err := conn.Prepare(context.Background(), datasources.Spec{Name: "cluster", Type: datasources.TypeKubernetes, URL: ks.URL,
		Auth: &datasources.Auth{BearerToken: "replay-token"}, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds-cluster"
	md := map[string]any{}
	for k, v := range s.Alert.Metadata {
		md[k] = v
	}
	if v, ok := md["startsAt"].(string); ok {
		if at, err := time.Parse(time.RFC3339, v); err == nil {
			md["startsAt"] = at.Add(shift).Format(time.RFC3339)
		}
	}
	sc := datasources.ScopeOf(datasources.Alert{Provider: s.AlertSource, Service: s.Alert.Service, Tags: s.Alert.Tags, Metadata: md,
		Description: s.Alert.Description, CreatedAt: now}, now, 0)
	in := analyzer.BoundInput(analyzer.Input{Title: s.Alert.Title, Description: s.Alert.Description, Severity: s.Alert.Severity,
		Service: s.Alert.Service, Environment: s.Alert.Environment, Tags: s.Alert.Tags, Metadata: md, Context: analyzer.Excerpts(s.Context)})
	in.At = now
	roles := analyzer.SelectAgents(in)
	for _, r := range datasources.AgentsOf(datasources.TypeKubernetes) {
		if !contains(roles, r) {
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
	if show != nil {
		show(in, reports)
	}
	return analyzer.Synthesize(in, reports), time.Since(start)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// score compares an answer with a label: category, mechanism and culprit.
func score(s Scenario, res analyzer.Result) (cat, mech, culprit bool) {
	cat = res.Category == s.Expected.Category
	mech = s.Expected.Mechanism == "" || res.Mechanism == s.Expected.Mechanism
	switch c := s.Expected.Culprit; {
	case c == nil:
		culprit = res.Culprit == nil
	case res.Culprit != nil:
		culprit = c.Kind == res.Culprit.Kind && c.Name == res.Culprit.Name && (c.Namespace == "" || c.Namespace == res.Culprit.Namespace)
	}
	return cat, mech, culprit
}

// TestKubernetesSetOffline prints the development set's answers, taken
// through the pass's own steps without Temporal (set
// CAUSEWAY_K8S_SET=dev to run it; the sealed set is measured through
// `causeway eval`, never here).
func TestKubernetesSetOffline(t *testing.T) {
	set := os.Getenv("CAUSEWAY_K8S_SET")
	if set != "dev" {
		t.Skip("set CAUSEWAY_K8S_SET=dev to print the development set's answers")
	}
	scenarios, err := LoadDir(filepath.Join("..", "analyzer", "testdata", "kubernetes", set))
	if err != nil {
		t.Fatal(err)
	}
	var nCat, nMech, nCul int
	for _, s := range scenarios {
		res, took := offlineAnswer(t, s)
		c, m, u := score(s, res)
		mark := func(ok bool) string {
			if ok {
				return "✓"
			}
			return "✗"
		}
		if c {
			nCat++
		}
		if c && m {
			nMech++
		}
		if u {
			nCul++
		}
		got := "<nil>"
		if res.Culprit != nil {
			got = res.Culprit.String()
		}
		want := "<nil>"
		if s.Expected.Culprit != nil {
			want = s.Expected.Culprit.String()
		}
		fmt.Printf("%-34s %s%s%s %-20s %-22s → %-20s %-22s %.2f %s | want %s, got %s\n", s.ID, mark(c), mark(m), mark(u), s.Expected.Category, s.Expected.Mechanism,
			res.Category, res.Mechanism, res.Confidence, took.Round(time.Millisecond), want, got)
		if os.Getenv("CAUSEWAY_K8S_VERBOSE") != "" && !(c && m && u) {
			raw, _ := json.MarshalIndent(struct {
				RootCause  string
				Hypotheses []analyzer.Hypothesis
				Candidates []analyzer.Candidate
				Evidence   []analyzer.Evidence
			}{res.RootCause, res.Hypotheses, res.Candidates, res.Evidence}, "  ", "  ")
			fmt.Println("  " + strings.ReplaceAll(string(raw), `\"`, `'`))
		}
	}
	fmt.Printf("\ncategory %d/%d, mechanism %d/%d, culprit %d/%d\n", nCat, len(scenarios), nMech, len(scenarios), nCul, len(scenarios))
}
