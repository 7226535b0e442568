// Package config loads Causeway's settings from CAUSEWAY_* environment variables
// and an optional YAML file into one typed struct, validated before anything starts.
package config

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// Mode selects the defaults that differ between the all-in-one development run and
// the production binaries (private egress is only safe to allow on a laptop).
type Mode int

const (
	// ModeProduction is used by the separate api and worker binaries.
	ModeProduction Mode = iota
	// ModeDev is used by `causeway run` (make run): embedded everything.
	ModeDev
	// ModeAdmin is used by the operator's commands (migrate, tenant,
	// scenario): production defaults, but secrets that are not given are
	// read from the data dir when `make run` left them there, so the same
	// commands work against a laptop's installation. Nothing is generated.
	ModeAdmin
)

// Config is every setting, typed, as the rest of the code reads it. Field names
// mirror the environment keys; each field's mapstructure tag is a key of the
// settings table (settings.go), which holds its default, validation, masking
// and README line.
type Config struct {
	HTTPAddr  string `mapstructure:"http_addr"`
	DataDir   string `mapstructure:"data_dir"`
	LogLevel  string `mapstructure:"log_level"`
	PublicURL string `mapstructure:"public_url"`

	DatabaseURL string `mapstructure:"database_url"`
	RedisURL    string `mapstructure:"redis_url"`

	TemporalAddress      string `mapstructure:"temporal_address"`
	TemporalNamespace    string `mapstructure:"temporal_namespace"`
	TemporalUIAddr       string `mapstructure:"temporal_ui_addr"`
	TemporalEmbeddedPort int    `mapstructure:"temporal_embedded_port"`
	TemporalTaskQueue    string `mapstructure:"temporal_task_queue"`
	// InvestigationsInFlight bounds the alerts' investigations running at
	// once across every dispatcher on the database (investigation.Admission).
	InvestigationsInFlight int `mapstructure:"investigations_in_flight"`

	// TemporalUIURL is where the dashboard links each workflow in the Temporal
	// Web UI; empty means the embedded UI at TemporalUIAddr.
	TemporalUIURL string `mapstructure:"temporal_ui_url"`

	AuthJWTSecret     string        `mapstructure:"auth_jwt_secret"`
	AuthIssuer        string        `mapstructure:"auth_issuer"`
	AuthAudience      string        `mapstructure:"auth_audience"`
	AuthTokenTTL      time.Duration `mapstructure:"auth_token_ttl"`
	AuthRefreshTTL    time.Duration `mapstructure:"auth_refresh_ttl"`
	AuthSessionMax    time.Duration `mapstructure:"auth_session_max"`
	AuthSignupEnabled bool          `mapstructure:"auth_signup_enabled"`

	SecretsKey string `mapstructure:"secrets_key"`

	LLMBaseURL string `mapstructure:"llm_base_url"`
	LLMAPIKey  string `mapstructure:"llm_api_key"`
	LLMModel   string `mapstructure:"llm_model"`

	EgressAllowPrivate bool `mapstructure:"egress_allow_private"`

	// SlackAPIURL is the base of Slack's Web API (docs/slack.md); tests and
	// air-gapped proxies point it elsewhere.
	SlackAPIURL string `mapstructure:"slack_api_url"`

	QuotaEventsPerMonth         int `mapstructure:"quota_events_per_month"`
	QuotaInvestigationsPerMonth int `mapstructure:"quota_investigations_per_month"`
	// QuotaUsers is the free plan's cap on a tenant's users.
	QuotaUsers         int `mapstructure:"quota_users"`
	RateLimitPerMinute int `mapstructure:"rate_limit_per_minute"`
	// Plans holds the team and enterprise plans' monthly quotas; the free
	// plan's are QuotaEventsPerMonth and QuotaInvestigationsPerMonth.
	Plans PlansConfig `mapstructure:"plan"`
	// AuthRateLimitPerMinute limits sign-up, login and refresh per client IP: each
	// login costs a bcrypt comparison, and password guessing must be slow.
	AuthRateLimitPerMinute int `mapstructure:"auth_rate_limit_per_minute"`
	// WebhookIPRateLimitPerMinute limits, per client address (IPv6: per /64),
	// the webhook deliveries whose API key is refused; past it the address is
	// refused before any key is looked up, so guessing keys cannot make the
	// database work without bound.
	WebhookIPRateLimitPerMinute int `mapstructure:"webhook_ip_rate_limit_per_minute"`
	// TrustedProxies lists the reverse proxies (IPs or CIDRs, comma-separated)
	// whose X-Forwarded-For is believed; empty trusts none, so a client cannot
	// choose the IP it is logged and rate-limited under.
	TrustedProxies string `mapstructure:"trusted_proxies"`

	// MetricsAddr, when set, makes the worker binary serve GET /metrics there:
	// activity metrics (deliveries, investigations, tokens) live in the worker.
	MetricsAddr string `mapstructure:"metrics_addr"`

	OAuth OAuthConfig `mapstructure:"oauth"`

	// SQLTargets names the databases sql_migration remediation steps may change,
	// as "name=dsn,name2=dsn2" (dsn: a postgres:// URL or sqlite:<file>), so
	// runbooks refer to a name and never carry a connection string.
	SQLTargets string `mapstructure:"sql_targets"`
	// SQLTargetTenants says which tenants may use each SQL target, as
	// "name:tenantA|tenantB,other:*". A target without an entry is usable by
	// nobody, and "*" (every tenant) counts only when written out, because a
	// runbook step that reaches the operator's database is as strong as the
	// tenant who writes it.
	SQLTargetTenants string `mapstructure:"sql_target_tenants"`

	// DataSourceAllowedNetworks is the ceiling of the private networks
	// (CIDRs, comma-separated) the tenants' data sources may live on: each
	// tenant reaches only its grant inside it; public addresses are always
	// reachable. `make run` allows loopback and the private ranges.
	DataSourceAllowedNetworks string `mapstructure:"datasource_allowed_networks"`
	// DataSourceGrantAll gives every tenant the whole ceiling instead of
	// its own grant, for one tenant on a laptop (`make run`), where
	// granting networks to the only tenant is ceremony.
	DataSourceGrantAll bool `mapstructure:"datasource_grant_all"`
	// DataSourceQueryTimeout bounds one data-source query, connection included.
	DataSourceQueryTimeout time.Duration `mapstructure:"datasource_query_timeout"`
	// DataSourceResultCap bounds, in bytes, what one query's answer keeps for
	// the agents (and puts in workflow history).
	DataSourceResultCap int `mapstructure:"datasource_result_cap"`
	// DataSourcePassBudget is how long a pass waits for its data-source
	// queries before the agents start with what answered.
	DataSourcePassBudget time.Duration `mapstructure:"datasource_pass_budget"`
	// DataSourceMaxQueries bounds the queries of one pass.
	DataSourceMaxQueries int `mapstructure:"datasource_max_queries"`
	// DataSourceLookback is how long before the onset the queried window starts.
	DataSourceLookback time.Duration `mapstructure:"datasource_lookback"`
	// RemediationVerifyAfter is how long after its steps complete a
	// remediation is verified.
	RemediationVerifyAfter time.Duration `mapstructure:"remediation_verify_after"`
	// LLMToolCalls, LLMToolBytes and LLMToolTokens are the budget of one
	// agent's tool use in a pass: tool calls made (refused ones included),
	// bytes of answers read and tokens spent before the agent must answer.
	// Zero calls turns tool use off.
	LLMToolCalls  int `mapstructure:"llm_tool_calls"`
	LLMToolBytes  int `mapstructure:"llm_tool_bytes"`
	LLMToolTokens int `mapstructure:"llm_tool_tokens"`
}

