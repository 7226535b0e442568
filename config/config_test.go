package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// valid is a production configuration that passes Validate.
func valid() Config {
	c := Defaults(ModeProduction)
	c.DataDir = "/var/lib/causeway"
	c.DatabaseURL, c.RedisURL, c.TemporalAddress = "postgres://causeway@db:5432/causeway", "redis://redis:6379/0", "temporal:7233"
	c.AuthJWTSecret = strings.Repeat("j", 32)
	c.SecretsKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	return c
}

func TestValidateAcceptsAValidConfig(t *testing.T) {
	c := valid()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.DatabaseURL, c.RedisURL, c.TemporalAddress = "", "", ""
	c.TrustedProxies = "10.0.0.0/8, 192.168.1.7"
	c.SQLTargets = "main=postgres://u:p@db/app,local=sqlite:/tmp/x.db"
	c.LLMBaseURL, c.LLMModel = "http://llm:8000/v1", "m"
	if err := c.Validate(); err != nil {
		t.Fatalf("embedded dev shape: %v", err)
	}
}

// TestValidateNamesTheVariable: each bad setting is refused with the
// environment variable an operator has to fix.
func TestValidateNamesTheVariable(t *testing.T) {
	cases := []struct {
		variable string
		mutate   func(*Config)
	}{
		{"CAUSEWAY_HTTP_ADDR", func(c *Config) { c.HTTPAddr = "8080" }},
		{"CAUSEWAY_DATA_DIR", func(c *Config) { c.DatabaseURL, c.DataDir = "", "" }},
		{"CAUSEWAY_DATABASE_URL", func(c *Config) { c.DatabaseURL = "mysql://db/causeway" }},
		{"CAUSEWAY_REDIS_URL", func(c *Config) { c.RedisURL = "memcache://cache:11211" }},
		{"CAUSEWAY_TEMPORAL_ADDRESS", func(c *Config) { c.TemporalAddress = "temporal" }},
		{"CAUSEWAY_TEMPORAL_NAMESPACE", func(c *Config) { c.TemporalNamespace = "" }},
		{"CAUSEWAY_TEMPORAL_EMBEDDED_PORT", func(c *Config) { c.TemporalEmbeddedPort = 70000 }},
		{"CAUSEWAY_AUTH_JWT_SECRET", func(c *Config) { c.AuthJWTSecret = strings.Repeat("j", 31) }},
		{"CAUSEWAY_AUTH_ISSUER", func(c *Config) { c.AuthAudience = "" }},
		{"CAUSEWAY_AUTH_TOKEN_TTL", func(c *Config) { c.AuthTokenTTL = 30 * time.Second }},
		{"CAUSEWAY_AUTH_TOKEN_TTL", func(c *Config) { c.AuthTokenTTL = 25 * time.Hour }},
		{"CAUSEWAY_AUTH_REFRESH_TTL", func(c *Config) { c.AuthRefreshTTL = 30 * time.Minute }},
		{"CAUSEWAY_SECRETS_KEY", func(c *Config) { c.SecretsKey = "c2hvcnQ=" }},
		{"CAUSEWAY_SECRETS_KEY", func(c *Config) { c.SecretsKey = "not base64!" }},
		{"CAUSEWAY_LLM_BASE_URL", func(c *Config) { c.LLMAPIKey = "sk-only-a-key" }},
		{"CAUSEWAY_QUOTA_EVENTS_PER_MONTH", func(c *Config) { c.QuotaInvestigationsPerMonth = -1 }},
		{"CAUSEWAY_RATE_LIMIT_PER_MINUTE", func(c *Config) { c.RateLimitPerMinute = -5 }},
		{"CAUSEWAY_AUTH_RATE_LIMIT_PER_MINUTE", func(c *Config) { c.AuthRateLimitPerMinute = -1 }},
		{"CAUSEWAY_TRUSTED_PROXIES", func(c *Config) { c.TrustedProxies = "10.0.0.0/8,proxy.internal" }},
		{"CAUSEWAY_SQL_TARGETS", func(c *Config) { c.SQLTargets = "Main=postgres://db/app" }},
		{"CAUSEWAY_SQL_TARGETS", func(c *Config) { c.SQLTargets = "main=mysql://db/app" }},
		{"CAUSEWAY_SQL_TARGETS", func(c *Config) { c.SQLTargets = "main=sqlite:/a,main=sqlite:/b" }},
		{"CAUSEWAY_LLM_TOOL_CALLS", func(c *Config) { c.LLMToolCalls = 51 }},
		{"CAUSEWAY_LLM_TOOL_BYTES", func(c *Config) { c.LLMToolBytes = 100 }},
		{"CAUSEWAY_LLM_TOOL_TOKENS", func(c *Config) { c.LLMToolTokens = 10 }},
	}
	for _, tc := range cases {
		c := valid()
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.variable+":") {
			t.Errorf("%s: Validate() = %v, want an error naming %s", tc.variable, err, tc.variable)
		}
	}
}

