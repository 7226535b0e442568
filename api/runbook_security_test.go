package api_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// runbookBody is a runbook answering every incident, with the given steps.
func runbookBody(steps ...map[string]any) map[string]any {
	return map[string]any{"name": "rb", "match": map[string]any{"categories": []string{"db_connection_exhaustion"}}, "steps": steps}
}

// TestRunbookSQLTargetsArePerTenant shows a tenant may only name the SQL
// targets the operator listed for it: a target without an entry is usable by
// nobody, "*" by every tenant, and a listed tenant by that tenant alone.
func TestRunbookSQLTargetsArePerTenant(t *testing.T) {
	cfg := apiConfig(t)
	dir := t.TempDir()
	cfg.SQLTargets = "ops=sqlite:" + filepath.Join(dir, "ops.db") + ",shared=sqlite:" + filepath.Join(dir, "shared.db") +
		",mine=sqlite:" + filepath.Join(dir, "mine.db")
	s := startAPI(t, cfg)
	stranger := s.signup(t, "stranger@example.com")
	sqlStep := func(target string) map[string]any {
		return map[string]any{"type": "sql_migration", "description": "x", "params": map[string]any{"target": target, "statements": []string{"SELECT 1"}}}
	}
	var body errorBody
	if st, _ := s.do(t, "POST", "/v1/runbooks", stranger.AccessToken, runbookBody(sqlStep("ops")), &body); st != http.StatusBadRequest || body.Error != "validation_error" || !strings.Contains(body.Message, "ops") {
		t.Fatalf("target with no tenant entry: %d %+v", st, body)
	}
	var list struct {
		Runbooks []any `json:"runbooks"`
	}
	if s.do(t, "GET", "/v1/runbooks", stranger.AccessToken, nil, &list); len(list.Runbooks) != 0 {
		t.Fatalf("refused runbook stored: %v", list.Runbooks)
	}

	// The operator now lists targets: a second API process on the same
	// database reads the new setting.
	owner := s.signup(t, "owner@example.com")
	cfg2 := *cfg
	cfg2.SQLTargetTenants = "shared:*,mine:" + owner.TenantID
	s2 := startAPI(t, &cfg2)
	want := []struct {
		who    tokens
		target string
		status int
	}{
		{owner, "mine", http.StatusCreated}, {stranger, "mine", http.StatusBadRequest},
		{owner, "shared", http.StatusCreated}, {stranger, "shared", http.StatusCreated},
		{owner, "ops", http.StatusBadRequest}, {owner, "nope", http.StatusBadRequest},
	}
	for _, w := range want {
		if st, _ := s2.do(t, "POST", "/v1/runbooks", w.who.AccessToken, runbookBody(sqlStep(w.target)), nil); st != w.status {
			t.Errorf("tenant %s, target %s: %d, want %d", w.who.TenantID, w.target, st, w.status)
		}
	}
}

// TestRunbookTemplatesAreRestricted shows the creation-time half of the
// template rules: anything beyond the four allowed forms, alert values in a
// URL's scheme or host, SQL that quotes an alert value, and a plan larger
// than 64 KiB are all refused with a validation error.
func TestRunbookTemplatesAreRestricted(t *testing.T) {
	cfg := apiConfig(t)
	cfg.SQLTargets = "main=sqlite:" + filepath.Join(t.TempDir(), "main.db")
	s := startAPI(t, cfg)
	owner := s.signup(t, "owner@example.com")
	cases := map[string]map[string]any{
		"nested range": {"type": "http", "description": "x", "params": map[string]any{"url": "https://hooks.example.com/x",
			"body": map[string]any{"v": `{{range .Tags}}{{range $.Tags}}{{printf "%0999d" 1}}{{end}}{{end}}`}}},
		"templated host": {"type": "http", "description": "x", "params": map[string]any{"url": "https://{{.Environment}}/rollback"}},
		"quoted sql":     {"type": "sql_migration", "description": "x", "params": map[string]any{"target": "main", "statements": []string{"DELETE FROM t WHERE s = '{{.Service}}'"}}},
		"huge plan": {"type": "http", "description": "x", "params": map[string]any{"url": "https://hooks.example.com/x",
			"body": map[string]any{"blob": strings.Repeat("a", 70<<10)}}},
	}
	for name, step := range cases {
		var body errorBody
		if st, _ := s.do(t, "POST", "/v1/runbooks", owner.AccessToken, runbookBody(step), &body); st != http.StatusBadRequest || body.Error != "validation_error" {
			t.Errorf("%s: %d %+v", name, st, body)
		}
	}
}
