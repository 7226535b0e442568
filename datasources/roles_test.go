package datasources

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causeway/causeway/analyzer"
)

// TestAgentRolesAreDocumented keeps the agent-role table of
// docs/query-plans.md equal to analyzer.RoleTable and the plan entries.
func TestAgentRolesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "query-plans.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := rolesMarkdown(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/query-plans.md's agent-role table is stale; it should read:\n%s", want)
	}
}

// TestEveryPlanEntryIsReadByAnAgent: a plan entry for a role that is not in
// the table would be queried for nobody, and an agent without entries would
// reason over the alert's words alone.
func TestEveryPlanEntryIsReadByAnAgent(t *testing.T) {
	for _, e := range Plans {
		if len(e.Agents) == 0 {
			t.Errorf("plan entry %s/%s names no agent", e.Type, e.ID)
		}
		for _, a := range e.Agents {
			if !analyzer.ValidRole(a) {
				t.Errorf("plan entry %s/%s names %q, not an agent role", e.Type, e.ID, a)
			}
		}
	}
	for _, r := range analyzer.RoleTable {
		if _, entries := rolePlans(r.Name); len(entries) == 0 {
			t.Errorf("agent %s reads no plan entry", r.Name)
		}
	}
}

// rolePlans are the source types an agent role queries and the ids of its
// plan entries, each sorted: the gathering half of the role's row
// (analyzer.RoleTable).
func rolePlans(role string) (types, entries []string) {
	for _, e := range Plans {
		if slices.Contains(e.Agents, role) {
			types = append(types, e.Type)
			entries = append(entries, e.Type+"/"+e.ID)
		}
	}
	slices.Sort(types)
	slices.Sort(entries)
	return slices.Compact(types), slices.Compact(entries)
}

// rolesMarkdown is the agent-role table of docs/query-plans.md: each role of
// analyzer.RoleTable with its domain, when triage sends it, the categories it
// speaks to and the sources and plan entries it reads. TestAgentRolesAreDocumented
// keeps the page equal to it.
func rolesMarkdown() string {
	var b strings.Builder
	b.WriteString("| agent | reads | dispatched | speaks to | sources | plan entries |\n|---|---|---|---|---|---|\n")
	for _, r := range analyzer.RoleTable {
		when := "when its words appear in the alert or context, and for critical alerts"
		if r.Always {
			when = "always"
		}
		types, entries := rolePlans(r.Name)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", r.Name, r.Domain, when,
			codeList(r.Categories), codeList(types), codeList(entries))
	}
	return b.String()
}

func codeList(items []string) string {
	if len(items) == 0 {
		return "—"
	}
	return "`" + strings.Join(items, "`, `") + "`"
}