// TestValidateReportsEveryProblemAtOnce: an operator fixes a broken deployment
// in one round, not one variable per restart.
func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	c := valid()
	c.HTTPAddr, c.AuthJWTSecret, c.SecretsKey, c.RateLimitPerMinute = "nope", "short", "", -1
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, v := range []string{"CAUSEWAY_HTTP_ADDR", "CAUSEWAY_AUTH_JWT_SECRET", "CAUSEWAY_SECRETS_KEY", "CAUSEWAY_RATE_LIMIT_PER_MINUTE"} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error %q does not name %s", err, v)
		}
	}
}

// setEnv clears every CAUSEWAY_ variable of the process for the test, then sets kv.
func setEnv(t *testing.T, kv map[string]string) {
	t.Helper()
	for _, e := range os.Environ() {
		if k, _, ok := strings.Cut(e, "="); ok && strings.HasPrefix(k, "CAUSEWAY_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for k, v := range kv {
		t.Setenv(k, v)
	}
}

func TestLoadProductionFromEnvironment(t *testing.T) {
	setEnv(t, map[string]string{
		"CAUSEWAY_DATABASE_URL":           "postgres://causeway:hunter2@db:5432/causeway",
		"CAUSEWAY_TEMPORAL_ADDRESS":       "temporal:7233",
		"CAUSEWAY_AUTH_JWT_SECRET":        strings.Repeat("s", 40),
		"CAUSEWAY_SECRETS_KEY":            "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"CAUSEWAY_RATE_LIMIT_PER_MINUTE":  "0",
		"CAUSEWAY_AUTH_TOKEN_TTL":         "15m",
		"CAUSEWAY_OAUTH_GITHUB_CLIENT_ID": "gh-client",
	})
	c, err := Load("", ModeProduction)
	if err != nil {
		t.Fatal(err)
	}
	// Defaults the README promises, and the values the environment set.
	if c.HTTPAddr != "127.0.0.1:8080" || c.TemporalNamespace != "default" || c.TemporalTaskQueue != "causeway" ||
		c.QuotaEventsPerMonth != 10000 || c.QuotaInvestigationsPerMonth != 1000 || c.AuthRateLimitPerMinute != 60 ||
		c.EgressAllowPrivate || c.AuthSignupEnabled || c.AuthRefreshTTL != 720*time.Hour {
		t.Errorf("defaults: %+v", c)
	}
	if c.RateLimitPerMinute != 0 || c.AuthTokenTTL != 15*time.Minute || c.OAuth.GitHub.ClientID != "gh-client" ||
		c.OAuth.GitHub.AuthURL != "https://github.com/login/oauth/authorize" {
		t.Errorf("environment not applied: %+v", c)
	}
	// The start-up log line shows where things are, never a secret.
	m := fmt.Sprint(c.Masked())
	for _, secret := range []string{"hunter2", strings.Repeat("s", 40), "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="} {
		if strings.Contains(m, secret) {
			t.Errorf("masked config shows a secret: %s", m)
		}
	}
	if !strings.Contains(m, "db:5432") {
		t.Errorf("masked config hides the database host: %s", m)
	}
}

func TestLoadRefusesAnInvalidEnvironment(t *testing.T) {
	setEnv(t, map[string]string{"CAUSEWAY_DATABASE_URL": "postgres://db/causeway", "CAUSEWAY_AUTH_JWT_SECRET": "short"})
	_, err := Load("", ModeProduction)
	if err == nil || !strings.Contains(err.Error(), "CAUSEWAY_AUTH_JWT_SECRET") || !strings.Contains(err.Error(), "CAUSEWAY_SECRETS_KEY") {
		t.Fatalf("Load = %v, want the missing secrets named", err)
	}
}

func TestLoadYAMLFileUnderEnvironment(t *testing.T) {
	setEnv(t, map[string]string{"CAUSEWAY_LOG_LEVEL": "debug"})
	path := filepath.Join(t.TempDir(), "causeway.yaml")
	yaml := "http_addr: 0.0.0.0:9000\nlog_level: warn\ndatabase_url: postgres://db/causeway\n" +
		"auth_jwt_secret: " + strings.Repeat("y", 32) + "\nsecrets_key: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, ModeProduction)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "0.0.0.0:9000" || c.LogLevel != "debug" {
		t.Fatalf("file then environment: addr %q, level %q; want the file's address and the environment's level", c.HTTPAddr, c.LogLevel)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml"), ModeProduction); err == nil {
		t.Fatal("a missing config file loaded")
	}
}

