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
)

// Permanent reports whether err is one no retry can fix.
func Permanent(err error) bool {
	return errors.Is(err, ErrDenied) || errors.Is(err, ErrBadQuery) || errors.Is(err, ErrBlocked) || egress.IsBlocked(err)
}

// Options configures a Connector.
type Options struct {
	// AllowNetworks are the private networks data sources may live on
	// (CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS); public addresses are always
	// reachable.
	AllowNetworks []netip.Prefix
	// QueryTimeout bounds one query, connection included.
	QueryTimeout time.Duration
	// ResultCap bounds, in bytes, the rendered result of one query that is
	// kept for the agents and enters workflow history.
	ResultCap int
	// MaxSeries bounds the series (or rows) one query turns into readings.
	MaxSeries int
}

// Bounds of Options that are not settings.
const (
	DefaultMaxSeries = 50
	// maxResponseBytes bounds a raw HTTP answer before it is reduced to
	// readings: a range query over many series is large, the readings are not.
	maxResponseBytes = 8 << 20
)

// Connector builds clients for stored data sources, all sharing one guarded
// HTTP client and dialer, so every connection obeys the allowlist.
type Connector struct {
	opts   Options
	egress egress.Options
	http   *http.Client
	dialer *net.Dialer
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
	eo := egress.Options{AllowNetworks: o.AllowNetworks, Timeout: o.QueryTimeout,
		ResponseHeaderTimeout: o.QueryTimeout, MaxResponseBytes: maxResponseBytes, MaxRedirects: -1}
	return &Connector{opts: o, egress: eo, http: egress.NewClient(eo), dialer: egress.NewDialer(eo)}
}

// clientWithRoots is the guarded client verifying servers against roots
// instead of the system's, for a source with its own CA.
func (c *Connector) clientWithRoots(roots *x509.CertPool) *http.Client {
	eo := c.egress
	eo.RootCAs = roots
	return egress.NewClient(eo)
}

// Options returns the connector's policy and limits.
func (c *Connector) Options() Options { return c.opts }

// Open builds the client of cfg's type.
func (c *Connector) Open(cfg Config) (Client, error) {
	k, ok := kinds[cfg.Type]
	if !ok {
		return nil, fmt.Errorf("%w: unknown data source type %q", ErrBadQuery, cfg.Type)
	}
	return k.open(c, cfg)
}

// Run opens cfg's client and runs q within the query timeout; the result's
// readings are ordered most telling first and cut to the result cap.
func (c *Connector) Run(ctx context.Context, cfg Config, q Query) (Result, error) {
	cl, err := c.Open(cfg)
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
	cl, err := c.Open(cfg)
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

// allowed reports whether addr may be connected to under the connector's
// allowlist.
func (c *Connector) allowed(addr netip.Addr) bool {
	return egress.Allowed(addr, c.opts.AllowNetworks)
}
