package datasources

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
)

// Probe kinds: the Query text of a probe entry starts with one of these.
const (
	probeDNS = "dns lookup"
	probeTCP = "tcp connect"
	probeTLS = "tls handshake"
)

func init() {
	register(kind{
		name:    TypeProbe,
		prepare: prepareProbe,
		plan:    planProbe,
		open: func(c *reach, cfg Config) (Client, error) {
			return &prober{c: c, cfg: cfg}, nil
		},
	})
}

// Target is one endpoint to probe.
type Target struct {
	Host string
	// Port is empty for a bare host name, which is only resolved.
	Port string
	TLS  bool
}

// Address is host:port, or the host alone when no port is known.
func (t Target) Address() string {
	if t.Port == "" {
		return t.Host
	}
	return net.JoinHostPort(t.Host, t.Port)
}

// ParseTarget reads an endpoint as a tenant or an alert names it: an http,
// https, tls or tcp URL, host:port, or a bare host name. https and tls URLs
// and port 443 are probed with a TLS handshake.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 500 || strings.ContainsAny(s, " \t\r\n") {
		return Target{}, errors.New("want a URL, host:port or a host name")
	}
	var t Target
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return Target{}, errors.New("not a URL with a host")
		}
		t.Host, t.Port = u.Hostname(), u.Port()
		switch u.Scheme {
		case "https":
			t.TLS = true
			if t.Port == "" {
				t.Port = "443"
			}
		case "http":
			if t.Port == "" {
				t.Port = "80"
			}
		case "tls":
			t.TLS = true
		case "tcp":
		default:
			return Target{}, fmt.Errorf("scheme %q is not probed (http, https, tls, tcp)", u.Scheme)
		}
		if (u.Scheme == "tls" || u.Scheme == "tcp") && t.Port == "" {
			return Target{}, fmt.Errorf("a %s target needs a port", u.Scheme)
		}
	} else if h, p, err := net.SplitHostPort(s); err == nil {
		t.Host, t.Port = h, p
		t.TLS = p == "443"
	} else {
		t.Host = s
	}
	if t.Port != "" {
		if n, err := strconv.Atoi(t.Port); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("port %q is not a port number", t.Port)
		}
	}
	if _, err := netip.ParseAddr(t.Host); err != nil {
		if len(t.Host) > 253 || strings.Trim(t.Host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" || numericLooking(t.Host) {
			return Target{}, fmt.Errorf("%q is not a host name", t.Host)
		}
	}
	return t, nil
}

func prepareProbe(c *reach, s *Spec) error {
	if s.Auth != nil {
		return fieldErr("auth", "a probe source takes no credential")
	}
	if err := onlySettings(s.Settings, "targets"); err != nil {
		return err
	}
	var targets []string
	if raw, ok := s.Settings["targets"]; ok {
		list, isList := raw.([]any)
		if !isList {
			return fieldErr("settings.targets", "must be a list of URLs, host:port or host names")
		}
		if len(list) > maxTargets {
			return fieldErr("settings.targets", "may list at most %d targets", maxTargets)
		}
		for i, v := range list {
			str, isString := v.(string)
			if !isString {
				return fieldErr(fmt.Sprintf("settings.targets[%d]", i), "must be a string")
			}
			targets = append(targets, str)
		}
	}
	if s.URL != "" {
		targets = append(targets, s.URL)
	}
	for i, raw := range targets {
		field := fmt.Sprintf("settings.targets[%d]", i)
		if s.URL != "" && i == len(targets)-1 {
			field = "url"
		}
		t, err := ParseTarget(raw)
		if err != nil {
			return fieldErr(field, "%v", err)
		}
		if err := c.checkHost(context.Background(), field, t.Host, t.Port); err != nil {
			return err
		}
	}
	return nil
}

// probeTargets lists a probe source's targets: its settings, its URL, then
// the endpoints the alert names, without repeats.
func probeTargets(s Source, sc Scope) []Target {
	var raws []string
	if list, ok := s.Settings["targets"].([]any); ok {
		for _, v := range list {
			if str, ok := v.(string); ok {
				raws = append(raws, str)
			}
		}
	}
	if s.URL != "" {
		raws = append(raws, s.URL)
	}
	raws = append(raws, sc.Endpoints...)
	var out []Target
	seen := map[string]bool{}
	for _, r := range raws {
		t, err := ParseTarget(r)
		if err != nil || seen[t.Address()] || len(out) == maxTargets {
			continue
		}
		seen[t.Address()] = true
		out = append(out, t)
	}
	return out
}

