package analyzer

import (
	"slices"
	"testing"
)

// TestRoleTable: the rows are sorted and unique (RoleOf searches them), an
// agent triage always sends has no words and every other one has some, and
// every answer but unknown has an agent that speaks to it.
func TestRoleTable(t *testing.T) {
	want := []string{"database", "deployments", "infrastructure", "logs", "metrics", "network"}
	if !slices.Equal(Roles, want) {
		t.Fatalf("Roles = %v, want the six API values %v", Roles, want)
	}
	spoken := map[string]bool{}
	for i, r := range RoleTable {
		if RoleOf(r.Name) != &RoleTable[i] {
			t.Errorf("RoleOf(%q) does not find its row", r.Name)
		}
		if r.Always != (r.Keywords == nil) {
			t.Errorf("%s: Always %v with keywords %v", r.Name, r.Always, r.Keywords)
		}
		if r.Domain == "" || r.Brief == "" {
			t.Errorf("%s has no domain or no brief", r.Name)
		}
		for _, c := range r.Categories {
			if !ValidCategory(c) || c == CategoryUnknown {
				t.Errorf("%s speaks to %q, not an answer", r.Name, c)
			}
			spoken[c] = true
		}
	}
	for _, c := range Categories {
		if c != CategoryUnknown && !spoken[c] {
			t.Errorf("no agent speaks to %s", c)
		}
	}
	if RoleOf("security") != nil || ValidRole("") {
		t.Error("a name outside the table is a role")
	}
}