// OAuthConfig holds both identity providers. Endpoints are configurable so that
// GitHub Enterprise, a Google-compatible IdP or a test server can stand in.
type OAuthConfig struct {
	GitHub OAuthProvider `mapstructure:"github"`
	Google OAuthProvider `mapstructure:"google"`
}

// OAuthProvider is one identity provider's client registration.
type OAuthProvider struct {
	ClientID     string `mapstructure:"client_id"`
	ClientSecret string `mapstructure:"client_secret"`
	AuthURL      string `mapstructure:"auth_url"`
	TokenURL     string `mapstructure:"token_url"`
	UserInfoURL  string `mapstructure:"userinfo_url"`
	EmailsURL    string `mapstructure:"emails_url"`
}

// Enabled reports whether the provider has a client registration.
func (p OAuthProvider) Enabled() bool { return p.ClientID != "" && p.ClientSecret != "" }

// PlansConfig is the monthly quotas of the paid plans (0 = unlimited).
type PlansConfig struct {
	Team       PlanQuota `mapstructure:"team"`
	Enterprise PlanQuota `mapstructure:"enterprise"`
}

// PlanQuota is one plan's monthly quotas; 0 means unlimited.
type PlanQuota struct {
	EventsPerMonth         int `mapstructure:"events_per_month"`
	InvestigationsPerMonth int `mapstructure:"investigations_per_month"`
	// Users caps the tenant's users (not monthly); 0 means unlimited.
	Users int `mapstructure:"users"`
}

