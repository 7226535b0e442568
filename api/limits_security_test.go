package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsMethodLabelIsBounded shows a request with an invented HTTP method
// is counted under OTHER: the method label must not let a client grow
// /metrics without bound.
func TestMetricsMethodLabelIsBounded(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	for _, m := range []string{"BREWCOFFEE", "XYZZY-1", "PROPFIND"} {
		req, _ := http.NewRequest(m, s.URL+"/v1/incidents", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, m := range []string{"BREWCOFFEE", "XYZZY-1", "PROPFIND"} {
		if strings.Contains(text, `method="`+m+`"`) {
			t.Errorf("/metrics has a series for method %s", m)
		}
	}
	if !strings.Contains(text, `causeway_http_requests_total{method="OTHER"`) {
		t.Error("invented methods are not counted under OTHER")
	}
}

// TestAuthRateLimitGroupsIPv6By64 shows IPv6 clients share the sign-in budget
// of their /64: one host usually holds a whole /64, so keying by full
// address would give it billions of budgets.
func TestAuthRateLimitGroupsIPv6By64(t *testing.T) {
	cfg := apiConfig(t)
	cfg.AuthRateLimitPerMinute = 3
	cfg.TrustedProxies = "127.0.0.1"
	s := startAPI(t, cfg)
	login := func(ip string) int {
		st, _, _ := s.failedLogin(t, ip)
		return st
	}
	for _, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:aaaa::3"} {
		if st := login(ip); st != http.StatusUnauthorized {
			t.Fatalf("%s: %d", ip, st)
		}
	}
	if st := login("2001:db8:1:2:ffff:ffff:ffff:9"); st != http.StatusTooManyRequests {
		t.Errorf("fourth address of the same /64: %d, want 429", st)
	}
	if st := login("2001:db8:1:3::1"); st != http.StatusUnauthorized {
		t.Errorf("another /64: %d, want its own budget", st)
	}
	if st := login("192.0.2.1"); st != http.StatusUnauthorized {
		t.Errorf("an IPv4 client: %d, want its own budget", st)
	}
}
