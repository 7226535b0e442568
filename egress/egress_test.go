package egress

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDNS is a loopback-only UDP DNS server so name-resolution tests are
// hermetic: no query ever reaches the host's configured nameserver.
type fakeDNS struct {
	pc      net.PacketConn
	answers map[string][]netip.Addr // fully qualified, lower case

	mu      sync.Mutex
	queried []string
}

func newFakeDNS(t *testing.T, answers map[string][]netip.Addr) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen fake dns: %v", err)
	}
	d := &fakeDNS{pc: pc, answers: answers}
	go d.serve()
	t.Cleanup(func() { _ = pc.Close() })
	return d
}

func (d *fakeDNS) resolver() *net.Resolver {
	addr := d.pc.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "udp", addr)
		},
	}
}

func (d *fakeDNS) names() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.queried...)
}

func (d *fakeDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := d.answer(buf[:n]); resp != nil {
			_, _ = d.pc.WriteTo(resp, from)
		}
	}
}

func (d *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	off := 12
	var labels []string
	for off < len(q) && q[off] != 0 {
		l := int(q[off])
		off++
		if l > 63 || off+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[off:off+l]))
		off += l
	}
	off++ // terminating zero label
	if off+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[off:])
	off += 4
	name := strings.ToLower(strings.Join(labels, ".")) + "."

	d.mu.Lock()
	d.queried = append(d.queried, name)
	d.mu.Unlock()

	addrs, known := d.answers[name]
	var rrs [][]byte
	for _, a := range addrs {
		switch {
		case qtype == 1 && a.Is4():
			b := a.As4()
			rrs = append(rrs, b[:])
		case qtype == 28 && a.Is6():
			b := a.As16()
			rrs = append(rrs, b[:])
		}
	}
	rcode := byte(0)
	if !known {
		rcode = 3 // NXDOMAIN
	}
	resp := []byte{q[0], q[1], 0x80 | 0x04 | (q[2] & 0x01), 0x80 | rcode, 0, 1, 0, byte(len(rrs)), 0, 0, 0, 0}
	resp = append(resp, q[12:off]...)
	for _, rd := range rrs {
		resp = append(resp, 0xC0, 0x0C, byte(qtype>>8), byte(qtype), 0, 1, 0, 0, 0, 60, 0, byte(len(rd)))
		resp = append(resp, rd...)
	}
	return resp
}

// dialRecorder is installed as the dial hook: it records every destination
// that passed the policy and refuses anything that is not loopback, as a
// safety net guaranteeing tests never connect off-host even if the policy
// under test were broken.
type dialRecorder struct {
	mu    sync.Mutex
	addrs []netip.AddrPort
}

func (r *dialRecorder) hook(ap netip.AddrPort) error {
	r.mu.Lock()
	r.addrs = append(r.addrs, ap)
	r.mu.Unlock()
	if !ap.Addr().IsLoopback() {
		return fmt.Errorf("test safety net: refusing non-loopback dial to %s", ap)
	}
	return nil
}

func (r *dialRecorder) dials() []netip.AddrPort {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]netip.AddrPort(nil), r.addrs...)
}

func get(t *testing.T, c *http.Client, rawURL string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	body, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp, rerr
}

func serverAddr(t *testing.T, srv *httptest.Server) netip.AddrPort {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

func TestBlocked(t *testing.T) {
	cases := []struct {
		addr    string
		blocked bool
	}{
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"10.0.0.5", true},
		{"172.16.3.4", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"100.64.0.1", true},
		{"100.100.100.200", true},
		{"100.127.255.255", true},
		{"192.0.0.192", true},
		{"192.0.2.10", true},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},
		{"168.63.129.16", true},
		{"::", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:10.1.2.3", true},
		{"fd00:ec2::254", true},
		{"fc00::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"ff02::1", true},
		{"100::1", true},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b:1::1", true},
		{"2002:7f00:1::1", true},
		{"2002:a00:1::1", true},
		{"2001::1", true},
		{"2001:db8::1", true},
		{"3fff::1", true},
		{"::7f00:1", true},

		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"93.184.215.14", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"172.32.0.1", false},
		{"198.20.0.1", false},
		{"::ffff:8.8.8.8", false},
		{"2606:4700:4700::1111", false},
		{"2a00:1450:4001::200e", false},
		{"64:ff9b::808:808", false},
		{"2002:808:808::1", false},
	}
	for _, tc := range cases {
		ip := netip.MustParseAddr(tc.addr)
		if got := Blocked(ip); got != tc.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", tc.addr, got, tc.blocked)
		}
	}
	if !Blocked(netip.Addr{}) {
		t.Error("Blocked(zero Addr) = false, want true")
	}
}