// Load reads defaults, then the YAML file (when path is not empty), then CAUSEWAY_*
// environment variables, and validates the result. In ModeDev the secrets that are
// not given are generated once and kept in the data dir, so tokens and encrypted
// webhook secrets survive restarts of `make run`. In ModeAdmin, a data dir that
// `make run` set up (its SQLite database, no CAUSEWAY_DATABASE_URL, its
// generated keys) is read with `make run`'s defaults, so the operator's
// commands see the installation as it runs.
func Load(path string, mode Mode) (*Config, error) {
	c, err := read(path, mode)
	if err != nil {
		return nil, err
	}
	switch mode {
	case ModeDev:
		if err := c.fillDevSecrets(); err != nil {
			return nil, err
		}
	case ModeAdmin:
		if c.madeByRun() {
			if c, err = read(path, ModeDev); err != nil {
				return nil, err
			}
		}
		if err := c.readDevSecrets(); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// read is the configuration with mode's defaults, before secrets and
// validation.
func read(path string, mode Mode) (*Config, error) {
	v := withDefaults(mode)
	v.SetEnvPrefix("CAUSEWAY")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if path != "" {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
	}
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &c, nil
}

// madeByRun reports whether the configuration names `make run`'s own
// installation: its SQLite database in a data dir holding the keys it
// generated.
func (c *Config) madeByRun() bool {
	if c.DatabaseURL != "" || c.DataDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(c.DataDir, devJWTSecretFile))
	return err == nil
}

// withDefaults is a viper instance holding every setting's default for mode,
// from the settings table; viper binds a CAUSEWAY_* variable only for a key it
// knows, so this is also what makes the environment apply.
func withDefaults(mode Mode) *viper.Viper {
	v := viper.New()
	for _, s := range settings {
		def := s.def
		if mode == ModeDev && s.dev != nil {
			def = s.dev
		}
		v.SetDefault(s.key, def)
	}
	return v
}

// Defaults is the configuration of mode with nothing read from the
// environment or a file: every setting at its documented default, secrets
// empty. Tests start from it and set what they need, so a new setting with a
// sensible default never breaks a configuration built in code.
func Defaults(mode Mode) Config {
	var c Config
	if err := withDefaults(mode).Unmarshal(&c); err != nil {
		// The defaults are literals of the settings table; failing to decode
		// them is a programming error caught by the first test that calls this.
		panic(fmt.Sprintf("config: decode defaults: %v", err))
	}
	return c
}

// productionDefaults is Defaults(ModeProduction), decoded once per process.
var productionDefaults = Defaults(ModeProduction)

// ProductionDefaults is every setting at its documented production default:
// what code that was built without a configuration (a test's Activities, an
// Options literal) falls back to, so a default is never copied into the code
// that uses it.
func ProductionDefaults() Config { return productionDefaults }

// Validate reports every problem at once, each naming the environment variable
// to fix: first each setting's own check from the settings table, then the
// rules that tie settings together.
func (c *Config) Validate() error {
	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("CAUSEWAY_%s: %s", name, fmt.Sprintf(format, a...)))
	}
	for _, s := range settings {
		if s.check.ok == nil {
			continue
		}
		if err := s.check.ok(c.value(s.key)); err != nil {
			bad(s.name(), "%v", err)
		}
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		bad("DATA_DIR", "required when CAUSEWAY_DATABASE_URL is empty (SQLite lives there)")
	}
	if c.AuthIssuer == "" || c.AuthAudience == "" {
		bad("AUTH_ISSUER", "issuer and CAUSEWAY_AUTH_AUDIENCE must not be empty")
	}
	if c.AuthRefreshTTL < c.AuthTokenTTL {
		bad("AUTH_REFRESH_TTL", "must be at least the access token lifetime")
	}
	if c.AuthSessionMax < c.AuthTokenTTL {
		bad("AUTH_SESSION_MAX", "must be at least the access token lifetime")
	}
	llmSet := c.LLMBaseURL != "" || c.LLMAPIKey != "" || c.LLMModel != ""
	if llmSet && (c.LLMBaseURL == "" || c.LLMModel == "") {
		bad("LLM_BASE_URL", "CAUSEWAY_LLM_BASE_URL and CAUSEWAY_LLM_MODEL are both required to use an LLM")
	}
	if c.QuotaEventsPerMonth < 0 || c.QuotaInvestigationsPerMonth < 0 {
		bad("QUOTA_EVENTS_PER_MONTH", "this and CAUSEWAY_QUOTA_INVESTIGATIONS_PER_MONTH, the free plan's quotas, must be ≥ 0 (0 = unlimited)")
	}
	if c.DataSourcePassBudget < c.DataSourceQueryTimeout {
		bad("DATASOURCE_PASS_BUDGET", "must be at least CAUSEWAY_DATASOURCE_QUERY_TIMEOUT (%s), got %s", c.DataSourceQueryTimeout, c.DataSourcePassBudget)
	}
	targets, errTargets := ParseSQLTargets(c.SQLTargets)
	tenants, errTenants := ParseSQLTargetTenants(c.SQLTargetTenants)
	if errTargets == nil && errTenants == nil {
		for name := range tenants {
			if _, ok := targets[name]; !ok {
				bad("SQL_TARGET_TENANTS", "target %q is not in CAUSEWAY_SQL_TARGETS", name)
			}
		}
	}
	return errors.Join(errs...)
}

