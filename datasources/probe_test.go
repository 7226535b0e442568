package datasources

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/testenv"
)

func probeQueries(t *testing.T, c *Connector, targets ...string) (Config, map[string]Query) {
	t.Helper()
	list := make([]any, len(targets))
	for i, s := range targets {
		list[i] = s
	}
	cfg, err := c.Prepare(context.Background(), Spec{Name: "edge", Type: TypeProbe, Settings: map[string]any{"targets": list}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = "ds_probe"
	qs := map[string]Query{}
	for _, q := range Plan([]Source{{ID: cfg.ID, Type: cfg.Type, Settings: cfg.Settings}}, Scope{}, []string{analyzer.RoleNetwork}, 50).Queries {
		qs[q.Entry+" "+q.Target] = q
	}
	return cfg, qs
}

func networkAnswer(res Result, q Query) analyzer.Result {
	in := analyzer.Input{Title: "payments failing", Service: "payments", Gathered: []analyzer.Excerpt{{
		Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: q.DataSourceID, Type: q.Type, Query: q.Text},
		Text:   analyzer.ReadingsText(res.Readings), Readings: res.Readings, Measured: true,
	}}}
	return analyzer.Synthesize(in, []analyzer.AgentReport{analyzer.Investigate(analyzer.RoleNetwork, in)})
}

func TestProbeFindsAnExpiredCertificate(t *testing.T) {
	addr, notAfter := testenv.ExpiredTLSServer(t, "payments.test")
	c := testConnector()
	cfg, qs := probeQueries(t, c, "tls://"+addr)
	q, ok := qs["tls "+addr]
	if !ok || q.Text != "tls handshake "+addr+" (server name 127.0.0.1)" {
		t.Fatalf("planned %+v", qs)
	}
	res, err := c.Run(context.Background(), cfg, q)
	if err != nil {
		t.Fatal(err)
	}
	var expiry, verify *analyzer.Reading
	for i, r := range res.Readings {
		switch r.Signal {
		case analyzer.SignalCertExpiry:
			expiry = &res.Readings[i]
		case analyzer.SignalTLSHandshake:
			verify = &res.Readings[i]
		}
	}
	if expiry == nil || int64(expiry.Value) != notAfter.Unix() || expiry.Labels["subject"] != "payments.test" {
		t.Fatalf("certificate reading %+v, want notAfter %s", expiry, notAfter)
	}
	if verify == nil || verify.Value != 0 || !strings.Contains(verify.Labels["error"], "expired") {
		t.Fatalf("verification reading %+v, want a failure naming the expiry", verify)
	}
	if got := networkAnswer(res, q); got.Category != analyzer.CategoryCertificateExpired || !strings.Contains(got.Evidence[0].Content, notAfter.UTC().Format(time.RFC3339)) {
		t.Fatalf("network agent: %s, evidence %+v", got.Category, got.Evidence)
	}
}

func TestProbeFindsAClosedPortAndAnUnknownName(t *testing.T) {
	port := testenv.ClosedPort(t)
	c := testConnector()
	cfg, qs := probeQueries(t, c, "tcp://"+port, "payments.invalid:443")

	res, err := c.Run(context.Background(), cfg, qs["tcp "+port])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Readings) != 1 || res.Readings[0].Value != 0 || res.Readings[0].Labels["error"] != "refused" {
		t.Fatalf("closed port: %+v", res.Readings)
	}
	if got := networkAnswer(res, qs["tcp "+port]); got.Category == analyzer.CategoryDNSFailure || got.Category == analyzer.CategoryCertificateExpired {
		t.Fatalf("a refused connection is neither DNS nor TLS: %s", got.Category)
	}

	dq, ok := qs["dns payments.invalid:443"]
	if !ok || dq.Text != "dns lookup payments.invalid" {
		t.Fatalf("planned %+v", qs)
	}
	res, err = c.Run(context.Background(), cfg, dq)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Readings) != 1 || res.Readings[0].Value != 0 || !strings.Contains(res.Readings[0].Labels["error"], "no such host") {
		t.Fatalf("a name under .invalid: %+v", res.Readings)
	}
	if got := networkAnswer(res, dq); got.Category != analyzer.CategoryDNSFailure {
		t.Fatalf("network agent on a failed lookup: %s", got.Category)
	}
	if msg, err := c.Test(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "2 of 2 targets failed") {
		t.Fatalf("test of failing targets: %q, %v", msg, err)
	}
}

func TestProbeNeverContactsAnAddressOutsideTheAllowlist(t *testing.T) {
	var accepted atomic.Int32
	addr := testenv.Listen(t, func(context.Context, net.Conn) { accepted.Add(1) })
	allowed := testConnector()
	cfg, qs := probeQueries(t, allowed, "tcp://"+addr)
	strict := NewConnector(Options{})
	if _, err := strict.Prepare(context.Background(), Spec{Name: "edge", Type: TypeProbe, Settings: cfg.Settings}); err == nil {
		t.Fatal("a probe target on loopback was accepted without loopback in the allowed networks")
	} else if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != "settings.targets[0]" {
		t.Fatalf("refusal %v should name settings.targets[0]", err)
	}
	_, err := strict.Run(context.Background(), cfg, qs["tcp "+addr])
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("probe outside the allowlist: %v, want ErrBlocked", err)
	}
	time.Sleep(50 * time.Millisecond)
	if accepted.Load() != 0 {
		t.Fatalf("the refused probe reached the listener %d times", accepted.Load())
	}
	if _, err := allowed.Run(context.Background(), cfg, qs["tcp "+addr]); err != nil {
		t.Fatal(err)
	}
}
