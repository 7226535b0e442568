package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// burstSize is the storm of distinct alerts BenchmarkAlertBurst sends.
const burstSize = 200

// burstClients is how many senders deliver the burst at once.
const burstClients = 32

// BenchmarkAlertBurst sends 200 distinct alerts at once through the webhook
// (offline analyzer, as `make run`) and times them until every one has a
// finished investigation, then runs the same shape on bare Temporal at the same
// concurrency: 200 parent workflows started at once, each starting as many
// children as the burst's passes had agents on average, each child running one
// activity that does nothing. Reported: investigations/s, the floor's passes/s,
// and their ratio (target ≥ 0.8). Each iteration is one whole burst.
func BenchmarkAlertBurst(b *testing.B) {
	cfg := testConfig(b)
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 0, 0
	e := newEnvWith(b, cfg)
	tenantID, key, secret := alertTenant(b, e, "Burst")
	// Serial first, on the same tenant: one alert at a time, each answered
	// before the next is sent, the time a burst would take with no concurrency.
	var one time.Duration
	for i := range serialAlerts {
		ids := deliverAlerts(b, e, tenantID, key, secret, fmt.Sprintf("serial-%d-%s", i, auth.RandomToken(4)), 1, 1)
		one += answerTimes(b, e, ids, time.Minute)[0]
	}
	one /= serialAlerts
	var rate, agents float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, a := alertBurst(b, e, tenantID, key, secret, fmt.Sprintf("burst-%d-%s", i, auth.RandomToken(4)))
		rate, agents = rate+r, agents+a
	}
	b.StopTimer()
	rate, agents = rate/float64(b.N), agents/float64(b.N)
	floor := burstFloor(b, max(1, int(agents+0.5)))
	b.ReportMetric(rate, "investigations/s")
	b.ReportMetric(agents, "agents/pass")
	b.ReportMetric(floor, "floor_passes/s")
	b.ReportMetric(rate/floor, "ratio_vs_floor")
	b.ReportMetric(float64(one.Milliseconds()), "serial_ms/alert")
	// The burst's wall time against burstSize alerts answered one by one.
	b.ReportMetric((burstSize/rate)/(burstSize*one.Seconds()), "ratio_vs_serial")
}

// serialAlerts is how many alerts, each answered before the next is sent,
// measure the serial time of one alert.
const serialAlerts = 10

// alertBurst delivers burstSize alerts and waits for all their passes to finish. It
// returns investigations per second from the first delivery to the last
// completion, and the mean number of agents per pass.
func alertBurst(b *testing.B, e *env, tenantID, key, secret, run string) (perSec, agents float64) {
	start := time.Now()
	ids := deliverAlerts(b, e, tenantID, key, secret, run, burstSize, burstClients)
	done := awaitInvestigated(b, e, ids, 5*time.Minute)
	elapsed := time.Since(start)
	n := 0
	for _, inv := range done {
		n += len(inv.Agents)
	}
	return burstSize / elapsed.Seconds(), float64(n) / burstSize
}

// deliverAlerts posts n distinct signed alerts, named after run, from clients
// senders at once, and returns their incidents in the order they were sent.
func deliverAlerts(b testing.TB, e *env, tenantID, key, secret, run string, n, clients int) []string {
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]string{
			"title":         fmt.Sprintf("checkout-%d p99 latency > 2s", i),
			"description":   "checkout p99 2.4s for 10m; upstream payments answering 503",
			"sourceAlertId": fmt.Sprintf("%s-%d", run, i), "severity": "high", "service": fmt.Sprintf("checkout-%d", i),
		})
	}
	ids := make([]string, n)
	if err := withWorkers(n, clients, func(i int) (err error) {
		ids[i], err = postBurstAlert(e.URL, tenantID, key, secret, bodies[i])
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return ids
}

// withWorkers calls f for every index below n from workers goroutines at
// once, each taking the next index until none is left or its call fails. It
// returns one of the failures.
func withWorkers(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	err, _ := failed.Load().(error)
	return err
}

// awaitInvestigated waits until every incident in ids has a finished pass and
// returns those passes.
func awaitInvestigated(b testing.TB, e *env, ids []string, within time.Duration) []models.Investigation {
	deadline := time.Now().Add(within)
	for {
		var done []models.Investigation
		if err := e.Store.DB().Select("id", "incident_id", "agents", "completed_at").
			Where("incident_id IN ? AND completed_at IS NOT NULL", ids).Find(&done).Error; err != nil {
			b.Fatal(err)
		}
		if len(done) == len(ids) {
			return done
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d alerts investigated after %s", len(done), len(ids), within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answerTimes is, for each incident in ids, the time from its alert being
// recorded to its first pass finishing, both as the database holds them.
func answerTimes(b testing.TB, e *env, ids []string, within time.Duration) []time.Duration {
	done := awaitInvestigated(b, e, ids, within)
	var incs []models.Incident
	if err := e.Store.DB().Select("id", "created_at").Where("id IN ?", ids).Find(&incs).Error; err != nil {
		b.Fatal(err)
	}
	created := map[string]time.Time{}
	for _, inc := range incs {
		created[inc.ID] = inc.CreatedAt
	}
	out := make([]time.Duration, 0, len(done))
	for _, inv := range done {
		out = append(out, inv.CompletedAt.Sub(created[inv.IncidentID]))
	}
	return out
}

// median is the middle of ds (the upper middle for an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// postBurstAlert delivers one signed custom alert and returns its incident.
func postBurstAlert(base, tenantID, key, secret string, body []byte) (string, error) {
	req, _ := http.NewRequest("POST", base+"/v1/webhooks/"+tenantID+"/custom", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(secret), body, ""))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		IncidentID string `json:"incidentId"`
	}
	_ = json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusAccepted || out.IncidentID == "" {
		return "", fmt.Errorf("alert: %d %s", resp.StatusCode, raw)
	}
	return out.IncidentID, nil
}

// burstFloor starts burstSize floorPass workflows of agents children each, with
// burstClients starters, on a fresh worker with Causeway's worker options, and
// returns passes per second from the first start to the last completion.
func burstFloor(b *testing.B, agents int) float64 {
	c, queue := floorWorker(b, "burst-floor-")
	ctx := context.Background()
	runs := make([]client.WorkflowRun, burstSize)
	start := time.Now()
	// Started like the burst's alerts are acknowledged (all of them, by
	// burstClients senders), then awaited: all 200 passes are in flight at once.
	if err := withWorkers(burstSize, burstClients, func(i int) (err error) {
		runs[i], err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("%s/pass/%d", queue, i), TaskQueue: queue},
			floorPass, agents, time.Duration(0))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	for _, run := range runs {
		if err := run.Get(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	return burstSize / time.Since(start).Seconds()
}