func TestHostileURLsRefused(t *testing.T) {
	dns := newFakeDNS(t, map[string][]netip.Addr{
		"localhost.":       {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"metadata.test.":   {netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")},
		"internal.test.":   {netip.MustParseAddr("10.0.0.5")},
		"loopback.test.":   {netip.MustParseAddr("127.0.0.1")},
		"mapped.test.":     {netip.MustParseAddr("::ffff:127.0.0.1")},
		"alibaba-md.test.": {netip.MustParseAddr("100.100.100.200")},
	})
	rec := &dialRecorder{}
	c := NewClient(Options{resolver: dns.resolver(), dialHook: rec.hook})

	hostile := []string{
		"http://127.0.0.1/",
		"http://localhost/",
		"http://localhost./",
		"http://LOCALHOST:8080/admin",
		"http://[::1]/",
		"http://0.0.0.0/",
		"http://[::]/",
		"http://10.0.0.5/",
		"http://172.16.3.4/",
		"http://192.168.1.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/",
		"http://100.100.100.200/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::ffff:7f00:1]/",
		"http://2130706433/",
		"http://0x7f000001/",
		"http://017700000001/",
		"http://127.1/",
		"http://0177.0.0.1/",
		"http://0x7f.1/",
		"http://127.0.0.1./",
		"http://[fe80::1]/",
		"http://[fe80::1%25lo]/",
		"http://100.64.0.1/",
		"http://192.0.0.192/",
		"http://198.18.0.1/",
		"http://240.0.0.1/",
		"http://255.255.255.255/",
		"http://224.0.0.1/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[2002:7f00:1::1]/",
		"https://127.0.0.1/",
		"http://127.0.0.1:6379/",
		"http://user:pass@127.0.0.1/",
		"http://metadata.test/latest/meta-data/",
		"http://internal.test/",
		"http://loopback.test/",
		"http://mapped.test/",
		"http://alibaba-md.test/",
		"ftp://example.com/file",
		"file:///etc/passwd",
		"gopher://127.0.0.1:6379/_INFO",
		"javascript:alert(1)",
		"data:text/plain,hello",
	}
	if len(hostile) < 20 {
		t.Fatalf("table too small: %d", len(hostile))
	}
	for _, u := range hostile {
		resp, err := get(t, c, u)
		if err == nil {
			t.Errorf("%s: request succeeded with status %d, want refusal", u, resp.StatusCode)
			continue
		}
		if !IsBlocked(err) || !errors.Is(err, ErrBlockedDestination) {
			t.Errorf("%s: error %v is not ErrBlockedDestination", u, err)
		}
	}
	if d := rec.dials(); len(d) != 0 {
		t.Errorf("policy let dials through to %v", d)
	}
	// Numeric host spellings must be refused before any resolver sees them.
	for _, name := range dns.names() {
		if numericHost(strings.TrimSuffix(name, ".")) {
			t.Errorf("numeric host %q reached the resolver", name)
		}
	}
}

// TestDefaultClientRefusesLiterals exercises the production configuration
// (no test hooks) with IP-literal targets, which need no resolver.
func TestDefaultClientRefusesLiterals(t *testing.T) {
	c := NewClient(Options{})
	for _, u := range []string{
		"http://127.0.0.1/",
		"http://[::1]/",
		"http://10.0.0.5/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://[fd00:ec2::254]/",
		"http://2130706433/",
		"ftp://127.0.0.1/",
	} {
		if _, err := get(t, c, u); !IsBlocked(err) {
			t.Errorf("%s: got %v, want ErrBlockedDestination", u, err)
		}
	}
}

// TestNoConnectionAttempted points refused requests at a real loopback
// listener and checks it never sees a connection.
func TestNoConnectionAttempted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = conn.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	c := NewClient(Options{})
	for _, u := range []string{
		fmt.Sprintf("http://127.0.0.1:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		fmt.Sprintf("https://127.0.0.1:%d/", port),
	} {
		if _, err := get(t, c, u); !IsBlocked(err) {
			t.Errorf("%s: got %v, want ErrBlockedDestination", u, err)
		}
	}
	// Sanity check that the listener does count connections.
	probe, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = probe.Close()
	deadline := time.Now().Add(2 * time.Second)
	for accepted.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := accepted.Load(); got != 1 {
		t.Errorf("listener accepted %d connections, want only the probe's 1", got)
	}
}

func TestAllowAddrsAndAllowPrivate(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rec := &dialRecorder{}

	blocked := NewClient(Options{dialHook: rec.hook})
	if _, err := get(t, blocked, srv.URL); !IsBlocked(err) {
		t.Fatalf("private egress off: got %v, want ErrBlockedDestination", err)
	}
	if hits.Load() != 0 {
		t.Fatal("refused request reached the server")
	}

	allowed := NewClient(Options{AllowAddrs: []netip.AddrPort{serverAddr(t, srv)}, dialHook: rec.hook})
	resp, err := get(t, allowed, srv.URL)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("AllowAddrs: got %v, %v", resp, err)
	}

	private := NewClient(Options{AllowPrivate: true, dialHook: rec.hook})
	resp, err = get(t, private, srv.URL)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("AllowPrivate: got %v, %v", resp, err)
	}
	if _, err := get(t, private, "ftp://127.0.0.1/"); !IsBlocked(err) {
		t.Errorf("AllowPrivate must still refuse non-http schemes, got %v", err)
	}
	if _, err := get(t, private, "http://2130706433/"); !IsBlocked(err) {
		t.Errorf("AllowPrivate must still refuse numeric host spellings, got %v", err)
	}
	if hits.Load() != 2 {
		t.Errorf("server hits = %d, want 2", hits.Load())
	}
}

