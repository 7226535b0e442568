package investigation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Dispatcher guarantees every recorded incident gets exactly one IncidentWorkflow.
//
// An incident is committed to the database first, with WorkflowStartedAt nil; only
// then is its workflow started, under the business-key ID IncidentWorkflowID. If
// the process dies in between, or Temporal is down, the row stays queued and the
// sweep (running in every worker) starts it later. Starting twice is harmless: the
// ID conflict policy attaches to the running workflow and the reuse policy refuses
// a second run after it finished.
type Dispatcher struct {
	store     *models.Store
	temporal  client.Client
	taskQueue string
	log       *slog.Logger
	now       func() time.Time
	kick      chan struct{}
	attrs     *searchAttributes
	admission Admission
}

// NewDispatcher builds a dispatcher that starts workflows on taskQueue and
// admits at most inFlight alerts' investigations at a time (see Admission).
func NewDispatcher(store *models.Store, tc client.Client, taskQueue string, inFlight int, log *slog.Logger) *Dispatcher {
	return &Dispatcher{store: store, temporal: tc, taskQueue: taskQueue, log: log, now: time.Now, kick: make(chan struct{}, 1),
		admission: Admission{InFlight: inFlight}}
}

// UseSearchAttributes makes the dispatcher label the workflows it starts with
// Causeway's custom search attributes whenever namespace has them (checked on
// the cluster, see searchAttributes). Without it, no workflow uses them.
func (d *Dispatcher) UseSearchAttributes(namespace string) {
	d.attrs = &searchAttributes{temporal: d.temporal, namespace: namespace, log: d.log, now: d.now}
}

// Ensure starts the incident's workflow unless it already exists, then marks the row.
func (d *Dispatcher) Ensure(ctx context.Context, inc *models.Incident) error {
	opts := client.StartWorkflowOptions{
		ID:            IncidentWorkflowID(inc.ID),
		TaskQueue:     d.taskQueue,
		StaticSummary: fmt.Sprintf("%s · %s · %s", inc.Severity, inc.Source, inc.Title),
		Priority:      TaskPriority(inc.TenantID, inc.Severity),
		// Continue-as-new keeps it for the next run.
		WorkflowTaskTimeout: workflowTaskTimeout,
	}
	in := IncidentInput{
		TenantID: inc.TenantID, IncidentID: inc.ID, Source: inc.Source, Status: inc.Status,
		Severity: inc.Severity, Title: inc.Title, CreatedAt: inc.CreatedAt, Service: inc.Service,
		SearchAttributes: d.attrs.available(ctx),
	}
	if err := temporalx.StartOnce(ctx, d.temporal, opts, IncidentWorkflowName, in); err != nil {
		return fmt.Errorf("start workflow of incident %s: %w", inc.ID, err)
	}
	return d.store.MarkWorkflowStarted(ctx, inc.ID, d.now().UTC())
}

// sweepGrace leaves a fresh incident to the request that recorded it, which
// starts its workflow at once; the sweep only picks up the ones left behind.
const sweepGrace = 2 * time.Second

// Sweep admits the waiting alerts the bound has room for and starts their
// workflows, then starts the workflows of incidents recorded more than grace
// ago that may start and still have none, up to temporalx.SweepConcurrency at
// a time, page after page until none is left or a start fails. A failed
// admission does not hold back the others: a person's incident starts even
// while admission cannot run. It returns how many it started and the failures.
func (d *Dispatcher) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	admitted, admitErr := d.admitAndStart(ctx)
	started, err := d.startReady(ctx, grace)
	return admitted + started, errors.Join(admitErr, err)
}

// admitAndStart admits what the bound has room for and starts those workflows
// at once, whatever their age: admission, not the request that recorded them,
// is what starts an alert's workflow.
func (d *Dispatcher) admitAndStart(ctx context.Context) (int, error) {
	admitted, err := d.admission.admit(ctx, d.store, d.now().UTC())
	if err != nil {
		return 0, err
	}
	return d.ensureAll(ctx, admitted)
}

// startReady starts, page by page, the incidents recorded more than grace ago
// that may start and have no workflow yet.
func (d *Dispatcher) startReady(ctx context.Context, grace time.Duration) (int, error) {
	total := 0
	for {
		pending, err := d.store.IncidentsWithoutWorkflow(ctx, d.now().UTC().Add(-grace), temporalx.SweepPage)
		if err != nil {
			return total, err
		}
		n, err := d.ensureAll(ctx, pending)
		total += n
		if err != nil || len(pending) < temporalx.SweepPage {
			return total, err
		}
	}
}

// ensureAll starts the given incidents' workflows concurrently.
func (d *Dispatcher) ensureAll(ctx context.Context, pending []models.Incident) (int, error) {
	return temporalx.ForEachConcurrently(pending, func(inc *models.Incident) error { return d.Ensure(ctx, inc) })
}

// Kick asks Run to sweep now, with no grace period, instead of at the next tick.
// It never blocks: the one-slot buffer folds a burst of kicks into one sweep that
// sees every incident committed before it starts. The webhook path calls it after
// each commit so it can answer without waiting for Temporal, and the worker
// (Activities.Released) whenever an investigation leaves the in-flight bound,
// so the next waiting alert is admitted at once.
func (d *Dispatcher) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Run sweeps every interval until ctx ends. The grace period of a timed sweep
// leaves the API's own immediate start time to finish so the two rarely race
// (racing is still safe); a kicked sweep has none, because nobody else will start
// those incidents.
func (d *Dispatcher) Run(ctx context.Context, interval time.Duration) {
	temporalx.SweepLoop(ctx, interval, d.kick, d.log, "dispatcher sweep", func(kicked bool) (int, error) {
		if kicked {
			return d.Sweep(ctx, 0)
		}
		return d.Sweep(ctx, sweepGrace)
	})
}
