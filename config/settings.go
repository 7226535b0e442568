package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"
)

//go:generate go run ./cmd/settingsdoc ../README.md

// setting is one CAUSEWAY_* variable: everything that loading, validation, the
// start-up log and the README's configuration table need to know about it, so
// that none of them can forget it.
type setting struct {
	// key is the viper key and the mapstructure path of the Config field
	// ("oauth.github.client_id"); the variable is CAUSEWAY_ + the key in upper
	// case with dots as underscores (envName).
	key string
	// def is the default of the api and worker binaries. dev, when not nil, is
	// the default of `make run` (ModeDev), where a laptop wants other answers.
	def, dev any
	// check refuses a bad value of this setting on its own; rules that tie
	// settings together are in Validate.
	check check
	// mask prints a secret in the start-up log; nil prints the value as it is.
	mask func(string) string
	// doc is the README's meaning column; note follows the default in the
	// README's default column, for what an empty default means.
	doc, note string
}

// settings is every setting, in the order of the README's configuration table,
// which `go generate ./config` writes from it.
//
// To add a setting: (1) add the Config field with its mapstructure tag;
// (2) add one entry at the end of the group it belongs to, or a new group
// before the OAuth one; (3) run `go generate ./config` for the README row. A
// rule tying it to another setting goes in Validate. The environment
// variable, the default, the validation and the start-up log all come from
// the entry; settings_test.go fails until field, entry and README agree.
var settings = []setting{
	// The process: where it listens, keeps its files and logs.
	{key: "http_addr", def: "127.0.0.1:8080", check: hostPort, doc: "API listen address"},
	{key: "public_url", def: "", note: "→ `http://<HTTP_ADDR>`", doc: "where browsers and monitoring tools reach the API (OAuth callbacks)"},
	{key: "data_dir", def: "./data", doc: "SQLite file, embedded Temporal's database, generated secrets; required when `CAUSEWAY_DATABASE_URL` is empty"},
	{key: "log_level", def: "info", doc: "`debug`, `info`, `warn`, `error`"},
	{key: "metrics_addr", def: "", doc: "the worker binary serves `/metrics` here (activities record their metrics in the worker); the API serves `/metrics` on its own address"},

	// Storage.
	{key: "database_url", def: "", note: "→ SQLite in the data dir", check: optional(postgresURL), mask: redactURL,
		doc: "`postgres://…` for PostgreSQL (the password, also `?password=`, is masked in the start-up log)"},
	{key: "redis_url", def: "", note: "→ in-memory limiter", check: optional(redisURL), mask: redactURL,
		doc: "`redis://…` or `rediss://…` for the rate limiter (the password is masked in the start-up log)"},

	// Temporal.
	{key: "temporal_address", def: "", note: "→ embedded server", check: optional(hostPort),
		doc: "`host:7233` of a Temporal cluster (required by the `api` and `worker` binaries)"},
	{key: "temporal_namespace", def: "default", check: nonEmpty, doc: "Temporal namespace of the workflows"},
	{key: "temporal_task_queue", def: "causeway", doc: "task queue of the workers"},
	{key: "investigations_in_flight", def: 16, check: between(1, 10000),
		doc: "alerts investigated at once across every API and worker on the database; the rest wait, fairly across tenants, then by severity and arrival ([docs/failure-modes.md](docs/failure-modes.md#storms)). Raise it with the workers: about 16 per worker on two cores"},
	{key: "temporal_ui_addr", def: "127.0.0.1:8233", doc: "embedded Temporal UI (embedded mode only)"},
	{key: "temporal_ui_url", def: "", note: "→ the embedded UI's address", check: optional(httpURL),
		doc: "base URL of the Temporal Web UI that the dashboard links each workflow to"},
	{key: "temporal_embedded_port", def: 7233, check: between(0, 65535), doc: "gRPC port of the embedded Temporal server"},

	// Authentication. The issuer, audience and refresh rules tie settings
	// together and are in Validate.
	{key: "auth_jwt_secret", def: "", note: "(required); `make run` generates one and keeps it in the data dir", check: minLength(32, "HS256 key"), mask: hide,
		doc: "HS256 key for access tokens (≥ 32 characters)"},
	{key: "auth_issuer", def: "causeway", doc: "`iss` claim"},
	{key: "auth_audience", def: "causeway-api", doc: "`aud` claim"},
	{key: "auth_token_ttl", def: "1h", check: durationBetween("1m", "24h"), doc: "access token lifetime"},
	{key: "auth_refresh_ttl", def: "720h", doc: "refresh token lifetime; at least the access token's"},
	{key: "auth_session_max", def: "720h", check: durationBetween("1h", "8760h"),
		doc: "absolute lifetime of a sign-in: its refresh chain ends this long after the password or SSO sign-in, however often it is refreshed"},
	// On a laptop the first person to open the dashboard signs up; in
	// production an operator creates the first tenant unless sign-up is on.
	{key: "auth_signup_enabled", def: false, dev: true, doc: "open self-service sign-up; when off, operators create tenants with `causeway tenant create`"},

	// Secrets at rest.
	{key: "secrets_key", def: "", note: "(required); `make run` generates one and keeps it in the data dir", check: secretsKey, mask: hide,
		doc: "32 bytes, base64 (`openssl rand -base64 32`): encrypts webhook secrets at rest"},

	// The LLM. Base URL and model go together (Validate).
	{key: "llm_base_url", def: "", note: "→ offline analyzer", mask: redactURL, doc: "any OpenAI-compatible endpoint; with `CAUSEWAY_LLM_MODEL`, investigations use it"},
	{key: "llm_api_key", def: "", mask: hide, doc: "API key of the LLM endpoint"},
	{key: "llm_model", def: "", doc: "model the LLM endpoint serves; required with `CAUSEWAY_LLM_BASE_URL`"},
	{key: "llm_tool_calls", def: 8, check: between(0, 50), doc: "tool calls one agent may make in a pass when an LLM is configured, refused calls included; 0 turns tool use off"},
	{key: "llm_tool_bytes", def: 32768, check: between(1024, 1<<20), doc: "bytes of tool answers one agent may read in a pass"},
	{key: "llm_tool_tokens", def: 30000, check: between(1000, 1000000), doc: "tokens one agent may spend on tool-use steps in a pass; past it the agent is asked for its answer"},

	// Outbound calls. Private addresses are the point on a laptop.
	{key: "egress_allow_private", def: false, dev: true, doc: "allow outbound calls to loopback/private addresses"},

	// Quotas and rate limits. The free plan's two quotas are checked together
	// in Validate.
	{key: "quota_events_per_month", def: 10000, doc: "monthly event quota of the `free` plan, where every new tenant starts (0 = unlimited, reported as `eventsRemaining: -1`)"},
	{key: "quota_investigations_per_month", def: 1000, doc: "monthly investigation quota of the `free` plan (0 = unlimited, reported as `investigationsRemaining: -1`)"},
	{key: "quota_users", def: 10, check: unlimitedOrMore, doc: "users a tenant on the `free` plan may have, people created by SSO included"},
	{key: "plan.team.events_per_month", def: 100000, check: unlimitedOrMore, doc: "monthly event quota of the `team` plan"},
	{key: "plan.team.investigations_per_month", def: 10000, check: unlimitedOrMore, doc: "monthly investigation quota of the `team` plan"},
	{key: "plan.team.users", def: 100, check: unlimitedOrMore, doc: "users a tenant on the `team` plan may have"},
	{key: "plan.enterprise.events_per_month", def: 0, check: unlimitedOrMore, doc: "monthly event quota of the `enterprise` plan, the one with single sign-on"},
	{key: "plan.enterprise.investigations_per_month", def: 0, check: unlimitedOrMore, doc: "monthly investigation quota of the `enterprise` plan"},
	{key: "plan.enterprise.users", def: 0, check: unlimitedOrMore, doc: "users a tenant on the `enterprise` plan may have"},
	{key: "rate_limit_per_minute", def: 1200, check: unlimitedOrMore, doc: "requests per minute per tenant; webhook deliveries have their own per-tenant budget of the same size, shared by all of the tenant's keys"},
	{key: "auth_rate_limit_per_minute", def: 60, check: unlimitedOrMore, doc: "sign-up, login, refresh and password-reset requests per minute per client IP, per /64 for IPv6"},
	{key: "webhook_ip_rate_limit_per_minute", def: 6000, check: unlimitedOrMore, doc: "webhook deliveries with a refused API key per minute per client IP, per /64 for IPv6; once spent, every delivery from that address is refused for a minute before any key is looked up. Deliveries with a valid key never spend it, so tenants sharing a sender do not hold each other back"},
	{key: "trusted_proxies", def: "", note: "(trust none)", check: networks, doc: "reverse proxies (IPs or CIDRs, comma-separated) whose `X-Forwarded-For` gives the client IP"},

	// Remediation: the databases sql_migration steps may change, and who may
	// use each (the tenants must name known targets: Validate).
	{key: "sql_targets", def: "", check: parsedBy(ParseSQLTargets), mask: maskTargets,
		doc: "named databases for `sql_migration` remediation steps: `name=postgres://…,other=sqlite:/path` (passwords, also `?password=`, masked in the start-up log)"},
	{key: "sql_target_tenants", def: "", note: "(no target usable)", check: parsedBy(ParseSQLTargetTenants),
		doc: "which tenants may use each SQL target: `name:tenantA|tenantB,other:*`; `*` (every tenant) only when written; a target without an entry is usable by nobody"},
	{key: "remediation_verify_after", def: "10m", check: durationBetween("1s", "24h"),
		doc: "how long after its steps complete a remediation is verified: the queries that evidenced the cause run again and the alert's state is read"},

	// Data sources. The pass budget must cover one query (Validate).
	{key: "datasource_allowed_networks", def: "", dev: devDataSourceNetworks, check: networks,
		doc: "the ceiling of the private networks (CIDRs, comma-separated) data sources may live on: a tenant reaches only what `causeway tenant networks` granted it inside these; public addresses are always reachable. Independent of `CAUSEWAY_EGRESS_ALLOW_PRIVATE`"},
	// One tenant on a laptop: granting networks one by one is ceremony there.
	{key: "datasource_grant_all", def: false, dev: true,
		doc: "grant every tenant the whole of `CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS` instead of its own grant; for a single-tenant or development install only. Causeway's own services stay refused either way"},
	{key: "datasource_query_timeout", def: "10s", check: durationBetween("1s", "2m"), doc: "one data-source query, connection included"},
	{key: "datasource_result_cap", def: 4096, check: between(512, 1<<20), doc: "bytes of one query's answer kept for the agents and in workflow history, most telling series first"},
	{key: "datasource_pass_budget", def: "30s", check: durationBetween("1s", "10m"), doc: "how long a pass waits for its data-source queries before the agents start with what answered; at least `CAUSEWAY_DATASOURCE_QUERY_TIMEOUT`"},
	{key: "datasource_max_queries", def: 60, check: between(1, 500), doc: "data-source queries per pass"},
	{key: "datasource_lookback", def: "30m", check: durationBetween("1m", "24h"), doc: "how long before the alert's onset the queried window starts"},

	// Slack (docs/slack.md).
	{key: "slack_api_url", def: "https://slack.com/api", check: httpURL,
		doc: "base of Slack's Web API ([docs/slack.md](docs/slack.md)); tests and egress proxies point it elsewhere"},

	// Sign-in with GitHub and Google: a provider is on when it has both a
	// client id and a secret. The endpoints are settings so that GitHub
	// Enterprise, a Google-compatible IdP or a test server can stand in.
	{key: "oauth.github.client_id", def: "", note: "(disabled)", doc: "GitHub sign-in: the OAuth app's client id"},
	{key: "oauth.github.client_secret", def: "", note: "(disabled)", mask: hide, doc: "GitHub sign-in: the OAuth app's client secret"},
	{key: "oauth.github.auth_url", def: "https://github.com/login/oauth/authorize", doc: "GitHub authorization endpoint (GitHub Enterprise: its own)"},
	{key: "oauth.github.token_url", def: "https://github.com/login/oauth/access_token", doc: "GitHub token endpoint"},
	{key: "oauth.github.userinfo_url", def: "https://api.github.com/user", doc: "GitHub user endpoint"},
	{key: "oauth.github.emails_url", def: "https://api.github.com/user/emails", doc: "GitHub e-mail list, which says the verified primary address"},
	{key: "oauth.google.client_id", def: "", note: "(disabled)", doc: "Google sign-in: the OAuth client id"},
	{key: "oauth.google.client_secret", def: "", note: "(disabled)", mask: hide, doc: "Google sign-in: the OAuth client secret"},
	{key: "oauth.google.auth_url", def: "https://accounts.google.com/o/oauth2/v2/auth", doc: "Google authorization endpoint"},
	{key: "oauth.google.token_url", def: "https://oauth2.googleapis.com/token", doc: "Google token endpoint"},
	{key: "oauth.google.userinfo_url", def: "https://openidconnect.googleapis.com/v1/userinfo", doc: "Google userinfo endpoint, which carries the verified e-mail"},
	{key: "oauth.google.emails_url", def: "", doc: "not read: Google's userinfo already carries the verified e-mail (the field exists because both providers share one shape)"},
}

