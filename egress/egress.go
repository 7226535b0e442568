// Package egress provides the one outbound HTTP client Causeway uses to reach
// URLs supplied by tenants: event deliveries, remediation step executors
// (http, verification, deployment rollback hooks) and SNS certificate and
// subscription-confirmation fetches. Every such URL is attacker-influenced, so
// the client refuses to connect to anything but public unicast addresses
// (unless private egress is explicitly enabled for local development), caps
// response sizes, limits redirects and never honours proxy environment
// variables.
//
// The destination check runs at dial time on the IP address actually being
// connected to, after DNS resolution, so host names that resolve to internal
// addresses and DNS rebinding between a check and the connect are both caught.
package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

const (
	defaultTimeout          = 15 * time.Second
	defaultMaxResponseBytes = 1 << 20
	defaultMaxRedirects     = 3

	defaultResponseHeaderTimeout = 10 * time.Second

	dialTimeout         = 5 * time.Second
	tlsHandshakeTimeout = 5 * time.Second
)

// ErrBlockedDestination is returned (wrapped) when a request is refused
// because of where it would go: a non-public address, a disallowed scheme or
// an ambiguous numeric host name. Retrying cannot succeed, so callers treat it
// as a permanent failure; see IsBlocked.
var ErrBlockedDestination = errors.New("egress: destination not allowed")

// ErrResponseTooLarge is returned (wrapped) by a response body read once more
// than Options.MaxResponseBytes have been received, so a hostile or broken
// endpoint cannot exhaust worker memory.
var ErrResponseTooLarge = errors.New("egress: response body too large")

// Options configures NewClient. The zero value is the production policy:
// public destinations only, with default limits.
type Options struct {
	// AllowPrivate mirrors EGRESS_ALLOW_PRIVATE: it permits loopback, private
	// and link-local targets so `make run` can deliver to services on the
	// developer's machine. It must stay false in any shared deployment.
	AllowPrivate bool
	// Timeout bounds the whole request including redirects and reading the
	// body; zero or negative means 15s.
	Timeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response headers once the
	// request is sent; zero or negative means 10s. Callers whose receivers may
	// legitimately think for longer (remediation steps) raise it together with
	// Timeout, so the client never cuts a request shorter than the caller's own
	// deadline.
	ResponseHeaderTimeout time.Duration
	// MaxResponseBytes caps how much of a response body may be read; reading
	// beyond it fails with ErrResponseTooLarge. Zero or negative means 1 MiB.
	MaxResponseBytes int64
	// MaxRedirects is how many redirects are followed, each one re-checked;
	// zero means 3 and a negative value returns the redirect response itself
	// without following it.
	MaxRedirects int
	// AllowAddrs lists exact ip:port destinations that bypass the address
	// check. It exists for tests, so a test can talk to its own httptest
	// server while private egress stays off; production code leaves it empty.
	AllowAddrs []netip.AddrPort
	// AllowNetworks lists networks that are reachable although the address
	// policy would refuse them: the operator's allowlist for data sources
	// (CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS), which usually live on private
	// networks. Public addresses stay reachable either way.
	AllowNetworks []netip.Prefix
	// Refuse lists destinations refused whatever else allows them, private
	// egress and AllowAddrs included: Causeway's own listeners and
	// dependencies, which no tenant may reach.
	Refuse []Endpoint
	// RootCAs, when set, replaces the system roots for verifying servers: a
	// cluster's API server presents a certificate of the cluster's own CA.
	RootCAs *x509.CertPool

	// resolver replaces the system resolver so tests can make a name resolve
	// to a chosen address without any DNS traffic leaving the host.
	resolver *net.Resolver
	// dialHook, when set, sees every destination that passed the check just
	// before connect and can veto it; tests use it to prove nothing hostile
	// was ever about to be connected to.
	dialHook func(netip.AddrPort) error
}

// IsBlocked reports whether err (or anything it wraps) is a refusal by the
// destination policy, which lets delivery and step-execution code classify
// the failure as non-retryable.
func IsBlocked(err error) bool {
	return errors.Is(err, ErrBlockedDestination)
}

func blockedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBlockedDestination, fmt.Sprintf(format, args...))
}

// NewClient returns an *http.Client that enforces the egress policy in o.
// Each call builds its own transport; callers should create one client per
// policy and reuse it so connections are pooled.
func NewClient(o Options) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.ResponseHeaderTimeout <= 0 {
		o.ResponseHeaderTimeout = defaultResponseHeaderTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = defaultMaxResponseBytes
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = defaultMaxRedirects
	}

	dialer := NewDialer(o)
	base := &http.Transport{
		// Never consult HTTP_PROXY and friends: a proxy would make the
		// dial-time check inspect the proxy's address instead of the target's.
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs},
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ResponseHeaderTimeout:  o.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    10,
		MaxResponseHeaderBytes: 64 << 10,
	}

	maxRedirects := o.MaxRedirects
	return &http.Client{
		Transport: &transport{base: base, maxBody: o.MaxResponseBytes},
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if maxRedirects < 0 {
				return http.ErrUseLastResponse
			}
			if len(via) > maxRedirects {
				return fmt.Errorf("egress: stopped after %d redirects", maxRedirects)
			}
			return CheckURL(req.URL, true)
		},
	}
}

