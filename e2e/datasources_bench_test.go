package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
)

// BenchmarkGatheringOverhead measures what querying data sources adds to a
// pass: the same critical alert goes to a tenant without sources and to one
// with a local Prometheus (every plan entry), the PostgreSQL server and a
// probe, and each pass's own startedAt → completedAt is recorded. The goal is
// that the p50 difference stays under one second. The offline analyzer
// answers, so the difference is the gathering itself.
func BenchmarkGatheringOverhead(b *testing.B) {
	prom := testenv.Prometheus(b, promlab.MemoryExhaustion(scenarioTarget))
	pgURL := testenv.DatabaseURL(b)
	cfg := testConfig(b)
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 0, 0
	e := newEnvWith(b, cfg)
	bareToken, bareTenant, bareKey := e.tenantWithKey(b, "bare")
	srcToken, srcTenant, srcKey := e.tenantWithKey(b, "sourced")
	e.addSource(b, srcToken, map[string]any{"name": "prom", "type": "prometheus", "url": prom.URL})
	u, _ := url.Parse(pgURL)
	u.RawQuery = "sslmode=disable"
	e.addSource(b, srcToken, map[string]any{"name": "db", "type": "postgres", "url": u.String()})
	e.addSource(b, srcToken, map[string]any{"name": "edge", "type": "probe", "settings": map[string]any{"targets": []string{prom.URL}}})

	labels := map[string]string{"alertname": "ServiceDegraded", "service": "checkout", "namespace": "shop", "severity": "critical"}
	pass := func(token, tenantID, key string) time.Duration {
		id := e.alertmanagerAlert(b, tenantID, key, labels, "checkout is degraded", time.Now().Add(-10*time.Minute))
		var res struct {
			Status      string     `json:"status"`
			StartedAt   time.Time  `json:"startedAt"`
			CompletedAt *time.Time `json:"completedAt"`
		}
		eventually(b, 2*time.Minute, "pass of "+id, func() bool {
			res.Status = ""
			return e.call(b, "GET", "/v1/investigation/"+id, token, nil, &res) == http.StatusOK && res.Status == "completed" && res.CompletedAt != nil
		})
		return res.CompletedAt.Sub(res.StartedAt)
	}
	// One pass each before the clock starts: connections and caches warm.
	pass(bareToken, bareTenant, bareKey)
	pass(srcToken, srcTenant, srcKey)
	var bare, sourced []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bare = append(bare, pass(bareToken, bareTenant, bareKey))
		sourced = append(sourced, pass(srcToken, srcTenant, srcKey))
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	pb, ps := p50(bare), p50(sourced)
	b.ReportMetric(float64(pb.Milliseconds()), "bare-p50-ms")
	b.ReportMetric(float64(ps.Milliseconds()), "sourced-p50-ms")
	b.ReportMetric(float64((ps - pb).Milliseconds()), "gathering-p50-ms")
}
