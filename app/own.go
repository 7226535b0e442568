package app

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/egress"
)

// Networks a listener on the unspecified address or on loopback answers on:
// every loopback address, and the unspecified address itself, which Linux
// dials as loopback.
var (
	loopbackNets    = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	unspecifiedNets = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("::/128")}
)

// OwnServices lists the endpoints of Causeway itself that no tenant may
// reach, whatever its grant: the API and metrics listeners, Temporal's
// frontend at temporalAddr (and the embedded UI), the database and Redis.
// Names are resolved once, here; a listener on the unspecified address is
// refused on loopback and on every address of this host. It is derived once
// at start and handed to every client that dials for a tenant.
func OwnServices(ctx context.Context, cfg *config.Config, temporalAddr string) []egress.Endpoint {
	hostPorts := []string{cfg.HTTPAddr, cfg.MetricsAddr, temporalAddr}
	if cfg.EmbeddedTemporal() {
		hostPorts = append(hostPorts, cfg.TemporalUIAddr)
	}
	hostPorts = append(hostPorts, urlHostPort(cfg.DatabaseURL, "5432"), urlHostPort(cfg.RedisURL, "6379"))
	var out []egress.Endpoint
	for _, hp := range hostPorts {
		out = append(out, endpointsOf(ctx, hp)...)
	}
	return out
}

// urlHostPort is the host:port a database or Redis URL connects to; "" for
// an unset or unreadable URL.
func urlHostPort(raw, defaultPort string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// endpointsOf is every endpoint hostPort is reachable at. A port of 0 is
// chosen by the kernel at listen time and cannot be named in advance.
func endpointsOf(ctx context.Context, hostPort string) []egress.Endpoint {
	host, portText, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil
	}
	var addrs []netip.Addr
	switch ip, err := netip.ParseAddr(host); {
	case host == "":
		addrs = []netip.Addr{netip.IPv4Unspecified()}
	case err == nil:
		addrs = []netip.Addr{ip}
	default:
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		addrs, _ = net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		cancel()
	}
	if len(addrs) == 0 {
		return nil
	}
	nets := slices.Clone(unspecifiedNets)
	for _, a := range addrs {
		a = a.WithZone("").Unmap()
		switch {
		case a.IsUnspecified():
			nets = append(append(nets, loopbackNets...), hostAddresses()...)
		case a.IsLoopback():
			nets = append(nets, loopbackNets...)
		default:
			nets = append(nets, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	out := make([]egress.Endpoint, 0, len(nets))
	for _, n := range nets {
		out = append(out, egress.Endpoint{Net: n, Port: uint16(port)})
	}
	return out
}

// hostAddresses are this host's own interface addresses, where a listener on
// the unspecified address also answers.
func hostAddresses() []netip.Prefix {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, ia := range ifAddrs {
		if n, ok := ia.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok {
				a = a.Unmap()
				out = append(out, netip.PrefixFrom(a, a.BitLen()))
			}
		}
	}
	return out
}