// TrustedProxyList splits TrustedProxies; nil means no proxy is trusted.
func (c *Config) TrustedProxyList() []string {
	var out []string
	for _, p := range strings.Split(c.TrustedProxies, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// TemporalUILink is the base address of the Temporal Web UI the dashboard links
// to: TemporalUIURL, or the embedded UI's address.
func (c *Config) TemporalUILink() string {
	if c.TemporalUIURL != "" {
		return strings.TrimRight(c.TemporalUIURL, "/")
	}
	return "http://" + c.TemporalUIAddr
}

// PlanQuotas is every plan's quotas by plan name (free, team, enterprise). The
// free plan's are the QUOTA_* settings, which were every tenant's before plans
// existed, so an upgrade changes nothing for tenants already running.
func (c *Config) PlanQuotas() map[string]PlanQuota {
	return map[string]PlanQuota{
		"free":       {EventsPerMonth: c.QuotaEventsPerMonth, InvestigationsPerMonth: c.QuotaInvestigationsPerMonth, Users: c.QuotaUsers},
		"team":       c.Plans.Team,
		"enterprise": c.Plans.Enterprise,
	}
}

// LLMEnabled reports whether investigations use the configured LLM instead of the offline analyzer.
func (c *Config) LLMEnabled() bool { return c.LLMBaseURL != "" && c.LLMModel != "" }

// EmbeddedTemporal reports whether `make run` must start its own Temporal server.
func (c *Config) EmbeddedTemporal() bool { return c.TemporalAddress == "" }

// SQLitePath is where the embedded database lives when no DATABASE_URL is set.
func (c *Config) SQLitePath() string { return filepath.Join(c.DataDir, "causeway.db") }

// The files in the data dir where `make run` keeps the secrets it generated.
const (
	devJWTSecretFile  = "jwt.secret"
	devSecretsKeyFile = "secrets.key"
)

// fillDevSecrets generates the secrets that `make run` may leave unset and stores
// them (0600) in the data dir, so a restart keeps sessions and decryptable secrets.
func (c *Config) fillDevSecrets() error {
	if c.AuthJWTSecret != "" && c.SecretsKey != "" {
		return nil
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("config: create data dir: %w", err)
	}
	var err error
	if c.AuthJWTSecret == "" {
		if c.AuthJWTSecret, err = persistedSecret(filepath.Join(c.DataDir, devJWTSecretFile)); err != nil {
			return err
		}
	}
	if c.SecretsKey == "" {
		if c.SecretsKey, err = persistedSecret(filepath.Join(c.DataDir, devSecretsKeyFile)); err != nil {
			return err
		}
	}
	return nil
}

// readDevSecrets takes the secrets that are not given from the files
// fillDevSecrets wrote, when they exist; a missing file leaves the setting
// empty for Validate to report.
func (c *Config) readDevSecrets() error {
	for _, f := range []struct {
		v    *string
		file string
	}{{&c.AuthJWTSecret, devJWTSecretFile}, {&c.SecretsKey, devSecretsKeyFile}} {
		if *f.v != "" || c.DataDir == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.DataDir, f.file))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("config: read %s: %w", f.file, err)
		default:
			*f.v = strings.TrimSpace(string(b))
		}
	}
	return nil
}

