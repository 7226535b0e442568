package app

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/egress"
)

// TestOwnServicesCoverEveryListenerAndDependency: from the configuration
// and Temporal's address, the API on the unspecified address is refused on
// loopback and on this host's own addresses, the metrics port on every
// loopback address, and the database (by a name), Redis, Temporal and its
// embedded UI at their ports; the neighbouring ports stay open.
func TestOwnServicesCoverEveryListenerAndDependency(t *testing.T) {
	cfg := config.Defaults(config.ModeProduction)
	cfg.HTTPAddr, cfg.MetricsAddr = ":18080", "127.0.0.1:19090"
	cfg.DatabaseURL, cfg.RedisURL = "postgres://causeway:pw@localhost/causeway", "redis://:pw@127.0.0.1:6390/0"
	own := OwnServices(context.Background(), &cfg, "127.0.0.1:17233")

	refused := []string{"127.0.0.1:8233", "127.0.0.1:18080", "127.9.9.9:18080", "[::1]:18080", "0.0.0.0:18080", "127.0.0.2:19090", "[::1]:19090",
		"127.0.0.1:5432", "127.0.0.1:6390", "127.0.0.1:17233", "0.0.0.0:17233"}
	if a := firstHostAddress(t); a.IsValid() {
		refused = append(refused, netip.AddrPortFrom(a, 18080).String())
	}
	for _, s := range refused {
		if !egress.Refused(netip.MustParseAddrPort(s), own) {
			t.Errorf("%s is not refused", s)
		}
	}
	for _, s := range []string{"127.0.0.1:18081", "127.0.0.1:8080", "10.1.2.3:5432", "127.0.0.1:6379", "127.0.0.1:7233"} {
		if egress.Refused(netip.MustParseAddrPort(s), own) {
			t.Errorf("%s is refused, but is none of Causeway's services", s)
		}
	}
	// A port the kernel chooses at listen time cannot be named in advance.
	cfg.HTTPAddr, cfg.MetricsAddr, cfg.DatabaseURL, cfg.RedisURL = "127.0.0.1:0", "", "", ""
	cfg.TemporalAddress = "127.0.0.1:0" // a cluster: no embedded UI
	if got := OwnServices(context.Background(), &cfg, "127.0.0.1:0"); len(got) != 0 {
		t.Errorf("ports 0 and unset URLs gave %v", got)
	}
}

// firstHostAddress is one non-loopback address of this host, if it has one.
func firstHostAddress(t *testing.T) netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			a, _ := netip.AddrFromSlice(n.IP.To4())
			return a
		}
	}
	return netip.Addr{}
}
