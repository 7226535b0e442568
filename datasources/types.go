package datasources

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causeway/causeway/egress"
)

// Source types this version can query. More are added by registering a kind.
const (
	TypePrometheus = "prometheus"
	TypePostgres   = "postgres"
	TypeProbe      = "probe"
)

// kind is everything Causeway knows about one type of data source: how to
// check a new source's input, how to plan its queries, and how to build its
// client.
type kind struct {
	name string
	// urlRequired is false for sources whose targets live in settings.
	urlRequired bool
	// prepare checks the URL, auth and settings of a new source and may
	// rewrite them (a password in a URL moves into the auth).
	prepare func(c *reach, s *Spec) error
	// plan lists the source's queries for a pass; notes say what it left out.
	plan func(s Source, sc Scope, roles []string) ([]Query, []string)
	open func(c *reach, cfg Config) (Client, error)
}

var kinds = map[string]kind{}

func register(k kind) { kinds[k.name] = k }

// Types lists the registered source types, sorted.
func Types() []string {
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Spec is a data source as a tenant describes it, before it is stored.
type Spec struct {
	// TenantID is the tenant creating the source, from its verified
	// credential: its networks are what the source's address is judged by.
	TenantID string
	Name     string
	Type     string
	URL      string
	Auth     *Auth
	Settings map[string]any
}

// FieldError is a bad input, naming the field at fault.
type FieldError struct {
	Field   string
	Message string
}

// Error names the field, then the problem.
func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// Limits of a data source's input.
const (
	MaxNameLength = 200
	MaxURLLength  = 2000
	maxHeaders    = 20
	maxTargets    = 20
)

// Prepare checks a new source and returns what to store: the URL as shown
// (a password masked), the settings, and the credential to seal. The URL's
// host must be public or inside the tenant's networks, and not one of
// Causeway's own services; a host name is resolved to check that, and one
// that does not resolve now is left to the dial-time check.
func (c *Connector) Prepare(ctx context.Context, s Spec) (Config, error) {
	s.Name = strings.TrimSpace(s.Name)
	s.Type = strings.TrimSpace(s.Type)
	s.URL = strings.TrimSpace(s.URL)
	switch {
	case s.Name == "":
		return Config{}, fieldErr("name", "is required")
	case utf8.RuneCountInString(s.Name) > MaxNameLength:
		return Config{}, fieldErr("name", "must be at most %d characters", MaxNameLength)
	}
	k, ok := kinds[s.Type]
	if !ok {
		return Config{}, fieldErr("type", "must be one of %s", strings.Join(Types(), ", "))
	}
	if len(s.URL) > MaxURLLength {
		return Config{}, fieldErr("url", "must be at most %d characters", MaxURLLength)
	}
	if s.URL == "" && k.urlRequired {
		return Config{}, fieldErr("url", "is required for a %s source", s.Type)
	}
	if s.Auth != nil {
		if err := checkAuth(*s.Auth); err != nil {
			return Config{}, err
		}
	}
	if s.Settings == nil {
		s.Settings = map[string]any{}
	}
	r, err := c.reachFor(ctx, s.TenantID)
	if err != nil {
		return Config{}, err
	}
	if err := k.prepare(r, &s); err != nil {
		return Config{}, err
	}
	cfg := Config{Name: s.Name, Type: s.Type, URL: s.URL, Settings: s.Settings, TenantID: s.TenantID}
	if s.Auth != nil {
		cfg.Auth = *s.Auth
	}
	return cfg, nil
}

// checkAuth accepts exactly one form of credential.
func checkAuth(a Auth) error {
	forms := 0
	if a.BearerToken != "" {
		forms++
	}
	if a.Username != "" || a.Password != "" {
		forms++
		if a.Username == "" {
			return fieldErr("auth.username", "is required with auth.password")
		}
		if a.Password == "" {
			return fieldErr("auth.password", "is required with auth.username")
		}
	}
	if len(a.Headers) > 0 {
		forms++
		if len(a.Headers) > maxHeaders {
			return fieldErr("auth.headers", "may hold at most %d headers", maxHeaders)
		}
		for k, v := range a.Headers {
			if !validHeaderName(k) {
				return fieldErr("auth.headers", "%q is not a valid header name", k)
			}
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\r\n") {
				return fieldErr("auth.headers."+k, "must be a non-empty single-line value")
			}
			switch http.CanonicalHeaderKey(k) {
			case "Host", "Content-Length", "Transfer-Encoding", "Connection":
				return fieldErr("auth.headers", "%q cannot be set", k)
			}
		}
	}
	switch {
	case forms == 0:
		return fieldErr("auth", "must hold bearerToken, username and password, or headers")
	case forms > 1:
		return fieldErr("auth", "must hold only one of bearerToken, username and password, or headers")
	}
	return nil
}

func validHeaderName(k string) bool {
	if k == "" || len(k) > 100 {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// checkHTTPURL validates the URL of an HTTP API source.
func (c *reach) checkHTTPURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return fieldErr("url", "must be an absolute http or https URL")
	}
	if u.User != nil {
		return fieldErr("url", "must not carry credentials; put them in auth")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fieldErr("url", "must not carry a query or fragment")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return c.checkHost(ctx, "url", u.Hostname(), port)
}

// checkHost refuses a host that is, or resolves to, an address outside the
// tenant's networks, or, with port (empty when nothing will connect), one of
// Causeway's own services. A name that does not resolve now is accepted: the
// dial-time check judges whatever it resolves to later.
func (c *reach) checkHost(ctx context.Context, field, host, port string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return c.checkAddr(field, host, ip, port)
	}
	if numericLooking(host) {
		return fieldErr(field, "names %q, which is not a valid host name", host)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := c.checkAddr(field, host, a, port); err != nil {
			return err
		}
	}
	return nil
}

// checkAddr is checkHost for one address host resolved to.
func (c *reach) checkAddr(field, host string, ip netip.Addr, port string) error {
	name := ip.String()
	if host != name {
		name = host + " (resolving to " + name + ")"
	}
	if n, err := strconv.ParseUint(port, 10, 16); err == nil && egress.Refused(netip.AddrPortFrom(ip, uint16(n)), c.opts.Refuse) {
		return fieldErr(field, "points at %s port %s, one of Causeway's own services, which no data source may reach", name, port)
	}
	if !c.allowed(ip) {
		return fieldErr(field, "points at %s, which is neither public nor inside this tenant's networks (granted by the operator with `causeway tenant networks`, within CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS)", name)
	}
	return nil
}

// numericLooking refuses host names a libc resolver would read as an address
// ("2130706433", "127.1"): no real name ends in a numeric label.
func numericLooking(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// onlySettings refuses settings a type does not have.
func onlySettings(s map[string]any, allowed ...string) error {
	for _, k := range slices.Sorted(maps.Keys(s)) {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			if len(allowed) == 0 {
				return fieldErr("settings."+k, "is not a setting of this type (it has none)")
			}
			return fieldErr("settings."+k, "is not a setting of this type (known: %s)", strings.Join(allowed, ", "))
		}
	}
	return nil
}
