package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
)

// pageSize is the page the list benchmarks read: the API's largest.
const pageSize = 100

// BenchmarkMillionIncidents seeds 1,000,000 incidents of one tenant spread over
// a year (about 250,000 in the last 90 days) on PostgreSQL once, then measures
// the reads that must not slow down with the table:
//
//   - stats90d, the 90-day analytics query. Target: ≤ 200 ms.
//
//   - page1 and page10000, GET /v1/incidents's store query for the first page
//     and for page 10,000 (of 100 incidents, the last page). Target: page
//     10,000 within 1.5× of page 1.
//
//     CAUSEWAY_TEST_DATABASE_URL=postgres://… go test ./models -run '^$' -bench MillionIncidents -benchtime 10x
func BenchmarkMillionIncidents(b *testing.B) {
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

	b.Run("stats90d", func(b *testing.B) {
		since := time.Now().UTC().AddDate(0, 0, -90)
		for b.Loop() {
			st, err := s.IncidentStatsSince(ctx, "ten_bench", since)
			if err != nil {
				b.Fatal(err)
			}
			if st.Total < 200000 {
				b.Fatalf("only %d incidents in 90 days", st.Total)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
	})
	// Pages are read newest first by id; the seeded ids are inc_00000001 to
	// inc_01000000, so page k starts after the id numbered 1,000,001 - (k-1)·100.
	page := func(k int) func(b *testing.B) {
		after := ""
		if k > 1 {
			after = fmt.Sprintf("inc_%08d", 1000001-(k-1)*pageSize)
		}
		return func(b *testing.B) {
			for b.Loop() {
				items, total, err := s.ListIncidents(ctx, "ten_bench", models.IncidentFilter{}, after, pageSize)
				if err != nil {
					b.Fatal(err)
				}
				if len(items) != pageSize || total != 1000000 {
					b.Fatalf("page %d: %d items of %d", k, len(items), total)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
		}
	}
	b.Run("page1", page(1))
	b.Run("page10000", page(10000))
}