func planProbe(s Source, sc Scope, roles []string) ([]Query, []string) {
	entries := entriesFor(TypeProbe, roles)
	targets := probeTargets(s, sc)
	if len(entries) > 0 && len(targets) == 0 {
		return nil, []string{fmt.Sprintf("probe source %q has no targets and the alert names no endpoint", s.Name)}
	}
	var qs []Query
	for _, t := range targets {
		_, literal := netip.ParseAddr(t.Host)
		for _, e := range entries {
			var text string
			switch e.Query {
			case probeDNS:
				if literal == nil {
					continue // an address needs no lookup
				}
				text = probeDNS + " " + t.Host
			case probeTCP:
				if t.Port == "" {
					continue
				}
				text = probeTCP + " " + t.Address()
			case probeTLS:
				if !t.TLS {
					continue
				}
				text = probeTLS + " " + t.Address() + " (server name " + t.Host + ")"
			}
			qs = append(qs, Query{Key: queryKey(s.ID, e.ID, t.Address()), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
				Text: text, Roles: e.roles, Start: sc.Start, End: sc.End, Target: t.Address()})
		}
	}
	return qs, nil
}

// prober checks endpoints directly: name resolution, a TCP connection, a TLS
// handshake and the certificate it presents. Connections go through the
// guarded dialer, so only allowed addresses are ever contacted.
type prober struct {
	c   *reach
	cfg Config
}

// Test resolves and connects to every configured target.
func (p *prober) Test(ctx context.Context) (string, error) {
	targets := probeTargets(Source{ID: p.cfg.ID, Name: p.cfg.Name, Type: p.cfg.Type, URL: p.cfg.URL, Settings: p.cfg.Settings}, Scope{})
	if len(targets) == 0 {
		return "no targets configured; endpoints named in alerts will be probed", nil
	}
	failed := &probeFailures{total: len(targets)}
	for _, t := range targets {
		var err error
		if t.Port == "" {
			_, err = net.DefaultResolver.LookupNetIP(ctx, "ip", t.Host)
		} else {
			var conn net.Conn
			conn, err = p.c.dialer.DialContext(ctx, "tcp", t.Address())
			if err == nil {
				_ = conn.Close()
			}
		}
		if err != nil {
			failed.failed = append(failed.failed, probeFailure{target: t.Address(), err: describeNetError(err)})
		}
	}
	if len(failed.failed) > 0 {
		return "", failed
	}
	return fmt.Sprintf("%d targets reachable", len(targets)), nil
}

// probeFailure is one target of a probe source's test that did not answer.
type probeFailure struct {
	target string
	err    error
}

// probeFailures is a failed test of a probe source: every failing target
// with why, each said as Describe says it, out of total.
type probeFailures struct {
	total  int
	failed []probeFailure
}

func (f *probeFailures) Error() string {
	parts := make([]string, len(f.failed))
	for i, p := range f.failed {
		parts[i] = p.target + ": " + Describe(p.err)
	}
	return fmt.Sprintf("%d of %d targets failed: %s", len(f.failed), f.total, strings.Join(parts, "; "))
}

// Unwrap lets a refusal by the policy be recognized behind a failed test.
func (f *probeFailures) Unwrap() []error {
	out := make([]error, len(f.failed))
	for i, p := range f.failed {
		out[i] = p.err
	}
	return out
}

// Run performs one probe and reports what it saw as readings; a failing
// endpoint is a reading (that is the evidence), not an error.
func (p *prober) Run(ctx context.Context, q Query) (Result, error) {
	e, ok := entry(TypeProbe, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no probe plan entry %q", ErrBadQuery, q.Entry)
	}
	t, err := ParseTarget(q.Target)
	if err != nil {
		return Result{}, fmt.Errorf("%w: target %q: %v", ErrBadQuery, q.Target, err)
	}
	switch e.Query {
	case probeDNS:
		return p.dns(ctx, t)
	case probeTCP:
		return p.tcp(ctx, t)
	case probeTLS:
		return p.tls(ctx, t)
	}
	return Result{}, fmt.Errorf("%w: unknown probe %q", ErrBadQuery, e.Query)
}

func probeReading(signal, unit string, value float64, what string, labels map[string]string) analyzer.Reading {
	r := analyzer.Reading{Signal: signal, Unit: unit, Value: value, At: time.Now().UTC(), Labels: labels}
	r.Render(what)
	return r
}