// TestLoadDevGeneratesSecretsOnce: `make run` needs no secrets from the user,
// and a restart keeps the generated ones, or sessions and stored webhook
// secrets would stop working.
func TestLoadDevGeneratesSecretsOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	setEnv(t, map[string]string{"CAUSEWAY_DATA_DIR": dir})
	first, err := Load("", ModeDev)
	if err != nil {
		t.Fatal(err)
	}
	if !first.EgressAllowPrivate || len(first.AuthJWTSecret) < 32 || first.SecretsKey == "" || !first.EmbeddedTemporal() {
		t.Fatalf("dev config %+v", first)
	}
	for _, f := range []string{"jwt.secret", "secrets.key"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want a 0600 file", f, err, st)
		}
	}
	second, err := Load("", ModeDev)
	if err != nil {
		t.Fatal(err)
	}
	if second.AuthJWTSecret != first.AuthJWTSecret || second.SecretsKey != first.SecretsKey {
		t.Fatal("a restart generated new secrets")
	}
	// Production never invents a secret.
	if _, err := Load("", ModeProduction); err == nil {
		t.Fatal("production loaded without secrets")
	}
}

// TestPlanQuotas reads the paid plans' quotas from CAUSEWAY_PLAN_*, keeps the
// README's defaults for the rest, takes free's from CAUSEWAY_QUOTA_*, and
// refuses a negative quota naming its variable.
func TestPlanQuotas(t *testing.T) {
	setEnv(t, map[string]string{
		"CAUSEWAY_DATABASE_URL":                             "postgres://causeway@db:5432/causeway",
		"CAUSEWAY_AUTH_JWT_SECRET":                          strings.Repeat("s", 40),
		"CAUSEWAY_SECRETS_KEY":                              "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"CAUSEWAY_QUOTA_EVENTS_PER_MONTH":                   "50",
		"CAUSEWAY_PLAN_TEAM_EVENTS_PER_MONTH":               "5000",
		"CAUSEWAY_PLAN_ENTERPRISE_INVESTIGATIONS_PER_MONTH": "900",
		"CAUSEWAY_PLAN_TEAM_USERS":                          "25",
	})
	c, err := Load("", ModeProduction)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PlanQuota{
		"free":       {EventsPerMonth: 50, InvestigationsPerMonth: 1000, Users: 10},
		"team":       {EventsPerMonth: 5000, InvestigationsPerMonth: 10000, Users: 25},
		"enterprise": {EventsPerMonth: 0, InvestigationsPerMonth: 900, Users: 0},
	}
	if got := c.PlanQuotas(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("plan quotas %v, want %v", got, want)
	}
	if m := c.Masked(); m["PLAN_TEAM_EVENTS_PER_MONTH"] != 5000 {
		t.Errorf("start-up log line: %v", m["PLAN_TEAM_EVENTS_PER_MONTH"])
	}
	t.Setenv("CAUSEWAY_PLAN_TEAM_INVESTIGATIONS_PER_MONTH", "-1")
	if _, err := Load("", ModeProduction); err == nil || !strings.Contains(err.Error(), "CAUSEWAY_PLAN_TEAM_INVESTIGATIONS_PER_MONTH") {
		t.Fatalf("negative quota: %v", err)
	}
}
