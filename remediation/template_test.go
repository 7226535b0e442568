package remediation

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// hostile is what an attacker who controls an alert puts in its fields.
var hostile = TemplateData{
	Service:     "x'; DROP TABLE users; --",
	Environment: "attacker.example#",
	IncidentID:  "inc_1",
	Tags:        map[string]string{"path": "../../admin", "q": "a&admin=true#frag", "dot": ".."},
}

// TestTemplatesAllowOnlyFourForms shows a step param may hold only
// {{.Service}}, {{.Environment}}, {{.IncidentID}} and {{index .Tags "k"}}:
// functions, pipelines, range, with, define and variables are refused when the
// runbook is written, and again when it is rendered.
func TestTemplatesAllowOnlyFourForms(t *testing.T) {
	bad := []string{
		`{{range $i, $e := .Tags}}{{range $.Tags}}x{{end}}{{end}}`,
		`{{printf "%0999999d" 1}}`,
		`{{with .Service}}{{.}}{{end}}`,
		`{{define "t"}}x{{end}}{{template "t"}}`,
		`{{.Service | printf "%s"}}`,
		`{{$x := .Service}}{{$x}}`,
		`{{if .Service}}y{{end}}`,
		`{{index .Tags .Service}}`,
		`{{.Tags}}`,
		`{{- .Service -}}`,
		`{{/* comment */}}`,
		`{{len .Service}}`,
	}
	for _, b := range bad {
		if err := ValidateStep(StepHTTP, map[string]any{"url": "https://hooks.example.com/x", "headers": map[string]any{"X-Run": b}}, SQLTargets{}, "ten_1", false); err == nil {
			t.Errorf("template %q accepted at creation", b)
		}
		if _, err := RenderParams(map[string]any{"headers": map[string]any{"X-Run": b}}, hostile); err == nil {
			t.Errorf("template %q rendered", b)
		}
	}
	out, err := RenderParams(map[string]any{"headers": map[string]any{"X-Run": `{{.Service}}|{{ .Environment }}|{{.IncidentID}}|{{index .Tags "dot"}}|{{index .Tags "missing"}}`}},
		TemplateData{Service: "api", Environment: "prod", IncidentID: "inc_9", Tags: map[string]string{"dot": "v"}})
	if err != nil || out["headers"].(map[string]any)["X-Run"] != "api|prod|inc_9|v|" {
		t.Fatalf("allowed forms: %v %v", out, err)
	}
}

// TestURLTemplatesStayInPathAndQuery shows alert values may not choose where a
// step's request goes: a template in the scheme, host or port is refused, and
// values in the path or query arrive percent-encoded, so they cannot add path
// segments, query parameters or a fragment.
func TestURLTemplatesStayInPathAndQuery(t *testing.T) {
	for _, u := range []string{
		"https://{{.Environment}}/rollback",
		"https://{{.Service}}.example.com/flags",
		"{{.Environment}}://hooks.example.com/",
		"https://hooks.example.com:{{index .Tags \"port\"}}/",
		"https://hooks.example.com{{.Service}}/x",
		"https://user:{{.Service}}@hooks.example.com/x",
		"https://hooks.example.com/x#{{.Service}}",
	} {
		if err := ValidateStep(StepHTTP, map[string]any{"url": u}, SQLTargets{}, "ten_1", false); err == nil {
			t.Errorf("url %q accepted", u)
		}
		if _, err := RenderParams(map[string]any{"url": u}, hostile); err == nil {
			t.Errorf("url %q rendered", u)
		}
	}
	tmpl := `https://hooks.example.com/svc/{{.Service}}/{{index .Tags "path"}}?env={{.Environment}}&q={{index .Tags "q"}}`
	if err := ValidateStep(StepHTTP, map[string]any{"url": tmpl}, SQLTargets{}, "ten_1", false); err != nil {
		t.Fatalf("path and query templates refused: %v", err)
	}
	out, err := RenderParams(map[string]any{"url": tmpl}, hostile)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://hooks.example.com/svc/x%27%3B%20DROP%20TABLE%20users%3B%20--/..%2F..%2Fadmin?env=attacker.example%23&q=a%26admin%3Dtrue%23frag"
	if out["url"] != want {
		t.Fatalf("rendered\n %v\nwant\n %v", out["url"], want)
	}
	if _, err := RenderParams(map[string]any{"url": `https://hooks.example.com/a/{{index .Tags "dot"}}/b`}, hostile); err == nil {
		t.Error(`".." rendered as a path segment`)
	}
}

