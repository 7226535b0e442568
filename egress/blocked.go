package egress

import "net/netip"

// blockedV4 lists every IPv4 range that is not ordinary public unicast. A
// webhook or step executor has no business reaching any of them, and several
// (metadata services, CGNAT-hosted cloud agents) are classic SSRF targets.
var blockedV4 = mustPrefixes(
	"0.0.0.0/8",        // "this network", includes the unspecified address
	"10.0.0.0/8",       // RFC 1918
	"100.64.0.0/10",    // CGNAT shared space, includes Alibaba metadata 100.100.100.200
	"127.0.0.0/8",      // loopback
	"169.254.0.0/16",   // link-local, includes 169.254.169.254 metadata
	"172.16.0.0/12",    // RFC 1918
	"192.0.0.0/24",     // IETF protocol assignments, includes Oracle metadata 192.0.0.192
	"192.0.2.0/24",     // TEST-NET-1 documentation
	"192.88.99.0/24",   // deprecated 6to4 relay anycast
	"192.168.0.0/16",   // RFC 1918
	"198.18.0.0/15",    // benchmarking
	"198.51.100.0/24",  // TEST-NET-2 documentation
	"203.0.113.0/24",   // TEST-NET-3 documentation
	"224.0.0.0/4",      // multicast
	"240.0.0.0/4",      // reserved, includes broadcast 255.255.255.255
	"168.63.129.16/32", // Azure wireserver/metadata virtual IP (publicly numbered)
)

// blockedV6 lists ranges inside global unicast 2000::/3 that are still not
// public destinations. Everything outside 2000::/3 is refused wholesale (see
// Blocked), apart from NAT64 which is judged by the IPv4 address it embeds.
var blockedV6 = mustPrefixes(
	"2001::/23",     // IETF protocol assignments: Teredo, benchmarking, ORCHID
	"2001:db8::/32", // documentation
	"3fff::/20",     // documentation (RFC 9637)
)

var (
	globalUnicastV6 = netip.MustParsePrefix("2000::/3")
	nat64WellKnown  = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour       = netip.MustParsePrefix("2002::/16")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Blocked reports whether ip is anything other than a public unicast address.
// It is the single policy deciding where outbound requests may go when private
// egress is off, so it errs on the side of refusing: invalid addresses,
// loopback, private, link-local, multicast, CGNAT, reserved, documentation and
// benchmarking ranges, cloud metadata endpoints, and IPv6 translation forms
// (IPv4-mapped, NAT64, 6to4) that embed any of those are all blocked.
func Blocked(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("").Unmap()
	if ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	if ip.Is4() {
		return inAny(ip, blockedV4)
	}
	if nat64WellKnown.Contains(ip) {
		b := ip.As16()
		return Blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if !globalUnicastV6.Contains(ip) {
		return true
	}
	if sixToFour.Contains(ip) {
		b := ip.As16()
		return Blocked(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return inAny(ip, blockedV6)
}

func inAny(ip netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
