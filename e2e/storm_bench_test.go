package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
)

// Storm shape: one tenant's storm of stormSize alerts, delivered by
// burstClients senders, and a quiet tenant's quietAlerts sent together.
const (
	stormSize   = 400
	quietAlerts = 10
)

// BenchmarkTenantFairness measures how much one tenant's storm delays another
// tenant's alerts: the quiet tenant's quietAlerts, sent together, are timed
// from being recorded to their pass finishing, first on their own, then once
// the storm's stormSize alerts are all acknowledged and being worked off.
// Reported: the two medians and their ratio (target ≤ 2), plus how many of
// the storm's alerts were already answered when the quiet ones all were.
func BenchmarkTenantFairness(b *testing.B) {
	cfg := testConfig(b)
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 0, 0
	e := newEnvWith(b, cfg)
	quiet, quietKey, quietSecret := alertTenant(b, e, "Quiet")
	storm, stormKey, stormSecret := alertTenant(b, e, "Storm")

	var alone, during time.Duration
	var stormDone int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run := fmt.Sprintf("%d-%s", i, auth.RandomToken(4))
		ids := deliverAlerts(b, e, quiet, quietKey, quietSecret, "alone-"+run, quietAlerts, quietAlerts)
		alone += median(answerTimes(b, e, ids, 5*time.Minute))

		stormIDs := deliverAlerts(b, e, storm, stormKey, stormSecret, "storm-"+run, stormSize, burstClients)
		ids = deliverAlerts(b, e, quiet, quietKey, quietSecret, "during-"+run, quietAlerts, quietAlerts)
		during += median(answerTimes(b, e, ids, 15*time.Minute))
		var n int64
		if err := e.Store.DB().Table("investigations").Where("incident_id IN ? AND completed_at IS NOT NULL", stormIDs).
			Count(&n).Error; err != nil {
			b.Fatal(err)
		}
		stormDone += int(n)
		// The storm drains before the next iteration, so each one starts quiet.
		awaitInvestigated(b, e, stormIDs, 15*time.Minute)
	}
	b.StopTimer()
	alone, during = alone/time.Duration(b.N), during/time.Duration(b.N)
	b.ReportMetric(float64(alone.Milliseconds()), "quiet_alone_p50_ms")
	b.ReportMetric(float64(during.Milliseconds()), "quiet_storm_p50_ms")
	b.ReportMetric(during.Seconds()/alone.Seconds(), "ratio_storm_vs_alone")
	b.ReportMetric(float64(stormDone)/float64(b.N), "storm_answered_first")
}

// alertTenant signs a tenant up and gives it a webhook key.
func alertTenant(b testing.TB, e *env, name string) (tenantID, key, secret string) {
	token, tenantID := e.signup(b, name)
	key, secret = e.hookKey(b, token)
	return tenantID, key, secret
}