func TestRedirects(t *testing.T) {
	var target string
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/to-other-loopback":
			http.Redirect(w, r, target, http.StatusFound)
		case "/to-ftp":
			http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/final":
			_, _ = io.WriteString(w, "final")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ap := serverAddr(t, srv)
	target = fmt.Sprintf("http://127.0.0.2:%d/final", ap.Port())
	rec := &dialRecorder{}
	c := NewClient(Options{AllowAddrs: []netip.AddrPort{ap}, dialHook: rec.hook})

	for _, path := range []string{"/to-other-loopback", "/to-ftp", "/to-metadata"} {
		if _, err := get(t, c, srv.URL+path); !IsBlocked(err) {
			t.Errorf("%s: got %v, want ErrBlockedDestination", path, err)
		}
	}
	for _, d := range rec.dials() {
		if d != ap {
			t.Errorf("dial to %s passed the policy, only %s is allowed", d, ap)
		}
	}

	resp, err := get(t, c, srv.URL+"/hop")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("same-host redirect: got %v, %v", resp, err)
	}

	hits.Store(0)
	_, err = get(t, c, srv.URL+"/loop")
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: got %v, want too-many-redirects error", err)
	}
	if IsBlocked(err) {
		t.Errorf("redirect loop should not be classified as blocked: %v", err)
	}
	if got := hits.Load(); got != defaultMaxRedirects+1 {
		t.Errorf("redirect loop made %d requests, want %d", got, defaultMaxRedirects+1)
	}

	hits.Store(0)
	one := NewClient(Options{MaxRedirects: 1, AllowAddrs: []netip.AddrPort{ap}, dialHook: rec.hook})
	if _, err := get(t, one, srv.URL+"/loop"); err == nil {
		t.Error("MaxRedirects=1: loop succeeded")
	}
	if got := hits.Load(); got != 2 {
		t.Errorf("MaxRedirects=1 made %d requests, want 2", got)
	}

	none := NewClient(Options{MaxRedirects: -1, AllowAddrs: []netip.AddrPort{ap}, dialHook: rec.hook})
	resp, err = get(t, none, srv.URL+"/hop")
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Errorf("MaxRedirects<0: got %v, %v, want the 302 itself", resp, err)
	}
}

func TestResponseSizeLimit(t *testing.T) {
	const limit = 4096
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := limit
		if r.URL.Path == "/big" {
			n = limit + 1
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	}))
	defer srv.Close()
	rec := &dialRecorder{}
	c := NewClient(Options{MaxResponseBytes: limit, AllowAddrs: []netip.AddrPort{serverAddr(t, srv)}, dialHook: rec.hook})

	resp, err := get(t, c, srv.URL+"/exact")
	if err != nil {
		t.Fatalf("body of exactly the limit: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if len(b) != limit {
		t.Errorf("read %d bytes, want %d", len(b), limit)
	}

	_, err = get(t, c, srv.URL+"/big")
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("oversize body: got %v, want ErrResponseTooLarge", err)
	}

	// The default cap is 1 MiB.
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(make([]byte, defaultMaxResponseBytes+10))
	}))
	defer big.Close()
	d := NewClient(Options{AllowAddrs: []netip.AddrPort{serverAddr(t, big)}, dialHook: rec.hook})
	if _, err := get(t, d, big.URL); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("default cap: got %v, want ErrResponseTooLarge", err)
	}
}

