package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

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

// reflectField is the settable Config field at index, for tests that write a
// setting by its key.
func reflectField(c *Config, index []int) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByIndex(index)
}
