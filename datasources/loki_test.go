package datasources

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
)

// checkoutStreams are Loki 3.x streams: checkout in shop failing since
// first, checkout in staging failing too (not the alert's namespace), and
// payments healthy.
func checkoutStreams(first time.Time) []clusterlab.Stream {
	var shop []clusterlab.LogLine
	shop = append(shop, clusterlab.LogLine{At: first.Add(-5 * time.Minute), Text: `level=info msg="order placed" order=1881`})
	for i := 0; i < 12; i++ {
		shop = append(shop, clusterlab.LogLine{At: first.Add(time.Duration(i) * 30 * time.Second),
			Text: `level=error msg="payment provider rejected request: invalid merchant id" order=19` + string(rune('0'+i%10))})
	}
	return []clusterlab.Stream{
		{Labels: map[string]string{"service_name": "checkout", "namespace": "shop", "pod": "checkout-7d9f8c6b5-x2k4q"}, Lines: shop},
		{Labels: map[string]string{"service_name": "checkout", "namespace": "staging", "pod": "checkout-aaa-bbb"},
			Lines: []clusterlab.LogLine{{At: first.Add(-20 * time.Minute), Text: "level=error msg=\"staging noise\""}}},
		{Labels: map[string]string{"service_name": "payments", "namespace": "shop", "pod": "payments-1"},
			Lines: []clusterlab.LogLine{{At: first, Text: "level=error msg=\"not ours\""}}},
	}
}