// devDataSourceNetworks is what `make run` lets data sources live on: this
// machine and the private ranges (never link-local, where cloud metadata is).
const devDataSourceNetworks = "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"

// envName is the environment variable of a key; Load binds the same name
// through viper's prefix and key replacer.
func envName(key string) string {
	return "CAUSEWAY_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// name is the variable without its CAUSEWAY_ prefix: how Validate's
// messages are built and how the start-up log names the setting.
func (s setting) name() string { return strings.TrimPrefix(envName(s.key), "CAUSEWAY_") }

// fieldPaths maps every mapstructure path of Config to its field, found once
// by reflection, so the table refers to the typed fields by key alone.
var fieldPaths = sync.OnceValue(func() map[string][]int {
	paths := map[string][]int{}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			at := append(append([]int(nil), index...), i)
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+tag+".", at)
				continue
			}
			paths[prefix+tag] = at
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return paths
})

// value is the Config field of key. A key without a field is a mistake in
// the table, which TestSettingsMatchConfig reports before this panics.
func (c *Config) value(key string) any {
	index, ok := fieldPaths()[key]
	if !ok {
		panic("config: setting " + key + " has no Config field with that mapstructure tag")
	}
	return reflect.ValueOf(c).Elem().FieldByIndex(index).Interface()
}