func TestIgnoresProxyEnvironment(t *testing.T) {
	var proxyHits atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyHits.Add(1)
		_, _ = io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "direct")
	}))
	defer target.Close()

	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	// A non-loopback name, so proxy-from-environment logic would not exempt
	// it; the fake resolver maps it to the target on loopback.
	dns := newFakeDNS(t, map[string][]netip.Addr{"direct.test.": {netip.MustParseAddr("127.0.0.1")}})
	ap := serverAddr(t, target)
	rec := &dialRecorder{}
	c := NewClient(Options{AllowAddrs: []netip.AddrPort{ap}, resolver: dns.resolver(), dialHook: rec.hook})

	resp, err := get(t, c, fmt.Sprintf("http://direct.test:%d/", ap.Port()))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "direct" || proxyHits.Load() != 0 {
		t.Errorf("body %q, proxy hits %d: request went through the proxy", b, proxyHits.Load())
	}
	if tr := c.Transport.(*transport); tr.base.Proxy != nil {
		t.Error("transport has a Proxy func")
	}
}

func TestTransportTimeouts(t *testing.T) {
	c := NewClient(Options{})
	if c.Timeout != defaultTimeout {
		t.Errorf("client timeout %v, want %v", c.Timeout, defaultTimeout)
	}
	tr := c.Transport.(*transport).base
	if tr.TLSHandshakeTimeout != tlsHandshakeTimeout || tr.ResponseHeaderTimeout != defaultResponseHeaderTimeout {
		t.Errorf("transport timeouts tls=%v header=%v", tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout)
	}
	if NewClient(Options{Timeout: time.Second}).Timeout != time.Second {
		t.Error("explicit Timeout not applied")
	}
}

func TestNumericHost(t *testing.T) {
	for _, h := range []string{"2130706433", "0x7f000001", "0X7F000001", "017700000001", "127.1", "0177.0.0.1", "0x7f.1", "1.2.3.0x4", "0x", "10.1.", "127.0.0.1."} {
		if !numericHost(h) {
			t.Errorf("numericHost(%q) = false, want true", h)
		}
	}
	for _, h := range []string{"127.0.0.1", "::1", "example.com", "1password.com", "3com.example", "0xdeadbeef.example.org", "localhost"} {
		if numericHost(h) {
			t.Errorf("numericHost(%q) = true, want false", h)
		}
	}
}

// TestTimeoutsReachTransport shows the configured overall and response-header
// timeouts are the ones the client and its transport enforce, and that the
// defaults stay 15s and 10s.
func TestTimeoutsReachTransport(t *testing.T) {
	cases := []struct {
		o            Options
		total, heads time.Duration
	}{
		{Options{}, 15 * time.Second, 10 * time.Second},
		{Options{Timeout: 2 * time.Minute, ResponseHeaderTimeout: 2 * time.Minute}, 2 * time.Minute, 2 * time.Minute},
	}
	for _, c := range cases {
		cl := NewClient(c.o)
		tr, ok := cl.Transport.(*transport)
		if !ok {
			t.Fatalf("transport %T", cl.Transport)
		}
		if cl.Timeout != c.total || tr.base.ResponseHeaderTimeout != c.heads {
			t.Errorf("%+v: timeout %v, header timeout %v; want %v, %v", c.o, cl.Timeout, tr.base.ResponseHeaderTimeout, c.total, c.heads)
		}
	}
}

func TestAllowNetworks(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rec := &dialRecorder{}

	elsewhere := NewClient(Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, dialHook: rec.hook})
	if _, err := get(t, elsewhere, srv.URL); !IsBlocked(err) {
		t.Fatalf("loopback outside the allowed networks: got %v, want ErrBlockedDestination", err)
	}
	if hits.Load() != 0 {
		t.Fatal("refused request reached the server")
	}
	loopback := NewClient(Options{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, dialHook: rec.hook})
	resp, err := get(t, loopback, srv.URL)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("loopback inside the allowed networks: got %v, %v", resp, err)
	}
	for _, c := range []struct {
		ip   string
		nets []string
		want bool
	}{
		{"8.8.8.8", nil, true},
		{"10.1.2.3", nil, false},
		{"10.1.2.3", []string{"10.0.0.0/8"}, true},
		{"169.254.169.254", []string{"10.0.0.0/8", "127.0.0.0/8"}, false},
		{"::ffff:10.1.2.3", []string{"10.0.0.0/8"}, true},
	} {
		var nets []netip.Prefix
		for _, n := range c.nets {
			nets = append(nets, netip.MustParsePrefix(n))
		}
		if got := Allowed(netip.MustParseAddr(c.ip), nets); got != c.want {
			t.Errorf("Allowed(%s, %v) = %v, want %v", c.ip, c.nets, got, c.want)
		}
	}
}
