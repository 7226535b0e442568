package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// regenerate is what a failure about the README tells the reader to run.
const regenerate = "run `go generate ./config` (or `go run ./config/cmd/settingsdoc README.md` from the repository root) and commit README.md"

// TestSettingsMatchConfig: every Config field is a setting of the table and
// every setting is a Config field, each once, with a doc line; a field
// without an entry would have no default, no environment variable, no log
// line and no README row.
func TestSettingsMatchConfig(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range settings {
		if seen[s.key] {
			t.Errorf("setting %s is in the table twice", s.key)
		}
		seen[s.key] = true
		if _, ok := fieldPaths()[s.key]; !ok {
			t.Errorf("setting %s has no Config field tagged mapstructure:%q; add the field or remove the entry", s.key, s.key[strings.LastIndex(s.key, ".")+1:])
		}
		if strings.TrimSpace(s.doc) == "" {
			t.Errorf("setting %s has no doc line for the README", s.key)
		}
	}
	for key := range fieldPaths() {
		if !seen[key] {
			t.Errorf("Config field %s (%s) has no entry in the settings table of config/settings.go", key, envName(key))
		}
	}
}

// TestSettingsChecksAndMasksFitTheirFields: a check or a mask written for
// another type than the field's would silently refuse or print the wrong
// thing; both are tried on every field.
func TestSettingsChecksAndMasksFitTheirFields(t *testing.T) {
	for _, mode := range []Mode{ModeProduction, ModeDev} {
		c := Defaults(mode)
		for _, s := range settings {
			v := c.value(s.key)
			if s.check.ok != nil {
				if err := s.check.ok(v); err != nil && strings.Contains(err.Error(), "this check reads") {
					t.Errorf("%s: %v", s.key, err)
				}
			}
			if _, isString := v.(string); s.mask != nil && !isString {
				t.Errorf("%s: a mask on a %T field", s.key, v)
			}
		}
	}
}

// TestMaskedCoversEverySetting: the start-up log shows every setting, and no
// secret: each masked setting is given a value whose secret part must not
// appear, and a setting named like a credential must be masked.
func TestMaskedCoversEverySetting(t *testing.T) {
	c := valid()
	m := c.Masked()
	if len(m) != len(settings) {
		t.Errorf("Masked has %d entries, the table %d settings", len(m), len(settings))
	}
	for _, s := range settings {
		if _, ok := m[s.name()]; !ok {
			t.Errorf("Masked lacks %s", s.name())
		}
	}
	credential := regexp.MustCompile(`(secret|password|_key|_token)$`)
	var secrets []string
	for _, s := range settings {
		if credential.MatchString(s.key) && s.mask == nil {
			t.Errorf("%s is named like a credential but is printed as it is; give it mask: hide", s.key)
		}
		if s.mask == nil {
			continue
		}
		secret := "hunter2-" + strings.ReplaceAll(s.key, ".", "-")
		secrets = append(secrets, secret)
		index := fieldPaths()[s.key]
		field := reflectField(&c, index)
		switch {
		case strings.HasSuffix(s.key, "_url"):
			field.SetString("postgres://user:" + secret + "@db.internal:5432/app?password=" + secret)
		case s.key == "sql_targets":
			field.SetString("main=postgres://user:" + secret + "@db.internal/app?sslpassword=" + secret)
		default:
			field.SetString(secret)
		}
	}
	line := fmt.Sprint(c.Masked())
	for _, secret := range secrets {
		if strings.Contains(line, secret) {
			t.Errorf("the start-up log shows %s: %s", secret, line)
		}
	}
	if !strings.Contains(line, "db.internal") {
		t.Errorf("masking hid the hosts too: %s", line)
	}
}

// TestREADMESettingsTableIsCurrent: the README's configuration table is the
// one written from the settings table, so it lists every setting with its
// default and no setting that is gone.
func TestREADMESettingsTableIsCurrent(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, s := range settings {
		row := fmt.Sprintf("| `%s` | %s |", envName(s.key), cell(s.defaultText()))
		if !strings.Contains(readme, row) {
			t.Errorf("README.md has no row %q; %s", row, regenerate)
		}
	}
	want, err := SpliceSettingsTable(readme)
	if err != nil {
		t.Fatal(err)
	}
	if want != readme {
		t.Errorf("README.md's configuration table differs from config/settings.go; %s", regenerate)
	}
}

// testOnlyVariables are the CAUSEWAY_* variables that tests and scripts read
// (internal/testenv, internal/testdb, e2e, the Makefile): not settings of
// the product, so they are not in the table. A name ending in _ is a prefix.
var testOnlyVariables = []string{
	"CAUSEWAY_TEST_", "CAUSEWAY_FAULT_", "CAUSEWAY_REQUIRE_ALL", "CAUSEWAY_SCENARIOS_DIR",
	"CAUSEWAY_WRITE_HISTORIES", "CAUSEWAY_SCREENSHOTS_DIR", "CAUSEWAY_CHROMIUM", "CAUSEWAY_BENCH_TRACE",
}

// clientVariables are the CAUSEWAY_* names of a client's own CI job in the
// examples of a document: variables of that job, which Causeway never reads.
var clientVariables = map[string][]string{
	filepath.Join("docs", "changes.md"): {"CAUSEWAY_URL", "CAUSEWAY_TENANT", "CAUSEWAY_API_KEY", "CAUSEWAY_WEBHOOK_SECRET"},
}

// TestMentionedVariablesAreSettings: every CAUSEWAY_* variable the README,
// docs/, docker-compose.yml, the Helm chart and the Makefile mention is a
// setting (or a test-only variable), so a renamed or misspelt variable there
// cannot quietly do nothing. A name written as a prefix (CAUSEWAY_PLAN_TEAM_*)
// must start some setting.
func TestMentionedVariablesAreSettings(t *testing.T) {
	var names []string
	for _, s := range settings {
		names = append(names, envName(s.key))
	}
	known := func(v string) bool {
		for _, n := range append(slices.Clone(names), testOnlyVariables...) {
			switch {
			case n == v,
				strings.HasSuffix(n, "_") && strings.HasPrefix(v, n),
				strings.HasSuffix(v, "_") && strings.HasPrefix(n, v):
				return true
			}
		}
		return false
	}
	files := []string{"README.md", "docker-compose.yml", "Makefile"}
	for _, dir := range []string{"docs", filepath.Join("deploy", "helm")} {
		err := filepath.WalkDir(filepath.Join("..", dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, strings.TrimPrefix(path, ".."+string(filepath.Separator)))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	variable := regexp.MustCompile(`CAUSEWAY_[A-Z0-9_]*`)
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variable.FindAllString(string(raw), -1) {
			if !known(v) && !slices.Contains(clientVariables[f], v) {
				t.Errorf("%s mentions %s, which is no setting in config/settings.go (nor a test-only variable)", f, v)
			}
		}
	}
}

// reflectField is the settable Config field at index, for tests that write a
// setting by its key.
func reflectField(c *Config, index []int) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByIndex(index)
}
