package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
)

// BenchmarkIncidentStats90d runs the 90-day analytics query over 1,000,000
// incidents of one tenant spread over a year (about 250,000 in the window) on
// PostgreSQL. Target: ≤ 200 ms per query.
//
//	CAUSEWAY_TEST_DATABASE_URL=postgres://… go test ./models -run '^$' -bench IncidentStats90d -benchtime 10x
func BenchmarkIncidentStats90d(b *testing.B) {
	testenv.DatabaseURL(b)
	ctx := context.Background()
	s := testdb.Open(b)
	start := time.Now()
	// One statement, generated in the database: row-by-row inserts would
	// measure the network, not the query.
	err := s.DB().Exec(`INSERT INTO incidents (id, tenant_id, title, description, severity, status, source,
		source_alert_id, service, environment, tags, metadata, created_at, updated_at, resolved_at)
	SELECT 'inc_' || lpad(g::text, 8, '0'), 'ten_bench', 'bench', 'benchmark incident',
		(ARRAY['critical','high','medium','low'])[1 + g % 4],
		CASE WHEN g % 3 = 0 THEN 'open' ELSE 'resolved' END, 'manual', '', '', '', '{}', '{}',
		c.at, c.at, CASE WHEN g % 3 = 0 THEN NULL ELSE c.at + (g % 7200) * interval '1 second' END
	FROM generate_series(1, 1000000) g,
		LATERAL (SELECT now() - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second' AS at) c`).Error
	if err != nil {
		b.Fatal(err)
	}
	if err := s.DB().Exec("VACUUM ANALYZE incidents").Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded 1,000,000 incidents in %s", time.Since(start).Round(time.Millisecond))
	since := time.Now().UTC().AddDate(0, 0, -90)
	b.ResetTimer()
	for b.Loop() {
		st, err := s.IncidentStatsSince(ctx, "ten_bench", since)
		if err != nil {
			b.Fatal(err)
		}
		if st.Total < 200000 {
			b.Fatalf("only %d incidents in 90 days", st.Total)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/query")
}