// Masked returns every setting as a printable key/value pair (the variable
// without CAUSEWAY_), with secrets hidden and credentials in URLs redacted,
// for the start-up log line.
func (c *Config) Masked() map[string]any {
	m := make(map[string]any, len(settings))
	for _, s := range settings {
		v := c.value(s.key)
		switch x := v.(type) {
		case time.Duration:
			v = x.String()
		case string:
			if s.mask != nil {
				v = s.mask(x)
			}
		}
		m[s.name()] = v
	}
	return m
}

// hide shows only whether a secret is set.
func hide(s string) string {
	if s == "" {
		return ""
	}
	return "****"
}

// check is a setting's own validation: ok says what is wrong with a value (no
// variable name, Validate adds it), and allowed is the range the README shows
// next to the doc line, so the two cannot disagree.
type check struct {
	ok      func(v any) error
	allowed string
}

// typed adapts a validation of one Go type to the table's values. A check put
// on a field of another type is reported as a validation error, which every
// test that validates the defaults shows.
func typed[T any](f func(T) error) func(any) error {
	return func(v any) error {
		t, ok := v.(T)
		if !ok {
			var want T
			return fmt.Errorf("config: this check reads a %T, the field is a %T", want, v)
		}
		return f(t)
	}
}

// optional skips c for an empty value, which means "not used".
func optional(c check) check {
	return check{allowed: c.allowed, ok: func(v any) error {
		if v == "" {
			return nil
		}
		return c.ok(v)
	}}
}