func (p *prober) dns(ctx context.Context, t Target) (Result, error) {
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", t.Host)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("timed out resolving %s", t.Host)
		}
		return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalDNSLookup, analyzer.UnitBool, 0,
			"DNS lookup of "+t.Host, map[string]string{"host": t.Host, "error": dnsFailure(err)})}}, nil
	}
	list := make([]string, 0, len(addrs))
	for _, a := range addrs {
		list = append(list, a.String())
	}
	sort.Strings(list)
	if len(list) > 4 {
		list = list[:4]
	}
	return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalDNSLookup, analyzer.UnitBool, 1,
		"DNS lookup of "+t.Host, map[string]string{"host": t.Host, "addresses": strings.Join(list, ",")})}}, nil
}

// dnsFailure names a resolution failure the way resolvers report it.
func dnsFailure(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		switch {
		case de.IsNotFound:
			return "no such host (NXDOMAIN)"
		case de.IsTimeout:
			return "lookup timed out"
		case de.IsTemporary:
			return "temporary failure in name resolution (SERVFAIL)"
		}
		return de.Err
	}
	return err.Error()
}

// dial opens a TCP connection through the guarded dialer; a refusal by the
// allowlist is an error (nothing was probed), any other failure a reading.
func (p *prober) dial(ctx context.Context, t Target) (net.Conn, string, error) {
	conn, err := p.c.dialer.DialContext(ctx, "tcp", t.Address())
	if err == nil {
		return conn, "", nil
	}
	reason := dialFailure(err)
	switch reason {
	case "blocked":
		return nil, "", describeNetError(err)
	case "":
		reason = clip.To(err.Error(), 160)
	case "unresolved":
		reason = "name not resolved"
	}
	return nil, reason, nil
}

func (p *prober) tcp(ctx context.Context, t Target) (Result, error) {
	start := time.Now()
	conn, reason, err := p.dial(ctx, t)
	if err != nil {
		return Result{}, err
	}
	if conn == nil {
		return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalTCPConnect, analyzer.UnitBool, 0,
			"TCP connect to "+t.Address(), map[string]string{"address": t.Address(), "error": reason})}}, nil
	}
	defer conn.Close()
	return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalTCPConnect, analyzer.UnitBool, 1,
		"TCP connect to "+t.Address(), map[string]string{"address": t.Address(), "connect_ms": strconv.FormatInt(time.Since(start).Milliseconds(), 10)})}}, nil
}

// tls completes a handshake without verifying, to read the certificate
// whatever is wrong with it, then verifies the chain against the system
// roots at the time of the check, so both what the certificate says and
// whether clients would accept it are reported.
func (p *prober) tls(ctx context.Context, t Target) (Result, error) {
	conn, reason, err := p.dial(ctx, t)
	if err != nil {
		return Result{}, err
	}
	labels := map[string]string{"address": t.Address(), "server_name": t.Host}
	if conn == nil {
		labels["error"] = "connect: " + reason
		return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalTLSHandshake, analyzer.UnitBool, 0, "TLS handshake with "+t.Address(), labels)}}, nil
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	tc := tls.Client(conn, &tls.Config{ServerName: t.Host, InsecureSkipVerify: true, MinVersion: tls.VersionTLS10}) // #nosec G402 -- verified below, by hand, to report why
	if err := tc.HandshakeContext(ctx); err != nil {
		labels["error"] = "handshake: " + clip.To(err.Error(), 160)
		return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalTLSHandshake, analyzer.UnitBool, 0, "TLS handshake with "+t.Address(), labels)}}, nil
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		labels["error"] = "no certificate presented"
		return Result{Readings: []analyzer.Reading{probeReading(analyzer.SignalTLSHandshake, analyzer.UnitBool, 0, "TLS handshake with "+t.Address(), labels)}}, nil
	}
	now := time.Now().UTC()
	earliest := certs[0]
	for _, c := range certs[1:] {
		if c.NotAfter.Before(earliest.NotAfter) {
			earliest = c
		}
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, verr := certs[0].Verify(x509.VerifyOptions{DNSName: t.Host, Intermediates: inter, CurrentTime: now})
	certLabels := map[string]string{"address": t.Address(), "server_name": t.Host, "subject": earliest.Subject.CommonName, "issuer": earliest.Issuer.CommonName}
	expiry := probeReading(analyzer.SignalCertExpiry, analyzer.UnitUnix, float64(earliest.NotAfter.Unix()), "TLS certificate of "+t.Address()+" not after", certLabels)
	expiry.At = now
	expiry.Render("TLS certificate of " + t.Address() + " not after")
	hs := 1.0
	if verr != nil {
		hs = 0
		labels["error"] = "certificate: " + clip.To(verr.Error(), 160)
	}
	return Result{Readings: []analyzer.Reading{expiry, probeReading(analyzer.SignalTLSHandshake, analyzer.UnitBool, hs, "TLS verification of "+t.Address(), labels)}}, nil
}