// TestSQLTemplatesBecomeBindParameters shows alert values never enter SQL
// text: each template becomes $1, $2… in order of appearance and its value a
// bind parameter, and a statement that quotes a template is refused.
func TestSQLTemplatesBecomeBindParameters(t *testing.T) {
	params := map[string]any{"target": "main", "statements": []any{
		"CREATE TABLE IF NOT EXISTS users (name TEXT)",
		"INSERT INTO users (name) VALUES ('alice')",
		"CREATE TABLE IF NOT EXISTS paused (service TEXT, incident TEXT, env TEXT)",
		"INSERT INTO paused (service, incident, env) VALUES ({{.Service}}, {{.IncidentID}}, {{.Service}})",
	}}
	out, err := RenderParams(params, hostile)
	if err != nil {
		t.Fatal(err)
	}
	st := out["statements"].([]any)
	if st[3] != "INSERT INTO paused (service, incident, env) VALUES ($1, $2, $3)" {
		t.Fatalf("statement %q", st[3])
	}
	wantArgs := []any{[]any{}, []any{}, []any{}, []any{hostile.Service, "inc_1", hostile.Service}}
	if !reflect.DeepEqual(out["args"], wantArgs) {
		t.Fatalf("args %#v", out["args"])
	}
	path := filepath.Join(t.TempDir(), "target.db")
	a := &Activities{SQLTargets: SQLTargets{DSNs: map[string]string{"main": "sqlite:" + path}, Tenants: map[string][]string{"main": {"ten_1"}}}}
	if err := (sqlStep{}).run(context.Background(), a, stepCall{Params: out, Key: "remediation/rem_1/step/0", TenantID: "ten_1"}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(SQLDriver("sqlite:" + path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var users int
	var svc string
	if err := db.QueryRow("SELECT COUNT(*) FROM users").Scan(&users); err != nil || users != 1 {
		t.Fatalf("users table: %d rows, %v", users, err)
	}
	if err := db.QueryRow("SELECT service FROM paused").Scan(&svc); err != nil || svc != hostile.Service {
		t.Fatalf("stored service %q, %v", svc, err)
	}

	for _, s := range []string{
		"UPDATE t SET x = '{{.Service}}'",
		`UPDATE "{{.Service}}" SET x = 1`,
		"UPDATE t SET x = $$ {{.Service}} $$",
		"UPDATE t SET x = 1 -- {{.Service}}",
		"UPDATE t SET x = $1 WHERE y = {{.Service}}",
		"UPDATE t SET x = E'\\'{{.Service}}'",
	} {
		p := map[string]any{"target": "main", "statements": []any{s}}
		if err := ValidateStep(StepSQLMigration, p, SQLTargets{DSNs: map[string]string{"main": "sqlite:x"}, Tenants: map[string][]string{"main": {"*"}}}, "ten_1", false); err == nil {
			t.Errorf("statement %q accepted", s)
		}
	}
	if err := ValidateStep(StepSQLMigration, map[string]any{"target": "{{.Service}}", "statements": []any{"SELECT 1"}},
		SQLTargets{DSNs: map[string]string{"main": "sqlite:x"}, Tenants: map[string][]string{"main": {"*"}}}, "ten_1", false); err == nil {
		t.Error("templated target accepted")
	}
	if !strings.Contains(st[1].(string), "'alice'") {
		t.Errorf("literal statement changed: %q", st[1])
	}
}