var (
	hostPort = check{ok: typed(func(s string) error {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return fmt.Errorf("want host:port, got %q", s)
		}
		return nil
	})}
	nonEmpty = check{ok: typed(func(s string) error {
		if s == "" {
			return errors.New("must not be empty")
		}
		return nil
	})}
	postgresURL = check{ok: typed(func(s string) error {
		if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
			return errors.New("must be a postgres:// URL")
		}
		return nil
	})}
	redisURL = check{ok: typed(func(s string) error {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			return errors.New("must be a redis:// or rediss:// URL")
		}
		return nil
	})}
	httpURL = check{ok: typed(func(s string) error {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("must be an absolute http:// or https:// URL, got %q", s)
		}
		return nil
	})}
	secretsKey = check{ok: typed(func(s string) error {
		if k, err := base64.StdEncoding.DecodeString(s); err != nil || len(k) != 32 {
			return errors.New("must be 32 bytes, base64-encoded (openssl rand -base64 32)")
		}
		return nil
	})}
	// networks reads a comma-separated list of CIDRs or addresses.
	networks = parsedBy(ParseNetworks)
	// unlimitedOrMore is a quota or a rate, where 0 switches the limit off.
	unlimitedOrMore = check{allowed: "0 = unlimited", ok: typed(func(n int) error {
		if n < 0 {
			return fmt.Errorf("must be ≥ 0 (0 = unlimited), got %d", n)
		}
		return nil
	})}
)

// between is an integer range, bounds included.
func between(lo, hi int) check {
	return check{allowed: fmt.Sprintf("%d–%d", lo, hi), ok: typed(func(n int) error {
		if n < lo || n > hi {
			return fmt.Errorf("must be between %d and %d, got %d", lo, hi, n)
		}
		return nil
	})}
}

// durationBetween is a duration range, bounds included, written as the
// operator writes them ("1m", "24h").
func durationBetween(lo, hi string) check {
	l, errL := time.ParseDuration(lo)
	h, errH := time.ParseDuration(hi)
	if errL != nil || errH != nil {
		panic(fmt.Sprintf("config: duration bounds %q–%q", lo, hi))
	}
	return check{allowed: lo + "–" + hi, ok: typed(func(d time.Duration) error {
		if d < l || d > h {
			return fmt.Errorf("must be between %s and %s, got %s", lo, hi, d)
		}
		return nil
	})}
}

// minLength is a string at least n characters long, for the reason why.
func minLength(n int, why string) check {
	return check{ok: typed(func(s string) error {
		if len(s) < n {
			return fmt.Errorf("must be at least %d characters (%s)", n, why)
		}
		return nil
	})}
}

// parsedBy accepts what parse accepts; the parser's error names the bad part.
func parsedBy[T any](parse func(string) (T, error)) check {
	return check{ok: typed(func(s string) error {
		_, err := parse(s)
		return err
	})}
}
