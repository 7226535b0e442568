package egress

import (
	"context"
	"net"
	"net/netip"
	"testing"
)

// TestRefuseWinsOverEveryAllowance: one of Causeway's own listeners is
// refused although private egress, an allowed network and an exact allowed
// address would each let it through, and nothing connects to it; a listener
// on the next port, not refused, is reached by the same dialer.
func TestRefuseWinsOverEveryAllowance(t *testing.T) {
	own, other := listen(t), listen(t)
	ownAP := netip.MustParseAddrPort(own.Addr().String())
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := own.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	d := NewDialer(Options{
		AllowPrivate:  true,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		AllowAddrs:    []netip.AddrPort{ownAP},
		Refuse:        []Endpoint{{Net: netip.MustParsePrefix("127.0.0.0/8"), Port: ownAP.Port()}},
	})
	_, err := d.DialContext(context.Background(), "tcp", own.Addr().String())
	if !IsBlocked(err) || !IsOwnService(err) {
		t.Fatalf("dial of a refused own service: %v, want a blocked own-service error", err)
	}
	select {
	case <-accepted:
		t.Fatal("the refused listener accepted a connection")
	default:
	}
	c, err := d.DialContext(context.Background(), "tcp", other.Addr().String())
	if err != nil {
		t.Fatalf("dial of a listener that is not refused: %v", err)
	}
	c.Close()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestIntersectAndWithin: a grant meets the ceiling as the narrower prefix
// of each overlapping pair; a grant fits the ceiling only when wholly inside.
func TestIntersectAndWithin(t *testing.T) {
	p := func(s ...string) []netip.Prefix {
		out := make([]netip.Prefix, len(s))
		for i, x := range s {
			out[i] = netip.MustParsePrefix(x)
		}
		return out
	}
	for _, tc := range []struct {
		grant, ceiling []string
		want           string
	}{
		{[]string{"10.1.0.0/16"}, []string{"10.0.0.0/8"}, "10.1.0.0/16"},
		{[]string{"10.0.0.0/8"}, []string{"10.1.0.0/16", "10.2.0.0/16"}, "10.1.0.0/16,10.2.0.0/16"},
		{[]string{"10.0.0.0/8"}, []string{"192.168.0.0/16"}, ""},
		{[]string{"10.0.0.0/8", "fc00::/7"}, []string{"10.0.0.0/8", "fd00::/8"}, "10.0.0.0/8,fd00::/8"},
		{nil, []string{"10.0.0.0/8"}, ""},
		{[]string{"127.0.0.1/32"}, nil, ""},
	} {
		if got := NetworksKey(Intersect(p(tc.grant...), p(tc.ceiling...))); got != tc.want {
			t.Errorf("grant %v ∩ ceiling %v = %q, want %q", tc.grant, tc.ceiling, got, tc.want)
		}
	}
	ceiling := p("10.0.0.0/8", "127.0.0.0/8")
	for s, want := range map[string]bool{"10.3.0.0/16": true, "127.0.0.1/32": true, "10.0.0.0/7": false, "11.0.0.0/8": false, "::1/128": false} {
		if got := Within(netip.MustParsePrefix(s), ceiling); got != want {
			t.Errorf("Within(%s, %v) = %v, want %v", s, ceiling, got, want)
		}
	}
}
