package investigation

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"gorm.io/gorm"

	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
)

// Admission bounds the investigations in flight and decides which waiting
// alert goes next (docs/failure-modes.md, "Storms").
//
// Every pass in flight shares the worker's slots and the server's task queue
// with every other one, and a Temporal task queue hands out tasks first come,
// first served. With a storm's thousand passes admitted at once, each step of
// every pass queues behind one step of all the others, so each answer comes
// only when the whole storm is done: a quiet tenant's alert, posted a second
// into another tenant's storm, waited for all of it. Bounding what is in
// flight keeps each pass's queue short: an admitted pass runs at the speed of
// a quiet machine, and the rest wait as rows, not as tasks.
//
// An alert's incident waits triaging, with AdmittedAt nil. In flight is every
// admitted incident still triaging or investigating; one leaves when its pass
// finishes or triage decides against one (investigation_skipped), which is
// when FinishInvestigation or SetIncidentStatus kicks the dispatcher to admit
// the next. The waiting are admitted in this order:
//
//  1. the tenant with the fewest in flight and admitted so far, so one
//     tenant's storm takes its share and never another tenant's, and no
//     tenant past three quarters of the bound (tenantCap);
//  2. within that, higher severity first;
//  3. then in arrival order.
//
// Incidents opened by a person are not admitted: they wait for a person to
// start a pass, which is never refused for being busy. A workflow started
// outside admission counts as admitted from then on (MarkWorkflowStarted).
//
// The count and the choice happen in one transaction that holds a PostgreSQL
// advisory lock, so several dispatchers (APIs and workers) keep one bound
// between them. SQLite serves one process (`make run`), whose dispatcher
// admits from one goroutine.
type Admission struct {
	// InFlight is the bound on investigations in flight across every
	// dispatcher that shares the database.
	InFlight int
}

// tenantCap is the most one tenant may have in flight: three quarters of the
// bound, so a quarter is always free for the alerts of tenants not storming,
// and those start the moment they arrive instead of when the storm's passes
// finish. A storm gives up little by it: on two cores a burst's throughput is
// the same at 8 investigations in flight as at 16 (README, Benchmarks).
func (a Admission) tenantCap() int {
	return a.InFlight - a.InFlight/4
}

// admissionLock is the key of the PostgreSQL advisory lock that makes one
// admission at a time across every process on the database.
const admissionLock = 0x6361757365776179 // "causeway"

// severityRank is models.SeverityRank in SQL: most severe first, anything
// else with info.
var severityRank = func() string {
	var b strings.Builder
	b.WriteString("CASE severity")
	for i, sev := range models.SeveritiesBySeriousness {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", sev, i)
	}
	fmt.Fprintf(&b, " ELSE %d END", models.SeverityRank(""))
	return b.String()
}()

// The statuses are literals, not parameters, so the planner can use the
// partial index idx_incidents_admission, whose predicate names them; the
// waiting repeat that predicate because SQLite uses a partial index only for
// a query that contains its WHERE term.
const (
	inFlightWhere = `admitted_at IS NOT NULL AND status IN ('triaging','investigating')`
	waitingWhere  = `admitted_at IS NULL AND workflow_started_at IS NULL AND status IN ('triaging','investigating') AND status = 'triaging'`
)

// admitQuery picks the next waiting incidents: each tenant's waiting alerts
// ranked by severity and arrival, and the ranks offset by what the tenant
// already has in flight, so the tenant furthest below its share goes first
// and none goes past the tenant cap.
var admitQuery = `
WITH flight AS (
	SELECT tenant_id, COUNT(*) AS n FROM incidents WHERE ` + inFlightWhere + ` GROUP BY tenant_id
), waiting AS (
	SELECT id, tenant_id, created_at, ` + severityRank + ` AS sev,
		ROW_NUMBER() OVER (PARTITION BY tenant_id ORDER BY ` + severityRank + `, created_at, id) AS rn
	FROM incidents WHERE ` + waitingWhere + `
)
SELECT waiting.id FROM waiting LEFT JOIN flight ON flight.tenant_id = waiting.tenant_id
WHERE waiting.rn + COALESCE(flight.n, 0) <= ?
ORDER BY waiting.rn + COALESCE(flight.n, 0), waiting.sev, waiting.created_at, waiting.id
LIMIT ?`

// admit marks as many waiting incidents admitted as the bound has room for
// and returns them, in admission order, for their workflows to be started.
func (a Admission) admit(ctx context.Context, store *models.Store, now time.Time) ([]models.Incident, error) {
	var admitted []models.Incident
	err := store.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if store.Dialect() == "postgres" {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", admissionLock).Error; err != nil {
				return err
			}
		}
		var inFlight, waiting int64
		if err := tx.Model(&models.Incident{}).Where(inFlightWhere).Count(&inFlight).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.Incident{}).Where(waitingWhere).Count(&waiting).Error; err != nil {
			return err
		}
		defer func() {
			metrics.InvestigationsInFlight.Set(float64(inFlight) + float64(len(admitted)))
			metrics.AlertsWaiting.Set(float64(waiting) - float64(len(admitted)))
		}()
		room := a.InFlight - int(inFlight)
		if room <= 0 {
			return nil
		}
		var picked, ids []string
		if err := tx.Raw(admitQuery, a.tenantCap(), room).Scan(&picked).Error; err != nil || len(picked) == 0 {
			return err
		}
		// Only the rows this transaction marked are its to start.
		if err := tx.Raw("UPDATE incidents SET admitted_at = ? WHERE id IN ? AND admitted_at IS NULL RETURNING id", now, picked).
			Scan(&ids).Error; err != nil {
			return err
		}
		var rows []models.Incident
		if err := tx.Where("id IN ?", ids).Find(&rows).Error; err != nil {
			return err
		}
		byID := make(map[string]models.Incident, len(rows))
		for _, r := range rows {
			byID[r.ID] = r
		}
		for _, id := range picked {
			if r, ok := byID[id]; ok {
				admitted = append(admitted, r)
			}
		}
		return nil
	})
	return admitted, err
}

// TaskPriority is what an incident's workflow is started with, and what its
// passes, agents and activities inherit: the tenant as the fairness key, so a
// cluster with fairness on (matching.enableFairness) hands out a busy task
// queue's tasks round-robin across tenants, and the severity as the priority
// key (1 is first), so among the admitted a critical incident's tasks go
// before a low one's.
func TaskPriority(tenantID, severity string) temporal.Priority {
	key := 3 // Temporal's default, for a value that is not a severity
	if models.ValidSeverity(severity) {
		key = models.SeverityRank(severity) + 1
	}
	return temporal.Priority{PriorityKey: key, FairnessKey: tenantID}
}
