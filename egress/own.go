package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// ErrOwnService is returned (wrapped, together with ErrBlockedDestination)
// when a destination is one of Causeway's own listeners or dependencies. No
// allowlist or grant opens them: a tenant who could point a data source at
// Causeway's database or Temporal could read or steer every other tenant.
var ErrOwnService = errors.New("egress: destination is one of Causeway's own services")

// IsOwnService reports whether err is a refusal because the destination is
// one of Causeway's own services, so messages can say so instead of blaming
// the tenant's networks.
func IsOwnService(err error) bool { return errors.Is(err, ErrOwnService) }

// Endpoint is one port on a range of addresses: how a listener is named when
// it answers on every loopback address, or on every address of the host.
type Endpoint struct {
	Net  netip.Prefix
	Port uint16
}

// Contains reports whether ap is the endpoint's port on one of its addresses.
func (e Endpoint) Contains(ap netip.AddrPort) bool {
	ap = normalize(ap)
	return ap.Port() == e.Port && e.Net.Contains(ap.Addr())
}

// String is the endpoint as the start-up log and error messages show it.
func (e Endpoint) String() string {
	if e.Net.IsSingleIP() {
		return netip.AddrPortFrom(e.Net.Addr(), e.Port).String()
	}
	return fmt.Sprintf("%s port %d", e.Net, e.Port)
}

// Refused reports whether ap is one of the endpoints in refuse.
func Refused(ap netip.AddrPort, refuse []Endpoint) bool {
	for _, e := range refuse {
		if e.Contains(ap) {
			return true
		}
	}
	return false
}

// ownServicef is a refusal of one of Causeway's own services.
func ownServicef(ap netip.AddrPort) error {
	return fmt.Errorf("%w: %w: %s", ErrBlockedDestination, ErrOwnService, ap)
}

// Within reports whether every address of p lies in one of networks: a grant
// must fit under the operator's ceiling, not merely touch it.
func Within(p netip.Prefix, networks []netip.Prefix) bool {
	p = p.Masked()
	for _, n := range networks {
		if n.Addr().Is4() == p.Addr().Is4() && n.Bits() <= p.Bits() && n.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// Intersect is the networks inside both a and b, as prefixes. Two prefixes
// are either disjoint or one holds the other, so the intersection of each
// pair is the narrower one or nothing. It is how a tenant's grant meets the
// ceiling at the time of use: a ceiling lowered after a grant was made lowers
// what the grant reaches too.
func Intersect(a, b []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, x := range a {
		x = x.Masked()
		for _, y := range b {
			y = y.Masked()
			switch {
			case Within(x, []netip.Prefix{y}):
				out = append(out, x)
			case Within(y, []netip.Prefix{x}):
				out = append(out, y)
			}
		}
	}
	slices.SortFunc(out, func(p, q netip.Prefix) int {
		if c := p.Addr().Compare(q.Addr()); c != 0 {
			return c
		}
		return p.Bits() - q.Bits()
	})
	return slices.Compact(out)
}

// NetworksKey names a set of networks, so that clients built for the same
// set can be shared and clients for different sets never are.
func NetworksKey(networks []netip.Prefix) string {
	s := make([]string, len(networks))
	for i, n := range networks {
		s[i] = n.Masked().String()
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ",")
}
