package datasources

import (
	"os"
	"path/filepath"
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
	if want := RolesMarkdown(); !strings.Contains(string(doc), want) {
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
		if _, entries := RolePlans(r.Name); len(entries) == 0 {
			t.Errorf("agent %s reads no plan entry", r.Name)
		}
	}
}