// TestLokiFindsTheFirstErrorAndCountsThem runs the plan's LogQL against a
// Loki speaking the v1 HTTP API: the error lines come earliest first, only
// the service's streams in the alert's namespace, and the count starts at
// the first error.
func TestLokiFindsTheFirstErrorAndCountsThem(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	first := now.Add(-12 * time.Minute)
	srv := clusterlab.Loki(t, "acme", checkoutStreams(first))
	c := testConnector()
	cfg, err := c.Prepare(context.Background(), Spec{Name: "logs", Type: TypeLoki, URL: srv.URL + "/", Auth: &Auth{Headers: map[string]string{"X-Scope-OrgID": "acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds-loki"
	msg, err := c.Test(context.Background(), cfg)
	if err != nil || !strings.Contains(msg, "label names") {
		t.Fatalf("test: %q %v", msg, err)
	}
	res := runPlan(t, c, cfg, alertScope(now))
	lines := strings.Split(res["error_lines"].Text, "\n")
	if len(lines) != 12 || !strings.HasPrefix(lines[0], first.Format("2006-01-02T15:04:05.000Z")+" checkout-7d9f8c6b5-x2k4q: level=error") {
		t.Fatalf("error lines: %d, first %q", len(lines), lines[0])
	}
	if strings.Contains(res["error_lines"].Text, "staging noise") || strings.Contains(res["error_lines"].Text, "not ours") {
		t.Fatal("another namespace's or service's lines were read")
	}
	count := only(t, res, "error_count")
	if count.Value != 12 || count.Signal != analyzer.SignalLogErrors || count.At.After(first.Add(time.Minute)) || count.At.Before(first) {
		t.Fatalf("count reading: %+v", count)
	}
	qs, _ := srv.Queries.Load().([]string)
	for _, q := range qs {
		if !strings.Contains(q, `service_name="checkout", namespace=~"shop|"`) {
			t.Fatalf("query not scoped to the service and namespace: %s", q)
		}
	}
}

// TestLokiErrors: Loki's 400 (a LogQL parse error, in plain text) is a bad
// query with Loki's words; a missing tenant header its 401.
func TestLokiErrors(t *testing.T) {
	now := time.Now().UTC()
	srv := clusterlab.Loki(t, "acme", checkoutStreams(now.Add(-5*time.Minute)))
	c := testConnector()
	cfg := Config{ID: "l", Name: "logs", Type: TypeLoki, URL: srv.URL, Auth: Auth{Headers: map[string]string{"X-Scope-OrgID": "acme"}}}
	_, err := c.Run(context.Background(), cfg, Query{Type: TypeLoki, Entry: "error_lines", Text: `{service_name=checkout}`, Start: now.Add(-time.Hour), End: now})
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "parse error at line 1") || !Permanent(err) {
		t.Fatalf("bad LogQL: %v", err)
	}
	cfg.Auth = Auth{}
	_, err = c.Test(context.Background(), cfg)
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "no org id") {
		t.Fatalf("no tenant: %v", err)
	}
	if _, err := c.Prepare(context.Background(), Spec{Name: "l", Type: TypeLoki, URL: srv.URL, Settings: map[string]any{"serviceLabel": "a b"}}); err == nil ||
		err.(*FieldError).Field != "settings.serviceLabel" {
		t.Fatalf("bad service label: %v", err)
	}
}

// TestLogAnswersAreBounded: however long and many the lines, an answer keeps
// at most lokiLineLimit lines, each cut short, within the result cap.
func TestLogAnswersAreBounded(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	var lines []clusterlab.LogLine
	for i := 0; i < 400; i++ {
		lines = append(lines, clusterlab.LogLine{At: now.Add(-20*time.Minute + time.Duration(i)*time.Second), Text: "level=error " + strings.Repeat("x", 8000)})
	}
	srv := clusterlab.Loki(t, "acme", []clusterlab.Stream{{Labels: map[string]string{"service_name": "checkout"}, Lines: lines}})
	c := NewConnector(Options{AllowNetworks: loopback, GrantAll: true, ResultCap: 4 << 10})
	cfg := Config{ID: "l", Name: "logs", Type: TypeLoki, URL: srv.URL, Auth: Auth{Headers: map[string]string{"X-Scope-OrgID": "acme"}}}
	res := runPlan(t, c, cfg, alertScope(now))
	text := res["error_lines"].Text
	if len(text) > 4<<10 || !strings.HasPrefix(text, lines[0].At.Format("2006-01-02T15:04:05.000Z")) {
		t.Fatalf("%d bytes, starting %q", len(text), text[:min(len(text), 40)])
	}
	for _, l := range strings.Split(text, "\n") {
		if len(l) > logLineBytes+60 {
			t.Fatalf("a line of %d bytes", len(l))
		}
	}
	if only(t, res, "error_count").Value != 400 {
		t.Fatalf("count: %+v", res["error_count"].Readings)
	}
}

// TestLogQueriesFollowTheAlertsPod: an alert on a pod whose name is not the
// service's (kube-state-metrics' job became the service) reads the streams
// of the pod's workload; a pod of the service only narrows.
func TestLogQueriesFollowTheAlertsPod(t *testing.T) {
	for _, c := range []struct{ service, pod, want string }{
		{"kube-state-metrics", "checkout-7d9f8c6b5d-x2vqk", `{pod=~"checkout-.+", namespace=~"shop|"}`},
		{"", "ledger-2", `{pod=~"ledger-.+", namespace=~"shop|"}`},
		{"", "fluent-bit-zx8pq", `{pod=~"fluent-bit-.+", namespace=~"shop|"}`},
		{"checkout", "checkout-7d9f8c6b5d-x2vqk", `{service_name="checkout", namespace=~"shop|", pod=~"checkout-7d9f8c6b5d-x2vqk|"}`},
	} {
		sc := Scope{Service: c.service, Labels: map[string]string{"namespace": "shop", "pod": c.pod}}
		if got := renderLogQL(`{$S}`, sc, defaultLokiServiceLabel); got != c.want {
			t.Errorf("service %q pod %q: %s, want %s", c.service, c.pod, got, c.want)
		}
	}
	qs, notes := planLoki(Source{ID: "ds", Name: "logs", Type: TypeLoki}, Scope{Labels: map[string]string{"pod": "ledger-2"}}, []string{analyzer.RoleLogs})
	if len(qs) == 0 {
		t.Fatalf("an alert naming only a pod reads no logs: %v", notes)
	}
}
