package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// clearEnv keeps the host's CAUSEWAY_* settings out of a Load.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CAUSEWAY_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// TestSignupClosedOutsideDevMode shows open self-service sign-up is a
// development convenience: production binaries start with it off unless the
// operator turns it on, while `make run` keeps it on.
func TestSignupClosedOutsideDevMode(t *testing.T) {
	clearEnv(t)
	t.Setenv("CAUSEWAY_AUTH_JWT_SECRET", strings.Repeat("j", 40))
	t.Setenv("CAUSEWAY_SECRETS_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	t.Setenv("CAUSEWAY_DATA_DIR", t.TempDir())
	prod, err := Load("", ModeProduction)
	if err != nil {
		t.Fatal(err)
	}
	if prod.AuthSignupEnabled {
		t.Error("production mode: sign-up enabled by default")
	}
	dev, err := Load("", ModeDev)
	if err != nil {
		t.Fatal(err)
	}
	if !dev.AuthSignupEnabled {
		t.Error("dev mode: sign-up disabled by default")
	}
	t.Setenv("CAUSEWAY_AUTH_SIGNUP_ENABLED", "true")
	if prod, err = Load("", ModeProduction); err != nil || !prod.AuthSignupEnabled {
		t.Errorf("explicit CAUSEWAY_AUTH_SIGNUP_ENABLED=true ignored: %v", err)
	}
}

// TestMaskedHidesDSNPasswordsInQuery shows a password passed as a query
// parameter of a DSN (libpq accepts ?password=) is masked in the start-up log
// like one in the user-info part.
func TestMaskedHidesDSNPasswordsInQuery(t *testing.T) {
	c := &Config{
		DatabaseURL: "postgres://app@db.internal:5432/causeway?sslmode=require&password=hunter2-db",
		RedisURL:    "redis://cache.internal:6379/0?password=hunter2-redis",
		SQLTargets:  "main=postgres://ops@db.internal/ops?sslpassword=hunter2-ssl&password=hunter2-target",
	}
	m := c.Masked()
	for _, k := range []string{"DATABASE_URL", "REDIS_URL", "SQL_TARGETS"} {
		s, _ := m[k].(string)
		if strings.Contains(s, "hunter2") {
			t.Errorf("%s logged as %q", k, s)
		}
		if !strings.Contains(s, "internal") {
			t.Errorf("%s lost its host: %q", k, s)
		}
	}
}

// TestSQLTargetTenants reads who may use each SQL target: named tenants, or
// every tenant only when "*" is written; a target without an entry is usable
// by nobody, and an entry for an unknown target is a configuration error.
func TestSQLTargetTenants(t *testing.T) {
	got, err := ParseSQLTargetTenants("main:ten_a|ten_b, shared:*")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got["main"], ",") != "ten_a,ten_b" || strings.Join(got["shared"], ",") != "*" {
		t.Fatalf("parsed %v", got)
	}
	for _, bad := range []string{"main", "main:", "main:ten a", "main:ten_a,main:ten_b", "Main:ten_a", "main:*|ten_a"} {
		if _, err := ParseSQLTargetTenants(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c := &Config{SQLTargets: "main=sqlite:x.db", SQLTargetTenants: "other:ten_a"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "CAUSEWAY_SQL_TARGET_TENANTS") {
		t.Errorf("entry for an unknown target: %v", err)
	}
}

// TestComposeKeepsTemporalPrivate reads docker-compose.yml: Temporal's gRPC
// port (which has no authentication) is not published, and the Temporal UI,
// which shows every tenant's workflows regardless of API roles, is published
// on the loopback interface only.
func TestComposeKeepsTemporalPrivate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Ports []string `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if p := doc.Services["temporal"].Ports; len(p) != 0 {
		t.Errorf("temporal publishes %v", p)
	}
	ui, ok := doc.Services["temporal-ui"]
	if !ok {
		t.Fatal("no temporal-ui service")
	}
	for _, p := range ui.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("temporal-ui published on every interface: %q", p)
		}
	}
	if !strings.Contains(string(raw), "bypasses") {
		t.Error("docker-compose.yml does not warn that the Temporal UI bypasses API roles")
	}
}
