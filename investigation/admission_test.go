package investigation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
)

// admissionFixture is a database holding waiting alerts, and the clock they
// arrived by.
type admissionFixture struct {
	t     *testing.T
	store *models.Store
	at    time.Time
}

func newAdmissionFixture(t *testing.T) *admissionFixture {
	return &admissionFixture{t: t, store: testdb.Open(t), at: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)}
}

// alert records one alert's incident, waiting for admission, a second after
// the previous one.
func (f *admissionFixture) alert(id, tenant, severity string) {
	f.t.Helper()
	f.at = f.at.Add(time.Second)
	inc := models.Incident{ID: id, TenantID: tenant, Title: "t", Description: "admission test", Severity: severity,
		Status: models.StatusTriaging, Source: "custom", CreatedAt: f.at, UpdatedAt: f.at}
	if err := f.store.DB().Create(&inc).Error; err != nil {
		f.t.Fatal(err)
	}
}

// admit runs one admission with bound inFlight and returns the ids admitted.
func (f *admissionFixture) admit(inFlight int) []string {
	f.t.Helper()
	rows, err := Admission{InFlight: inFlight}.admit(context.Background(), f.store, f.at)
	if err != nil {
		f.t.Fatal(err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// finish moves an admitted incident past its pass, out of the bound.
func (f *admissionFixture) finish(id string) {
	f.t.Helper()
	if err := f.store.DB().Model(&models.Incident{}).Where("id = ?", id).Update("status", models.StatusInvestigated).Error; err != nil {
		f.t.Fatal(err)
	}
}

// TestAdmissionBoundsInFlightBySeverityThenArrival: with a bound of 4 a tenant
// alone gets its cap of 3 (three quarters of the bound), most severe first and
// then oldest first, and nothing more until one of them finishes.
func TestAdmissionBoundsInFlightBySeverityThenArrival(t *testing.T) {
	f := newAdmissionFixture(t)
	for i, sev := range []string{"low", "high", "medium", "critical", "high", "low", "info", "critical"} {
		f.alert(fmt.Sprintf("inc_%d", i), "ten_a", sev)
	}
	if got, want := f.admit(4), []string{"inc_3", "inc_7", "inc_1"}; !slices.Equal(got, want) {
		t.Fatalf("first admission: %v, want %v (critical oldest first, then the oldest high)", got, want)
	}
	if got := f.admit(4); len(got) != 0 {
		t.Fatalf("a tenant at its cap was admitted more: %v", got)
	}
	if in, waiting := gauge(t, metrics.InvestigationsInFlight), gauge(t, metrics.AlertsWaiting); in != 3 || waiting != 5 {
		t.Fatalf("gauges: %v in flight, %v waiting; want 3 and 5", in, waiting)
	}
	f.finish("inc_7")
	if got, want := f.admit(4), []string{"inc_4"}; !slices.Equal(got, want) {
		t.Fatalf("after one finished: %v, want %v", got, want)
	}
	// A pass on a waiting alert started by a person counts against the bound.
	if err := f.store.MarkWorkflowStarted(context.Background(), "inc_2", f.at); err != nil {
		t.Fatal(err)
	}
	f.finish("inc_3")
	if got := f.admit(4); len(got) != 0 {
		t.Fatalf("the person's pass was not counted: %v admitted", got)
	}
}

// TestAdmissionIsFairAcrossTenants: a storming tenant holds at most its cap,
// a quiet tenant's alerts arriving later take the free quarter at once, and a
// freed slot goes to the tenant with fewer in flight, not to the older alert.
func TestAdmissionIsFairAcrossTenants(t *testing.T) {
	f := newAdmissionFixture(t)
	for i := range 20 {
		f.alert(fmt.Sprintf("inc_storm%02d", i), "ten_storm", "high")
	}
	storm := f.admit(8)
	if len(storm) != 6 {
		t.Fatalf("the storm got %d of a bound of 8, want its cap of 6: %v", len(storm), storm)
	}
	for i := range 3 {
		f.alert(fmt.Sprintf("inc_quiet%d", i), "ten_quiet", "low")
	}
	if got, want := f.admit(8), []string{"inc_quiet0", "inc_quiet1"}; !slices.Equal(got, want) {
		t.Fatalf("quiet tenant's alerts: %v, want %v at once", got, want)
	}
	f.finish(storm[0])
	if got, want := f.admit(8), []string{"inc_quiet2"}; !slices.Equal(got, want) {
		t.Fatalf("freed slot went to %v, want the quiet tenant's %v", got, want)
	}
	f.finish(storm[1])
	if got, want := f.admit(8), []string{"inc_storm06"}; !slices.Equal(got, want) {
		t.Fatalf("freed slot went to %v, want the storm's oldest waiting %v", got, want)
	}
}

// TestAdmissionOneBoundAcrossDispatchers: dispatchers admitting at the same
// time over one database never admit past the bound between them, and never
// hand the same incident to two of them.
func TestAdmissionOneBoundAcrossDispatchers(t *testing.T) {
	f := newAdmissionFixture(t)
	for i := range 40 {
		f.alert(fmt.Sprintf("inc_%02d", i), fmt.Sprintf("ten_%d", i%5), "high")
	}
	const dispatchers = 6
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]int{}
	)
	for range dispatchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows, err := Admission{InFlight: 8}.admit(context.Background(), f.store, f.at)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rows {
				seen[r.ID]++
			}
		}()
	}
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s admitted by %d dispatchers", id, n)
		}
	}
	var admitted int64
	f.store.DB().Model(&models.Incident{}).Where("admitted_at IS NOT NULL").Count(&admitted)
	if len(seen) != 8 || admitted != 8 {
		t.Fatalf("%d handed out, %d marked admitted; want the bound, 8", len(seen), admitted)
	}
}

// TestAdmissionWaitsForTheLock: on PostgreSQL an admission waits while
// another holds the admission lock, which is what keeps the count and the
// choice of one dispatcher from interleaving with another's.
func TestAdmissionWaitsForTheLock(t *testing.T) {
	f := newAdmissionFixture(t)
	if f.store.Dialect() != "postgres" {
		testenv.Missing(t, "PostgreSQL (the advisory lock is PostgreSQL's; SQLite serves one process)")
	}
	f.alert("inc_1", "ten_a", "high")
	tx := f.store.DB().Begin()
	defer tx.Rollback()
	if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", admissionLock).Error; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	rows, err := Admission{InFlight: 4}.admit(ctx, f.store, f.at)
	if err == nil {
		t.Fatalf("admitted %d while another dispatcher held the lock", len(rows))
	}
	tx.Rollback()
	if got := f.admit(4); !slices.Equal(got, []string{"inc_1"}) {
		t.Fatalf("after the lock was released: %v", got)
	}
}

// gauge reads a gauge's value as /metrics would show it.
func gauge(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
