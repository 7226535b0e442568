// Package datasources is how Causeway's agents query a tenant's own systems
// instead of reading only the alert: one client per kind of system
// (prometheus.go, postgres.go, probe.go, loki.go, elasticsearch.go,
// kubernetes.go), each returning typed readings
// (analyzer.Reading), and plans.go, the query plan per agent and source type as
// plain data. scope.go turns an incident's alert into the service, label
// matchers and time window every query is limited to.
//
// A kind is added by registering it (types.go) with a client file and plan
// entries; nothing else in Causeway names the kinds.
package datasources

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/config"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/egress"
)

// Auth is a data source's credential. It is stored sealed and opened only by
// the code that talks to the system (a query activity, the test call); it
// never appears in a response, a log line or workflow history.
type Auth struct {
	BearerToken string            `json:"bearerToken,omitempty"`
	Username    string            `json:"username,omitempty"`
	Password    string            `json:"password,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
}

// IsZero reports whether no credential is set.
func (a Auth) IsZero() bool {
	return a.BearerToken == "" && a.Username == "" && a.Password == "" && len(a.Headers) == 0
}

// apply sets the credential on an HTTP request.
func (a Auth) apply(req *http.Request) {
	switch {
	case a.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+a.BearerToken)
	case a.Username != "":
		req.SetBasicAuth(a.Username, a.Password)
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
}

// Config is one data source as its client needs it. URL is as stored: a
// password it carried is masked there and lives in Auth.
type Config struct {
	ID       string
	Name     string
	Type     string
	URL      string
	Settings map[string]any
	Auth     Auth
	// TenantID is the source's owner, whose networks every connection to it
	// is judged by.
	TenantID string
}

// Query is one planned query: what runs, against which source, for which
// agents and over which window. It enters workflow history as an activity's
// input, so it holds no secret and its text is bounded (MaxQueryText).
type Query struct {
	// Key is unique within a pass: the source, the plan entry and, for probes,
	// the target.
	Key          string
	DataSourceID string
	// Source is the data source's name, for people reading coverage.
	Source string
	Type   string
	// Entry names the plan entry (PlanEntry.ID).
	Entry string
	// Text is the query exactly as it runs: PromQL, SQL, a probe, LogQL, an
	// Elasticsearch request or Kubernetes paths.
	Text  string
	Roles []string
	Start time.Time
	End   time.Time
	Step  time.Duration
	// Target is a probe's endpoint, or the service whose objects a
	// Kubernetes list keeps.
	Target string `json:",omitempty"`
}

// MaxQueryText bounds a rendered query; a plan entry whose rendering is longer
// (too many matchers) is skipped with a note rather than sent.
const MaxQueryText = 16 << 10

// Result is what one query found: its readings, most telling first, and a note
// when the query ran but could not say much (an extension not installed, no
// matching series).
type Result struct {
	Readings []analyzer.Reading
	// Text is raw text a source returns instead of measurements (log lines,
	// events): agents read it like pasted context. Empty for measured results.
	Text string
	Note string
}

// Client talks to one data source.
type Client interface {
	// Test makes one real round trip and says what answered.
	Test(ctx context.Context) (string, error)
	// Run runs one planned query of this source's type.
	Run(ctx context.Context, q Query) (Result, error)
}

// Errors a client returns, so callers can tell what no retry will fix from
// what a retry may.
var (
	// ErrDenied: the system refused our credential or the query (401, 403,
	// permission denied). Retrying cannot help.
	ErrDenied = errors.New("data source denied access")
	// ErrBadQuery: the system rejected the query itself (400, a syntax error).
	ErrBadQuery = errors.New("data source rejected the query")
	// ErrBlocked: the destination is outside the allowed networks.
	ErrBlocked = errors.New("data source address not allowed")
	// ErrGrantsUnreadable: the tenant's networks could not be read (the
	// database is away), so nothing was dialled. A retry may help.
	ErrGrantsUnreadable = errors.New("the tenant's networks cannot be read")
)

// Permanent reports whether err is one no retry can fix.
func Permanent(err error) bool {
	return errors.Is(err, ErrDenied) || errors.Is(err, ErrBadQuery) || errors.Is(err, ErrBlocked) || egress.IsBlocked(err)
}

// Options configures a Connector.
type Options struct {
	// AllowNetworks is the ceiling of the private networks data sources may
	// live on (CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS): a tenant reaches its
	// grant inside it, never more. Public addresses are always reachable.
	AllowNetworks []netip.Prefix
	// Grants reads the networks granted to a tenant; nil grants nothing, so
	// every tenant reaches public addresses only.
	Grants Grants
	// GrantAll gives every tenant the whole ceiling instead of its grant
	// (CAUSEWAY_DATASOURCE_GRANT_ALL, `make run`).
	GrantAll bool
	// Refuse are Causeway's own listeners and dependencies, refused for every
	// tenant whatever its grant.
	Refuse []egress.Endpoint
	// QueryTimeout bounds one query, connection included.
	QueryTimeout time.Duration
	// ResultCap bounds, in bytes, the rendered result of one query that is
	// kept for the agents and enters workflow history.
	ResultCap int
	// MaxSeries bounds the series (or rows) one query turns into readings.
	MaxSeries int
}

// Grants is where a Connector reads the private networks the operator
// granted a tenant (models.Store).
type Grants interface {
	TenantNetworks(ctx context.Context, tenantID string) ([]netip.Prefix, error)
}

// Bounds of Options that are not settings.
const (
	DefaultMaxSeries = 50
	// maxResponseBytes bounds a raw HTTP answer before it is reduced to
	// readings: a range query over many series is large, the readings are not.
	maxResponseBytes = 8 << 20
)

// Connector builds clients for stored data sources. Every connection goes
// through a guarded client or dialer built for the querying tenant's
// networks, so what one tenant was granted is never what another reaches.
type Connector struct {
	opts Options

	mu sync.Mutex
	// reaches holds one reach per set of effective networks: tenants with
	// the same set share pooled connections, since the dial-time check would
	// have judged them alike; tenants with different sets never do.
	reaches map[string]*reach
}

// NewConnector returns a Connector with o's policy and limits.
func NewConnector(o Options) *Connector {
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = config.ProductionDefaults().DataSourceQueryTimeout
	}
	if o.ResultCap <= 0 {
		o.ResultCap = config.ProductionDefaults().DataSourceResultCap
	}
	if o.MaxSeries <= 0 {
		o.MaxSeries = DefaultMaxSeries
	}
	return &Connector{opts: o, reaches: map[string]*reach{}}
}

// reach is the way out of one set of effective networks: the guarded HTTP
// client and dialer every source client of a tenant with that set uses, at
// create, test and query time alike.
type reach struct {
	opts   Options
	nets   []netip.Prefix
	egress egress.Options
	http   *http.Client
	dialer *net.Dialer
}

// Networks is the private networks tenantID's sources may reach now: its
// grant inside the ceiling (the whole ceiling under GrantAll). It is read at
// every use, so a grant withdrawn or a ceiling lowered holds from the next
// query on.
func (c *Connector) Networks(ctx context.Context, tenantID string) ([]netip.Prefix, error) {
	if c.opts.GrantAll {
		return c.opts.AllowNetworks, nil
	}
	if c.opts.Grants == nil || tenantID == "" {
		return nil, nil
	}
	grant, err := c.opts.Grants.TenantNetworks(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGrantsUnreadable, err)
	}
	return egress.Intersect(grant, c.opts.AllowNetworks), nil
}

// reachFor is tenantID's reach.
func (c *Connector) reachFor(ctx context.Context, tenantID string) (*reach, error) {
	nets, err := c.Networks(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	key := egress.NetworksKey(nets)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.reaches[key]; ok {
		return r, nil
	}
	eo := egress.Options{AllowNetworks: nets, Refuse: c.opts.Refuse, Timeout: c.opts.QueryTimeout,
		ResponseHeaderTimeout: c.opts.QueryTimeout, MaxResponseBytes: maxResponseBytes, MaxRedirects: -1}
	r := &reach{opts: c.opts, nets: nets, egress: eo, http: egress.NewClient(eo), dialer: egress.NewDialer(eo)}
	c.reaches[key] = r
	return r, nil
}

// HTTPClient is a guarded client under tenantID's networks for a caller
// outside the data sources that probes a tenant's system (a remediation's
// verification): redirects are followed, each re-checked, and timeout bounds
// one request. It is built per call, so its connections are never pooled
// with another tenant's; the caller closes its idle connections.
func (c *Connector) HTTPClient(ctx context.Context, tenantID string, timeout time.Duration) (*http.Client, error) {
	r, err := c.reachFor(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	eo := r.egress
	eo.Timeout, eo.ResponseHeaderTimeout, eo.MaxRedirects, eo.MaxResponseBytes = timeout, timeout, 0, 0
	return egress.NewClient(eo), nil
}

// clientWithRoots is the guarded client verifying servers against roots
// instead of the system's, for a source with its own CA.
func (r *reach) clientWithRoots(roots *x509.CertPool) *http.Client {
	eo := r.egress
	eo.RootCAs = roots
	return egress.NewClient(eo)
}

// Options returns the connector's policy and limits.
func (c *Connector) Options() Options { return c.opts }

// Open builds the client of cfg's type, reaching out under the networks of
// cfg's tenant.
func (c *Connector) Open(ctx context.Context, cfg Config) (Client, error) {
	k, ok := kinds[cfg.Type]
	if !ok {
		return nil, fmt.Errorf("%w: unknown data source type %q", ErrBadQuery, cfg.Type)
	}
	r, err := c.reachFor(ctx, cfg.TenantID)
	if err != nil {
		return nil, err
	}
	return k.open(r, cfg)
}

// Run opens cfg's client and runs q within the query timeout; the result's
// readings are ordered most telling first and cut to the result cap.
func (c *Connector) Run(ctx context.Context, cfg Config, q Query) (Result, error) {
	cl, err := c.Open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.QueryTimeout)
	defer cancel()
	res, err := cl.Run(ctx, q)
	if err != nil {
		return Result{}, err
	}
	res.Readings = capReadings(res.Readings, c.opts.ResultCap)
	res.Text = capText(res.Text, c.opts.ResultCap)
	return res, nil
}

// capText keeps the leading whole lines of text within limit bytes, so every
// line an agent quotes is a line the system returned; a first line longer
// than limit is cut, its end marked.
func capText(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	if nl := strings.LastIndexByte(text[:limit+1], '\n'); nl > 0 {
		return text[:nl]
	}
	return clip.To(text, limit-len("…"))
}

// Test opens cfg's client and makes one round trip within the query timeout.
func (c *Connector) Test(ctx context.Context, cfg Config) (string, error) {
	cl, err := c.Open(ctx, cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.QueryTimeout)
	defer cancel()
	return cl.Test(ctx)
}

// capReadings keeps the leading readings whose lines fit in limit bytes.
func capReadings(rs []analyzer.Reading, limit int) []analyzer.Reading {
	n := 0
	for i, r := range rs {
		n += len(r.Line) + 1
		if n > limit {
			return rs[:i]
		}
	}
	return rs
}

// allowed reports whether addr may be connected to under the reach's
// networks.
func (r *reach) allowed(addr netip.Addr) bool {
	return egress.Allowed(addr, r.nets)
}