// NewDialer returns a dialer that applies the destination check of o to every
// connection it opens, for clients that speak something other than HTTP (a
// database driver, a TCP or TLS probe) under the same policy as NewClient.
func NewDialer(o Options) *net.Dialer {
	g := &guard{
		allowPrivate:  o.AllowPrivate,
		allowAddrs:    make(map[netip.AddrPort]struct{}, len(o.AllowAddrs)),
		allowNetworks: o.AllowNetworks,
		refuse:        o.Refuse,
		hook:          o.dialHook,
	}
	for _, ap := range o.AllowAddrs {
		g.allowAddrs[normalize(ap)] = struct{}{}
	}
	return &net.Dialer{
		Timeout:        dialTimeout,
		KeepAlive:      30 * time.Second,
		Resolver:       o.resolver,
		ControlContext: g.control,
	}
}

// guard is the dial-time destination check.
type guard struct {
	allowPrivate  bool
	allowAddrs    map[netip.AddrPort]struct{}
	allowNetworks []netip.Prefix
	refuse        []Endpoint
	hook          func(netip.AddrPort) error
}

// control runs after the socket is created and before connect, with the
// resolved address, so a refusal here means no packet is sent to it.
func (g *guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return blockedf("unparseable dial address %q", address)
	}
	ap = normalize(ap)
	if Refused(ap, g.refuse) {
		return ownServicef(ap)
	}
	if _, ok := g.allowAddrs[ap]; !ok && !g.allowPrivate && !Allowed(ap.Addr(), g.allowNetworks) {
		return blockedf("address %s is neither public nor in an allowed network", ap.Addr())
	}
	if g.hook != nil {
		return g.hook(ap)
	}
	return nil
}

func normalize(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())
}

// Allowed reports whether ip may be connected to under an allowlist of
// networks: a public address always, any other only inside one of networks.
func Allowed(ip netip.Addr, networks []netip.Prefix) bool {
	ip = ip.WithZone("").Unmap()
	return !Blocked(ip) || inAny(ip, networks)
}

// CheckURL is the part of the policy that can be decided from a URL alone:
// an http or https scheme, a host, no ambiguous numeric host name and, unless
// allowPrivate, no IP literal that Blocked refuses. The client applies it to
// every hop before any resolution happens (with allowPrivate true, since the
// dial-time check then judges the actual address); services apply it when a
// URL is stored, so a URL the client would always refuse is rejected up front
// instead of failing every later attempt. Refusals wrap ErrBlockedDestination.
func CheckURL(u *url.URL, allowPrivate bool) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return blockedf("scheme %q not allowed", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return blockedf("missing host")
	}
	if numericHost(host) {
		return blockedf("ambiguous numeric host %q", host)
	}
	if ip, err := netip.ParseAddr(host); err == nil && !allowPrivate && Blocked(ip) {
		return blockedf("address %s is not public", ip)
	}
	return nil
}

// numericHost reports whether host is not a canonical IP literal yet looks
// numeric, like "2130706433", "0x7f000001", "017700000001", "127.1" or
// "127.0.0.1." (Go only parses the canonical form without a dot). libc
// resolvers turn such names into addresses while Go's parser does not, and
// no real domain has a numeric top-level label, so they are refused outright
// rather than handed to a resolver.
func numericHost(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	host = strings.TrimSuffix(host, ".")
	last := host
	if i := strings.LastIndexByte(host, '.'); i >= 0 {
		last = host[i+1:]
	}
	if last == "" {
		return false
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// transport applies the URL policy to every hop (including redirects) and
// caps response bodies.
type transport struct {
	base    *http.Transport
	maxBody int64
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := CheckURL(req.URL, true); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.maxBody}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// pooled connections of the wrapped transport.
func (t *transport) CloseIdleConnections() {
	t.base.CloseIdleConnections()
}

// limitedBody fails with ErrResponseTooLarge once more than the allowed
// number of bytes has been read, instead of silently truncating.
type limitedBody struct {
	rc   io.ReadCloser
	left int64 // bytes still allowed; negative once the limit was exceeded
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrResponseTooLarge
	}
	// Ask for one byte beyond the limit so an exactly-full body still ends
	// with io.EOF while anything longer is detected.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		n = int(b.left)
		b.left = -1
		return n, ErrResponseTooLarge
	}
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error {
	return b.rc.Close()
}