func persistedSecret(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("config: read %s: %w", path, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	s := base64.StdEncoding.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("config: write %s: %w", path, err)
	}
	return s, nil
}

// ParseNetworks reads a comma-separated list of CIDRs (a bare address counts
// as a single-address network).
func ParseNetworks(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR nor an IP address", part)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// DataSourceNetworks is the parsed DataSourceAllowedNetworks; Validate has
// already refused a bad value.
func (c *Config) DataSourceNetworks() []netip.Prefix {
	n, _ := ParseNetworks(c.DataSourceAllowedNetworks)
	return n
}

// redactURL hides the password of a connection URL but keeps host and database,
// which is what an operator needs to see at start-up. Drivers also take a
// password as a query parameter (libpq's ?password= and ?sslpassword=,
// go-redis's ?password=), so every query parameter named like a credential is
// masked as well.
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return "****"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if credentialParam(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// credentialParam reports whether a connection-string parameter carries a
// secret.
func credentialParam(k string) bool {
	k = strings.ToLower(k)
	for _, part := range []string{"password", "secret", "token", "key"} {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}

var targetName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// ParseSQLTargets reads CAUSEWAY_SQL_TARGETS ("name=dsn,name2=dsn2") into a map.
// Names are lowercase identifiers; each DSN is a postgres:// URL or sqlite:<file>.
func ParseSQLTargets(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, dsn, ok := strings.Cut(part, "=")
		name, dsn = strings.TrimSpace(name), strings.TrimSpace(dsn)
		switch {
		case !ok || !targetName.MatchString(name):
			return nil, fmt.Errorf("want name=dsn pairs with lowercase names, got %q", strings.SplitN(part, "=", 2)[0])
		case out[name] != "":
			return nil, fmt.Errorf("target %q is named twice", name)
		case !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") &&
			!(strings.HasPrefix(dsn, "sqlite:") && len(dsn) > len("sqlite:")):
			return nil, fmt.Errorf("target %q: dsn must be a postgres:// URL or sqlite:<file>", name)
		}
		out[name] = dsn
	}
	return out, nil
}

var tenantRef = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// ParseSQLTargetTenants reads CAUSEWAY_SQL_TARGET_TENANTS
// ("name:tenantA|tenantB,other:*") into target → tenant ids. "*" stands for
// every tenant and must stand alone; a target named twice is refused rather
// than merged, so a typo cannot widen access unnoticed.
func ParseSQLTargetTenants(s string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, list, ok := strings.Cut(part, ":")
		name = strings.TrimSpace(name)
		if !ok || !targetName.MatchString(name) {
			return nil, fmt.Errorf("want name:tenantA|tenantB entries with lowercase target names, got %q", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("target %q is named twice", name)
		}
		var tenants []string
		for _, id := range strings.Split(list, "|") {
			id = strings.TrimSpace(id)
			if id != "*" && !tenantRef.MatchString(id) {
				return nil, fmt.Errorf("target %q: %q is not a tenant id or *", name, id)
			}
			tenants = append(tenants, id)
		}
		if len(tenants) > 1 && slices.Contains(tenants, "*") {
			return nil, fmt.Errorf("target %q: * already means every tenant; list tenants or write * alone", name)
		}
		out[name] = tenants
	}
	return out, nil
}

// SQLTargetTenantMap is the parsed SQLTargetTenants; Validate has already
// refused a bad value.
func (c *Config) SQLTargetTenantMap() map[string][]string {
	m, _ := ParseSQLTargetTenants(c.SQLTargetTenants)
	return m
}

// SQLTargetMap is the parsed SQLTargets; Validate has already refused a bad value.
func (c *Config) SQLTargetMap() map[string]string {
	m, _ := ParseSQLTargets(c.SQLTargets)
	return m
}

// maskTargets shows the target names and hosts, never their passwords.
func maskTargets(s string) string {
	m, err := ParseSQLTargets(s)
	if err != nil {
		return "****"
	}
	names := make([]string, 0, len(m))
	for n, dsn := range m {
		names = append(names, n+"="+redactURL(dsn))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
