package llm

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/causeway/causeway/analyzer"
)

func TestSystemPromptPerRole(t *testing.T) {
	domain := map[string]string{
		analyzer.RoleLogs:           "LOGS specialist",
		analyzer.RoleMetrics:        "METRICS specialist",
		analyzer.RoleDeployments:    "DEPLOYMENTS specialist",
		analyzer.RoleDatabase:       "DATABASE specialist",
		analyzer.RoleInfrastructure: "INFRASTRUCTURE specialist",
		analyzer.RoleNetwork:        "NETWORK specialist",
	}
	seen := map[string]string{}
	for _, role := range analyzer.Roles {
		p := SystemPrompt(role)
		if !strings.Contains(p, domain[role]) {
			t.Errorf("%s: prompt does not name its domain", role)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s share a prompt", role, other)
		}
		seen[p] = role
		for _, c := range analyzer.Categories {
			if !strings.Contains(p, "- "+c+": ") {
				t.Errorf("%s: category %s not defined", role, c)
			}
		}
		for _, must := range []string{
			"not its symptoms", "most specific mechanism", "noise unless", `category "unknown"`,
			`{"findings":[{"category"`, `"supports"|"refutes"`, "verbatim quote", "tags.<key>", "metadata.<key>",
			"not instructions",
		} {
			if !strings.Contains(p, must) {
				t.Errorf("%s: prompt lacks %q", role, must)
			}
		}
	}
	if SystemPrompt("astrology") != "" {
		t.Error("unknown role must have no prompt")
	}
}

func TestUserPromptContainsEverything(t *testing.T) {
	in := testInput()
	p := UserPrompt(in)
	for _, want := range []string{
		"title: High error rate on checkout-api",
		"5xx rate above 20% for 10 minutes",
		"severity: critical",
		"service: checkout-api",
		"environment: production",
		"region: eu-west-1", "team: payments",
		`"p95_ms": 2300`, `"max": 50`,
		"--- context[0] ---", "--- context[1] ---",
		in.Context[0], in.Context[1],
	} {
		if !strings.Contains(p, want) {
			t.Errorf("user prompt lacks %q", want)
		}
	}
	if UserPrompt(in) != p {
		t.Error("UserPrompt is not deterministic")
	}
	// Every citation the offline analyzer would accept can be made from what the model sees.
	for _, c := range []string{"title", "tags.region", "metadata.p95_ms"} {
		if !analyzer.CitationValid(in, c) {
			t.Errorf("%s not citable", c)
		}
	}

	empty := UserPrompt(analyzer.Input{Title: "t"})
	if !strings.Contains(empty, "SUPPLEMENTAL CONTEXT (0 entries") || !strings.Contains(empty, "(none)") {
		t.Errorf("empty input prompt: %q", empty)
	}
}

func TestUserPromptTruncation(t *testing.T) {
	huge := func(tag string, n int) string {
		return tag + " " + strings.Repeat("x", n-len(tag)-1)
	}
	in := testInput()
	in.Context = []string{
		huge("BEGIN-A short", 500),
		huge("BEGIN-B huge log", 200000),
		huge("BEGIN-C medium", 30000),
		huge("BEGIN-D big", 80000),
		"BEGIN-E tiny entry stays whole",
	}
	p := UserPrompt(in)
	if len(p) > MaxUserPromptChars {
		t.Fatalf("prompt is %d chars, cap %d", len(p), MaxUserPromptChars)
	}
	if len(p) < MaxUserPromptChars-2000 {
		t.Errorf("prompt is %d chars; truncation wasted the budget", len(p))
	}
	for i, e := range in.Context {
		if !strings.Contains(p, fmt.Sprintf("--- context[%d] ---\n%s", i, e[:min(len(e), 60)])) {
			t.Errorf("entry %d lost its beginning", i)
		}
	}
	if !strings.Contains(p, in.Context[0]) || !strings.Contains(p, in.Context[4]) {
		t.Error("short entries must not be cut while longer ones can be")
	}
	if got := strings.Count(p, "[... truncated "); got != 3 {
		t.Errorf("cut markers = %d, want 3 (the three long entries)", got)
	}
	for _, must := range []string{"title: High error rate", "service: checkout-api", "region: eu-west-1", `"p95_ms"`} {
		if !strings.Contains(p, must) {
			t.Errorf("alert field %q lost while context could be cut", must)
		}
	}
}

func TestUserPromptTruncationHugeAlert(t *testing.T) {
	in := testInput()
	in.Description = strings.Repeat("desc ", 30000)
	in.Metadata = map[string]any{"blob": strings.Repeat("m", 90000)}
	in.Context = []string{strings.Repeat("é", 50000), "ctx-two"}
	p := UserPrompt(in)
	if len(p) > MaxUserPromptChars {
		t.Fatalf("prompt is %d chars, cap %d", len(p), MaxUserPromptChars)
	}
	if !utf8.ValidString(p) {
		t.Error("truncation split a rune")
	}
	for _, must := range []string{"title: High error rate", "--- context[0] ---\néé", "ctx-two", "desc desc", `"blob": "mmm`} {
		if !strings.Contains(p, must) {
			t.Errorf("prompt lacks %q", must)
		}
	}
}

func TestUserPromptManyEntries(t *testing.T) {
	in := analyzer.Input{Title: "t"}
	for i := 0; i < 5000; i++ {
		in.Context = append(in.Context, strings.Repeat("line ", 40))
	}
	if p := UserPrompt(in); len(p) > MaxUserPromptChars || !utf8.ValidString(p) {
		t.Fatalf("prompt is %d chars", len(p))
	}
}

func TestUserPromptLabelsGatheredExcerpts(t *testing.T) {
	in := analyzer.Input{
		Title: "api restarting",
		Gathered: []analyzer.Excerpt{{
			Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: "ds_7", Type: "prometheus", Query: "up{job=\"api\"}"},
			Text:   "up{job=\"api\"} = 0 since 10:02",
		}},
	}
	p := UserPrompt(in)
	for _, want := range []string{"GATHERED BY CAUSEWAY (1 entries", "gathered[0] from prometheus data source ds_7, query: up{job=\"api\"}", "= 0 since 10:02"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(UserPrompt(analyzer.Input{Title: "x"}), "GATHERED") {
		t.Error("an input with nothing gathered must not get a gathered section")
	}
}
