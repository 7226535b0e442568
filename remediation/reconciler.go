package remediation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Reconciler gives every proposed remediation its Workflow.
//
// A pass records its proposals and then starts their workflows; a pass that
// ends in between (terminated, or the start failed) would leave a proposal
// nobody can approve. The reconciler, running in every worker, starts the
// workflow of any proposal still without one after a grace period, under the
// same business-key ID, so a workflow the pass did start is simply found.
type Reconciler struct {
	store     *Store
	temporal  client.Client
	taskQueue string
	log       *slog.Logger
	now       func() time.Time
}

// NewReconciler builds a reconciler that starts workflows on taskQueue.
func NewReconciler(kernel *models.Store, tc client.Client, taskQueue string, log *slog.Logger) *Reconciler {
	return &Reconciler{store: NewStore(kernel.DB()), temporal: tc, taskQueue: taskQueue, log: log, now: time.Now}
}

// ReconcileGrace leaves a fresh proposal to the pass that made it.
const ReconcileGrace = time.Minute

// Sweep starts the missing workflows of proposals older than grace and marks
// every proposal whose workflow exists. It returns how many it started.
func (r *Reconciler) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	var started atomic.Int64
	for {
		rems, err := r.store.RemediationsWithoutWorkflow(ctx, r.now().UTC().Add(-grace), temporalx.SweepPage)
		if err != nil {
			return int(started.Load()), err
		}
		_, err = temporalx.ForEachConcurrently(rems, func(rem *Remediation) error {
			created, err := r.ensure(ctx, rem)
			if created {
				started.Add(1)
			}
			return err
		})
		if err != nil || len(rems) < temporalx.SweepPage {
			return int(started.Load()), err
		}
	}
}

// ensure starts rem's workflow unless it exists, then marks the row; created
// says whether this call started it.
func (r *Reconciler) ensure(ctx context.Context, rem *Remediation) (bool, error) {
	id := WorkflowID(rem.ID)
	_, err := r.temporal.DescribeWorkflowExecution(ctx, id, "")
	var missing *serviceerror.NotFound
	if err != nil && !errors.As(err, &missing) {
		return false, fmt.Errorf("look up workflow of remediation %s: %w", rem.ID, err)
	}
	created := err != nil
	if created {
		if err := temporalx.StartOnce(ctx, r.temporal, startOptions(rem, r.taskQueue), WorkflowName, inputOf(rem)); err != nil {
			return false, fmt.Errorf("start workflow of remediation %s: %w", rem.ID, err)
		}
		r.log.Info("started the missing workflow of a remediation", slog.String("tenant_id", rem.TenantID), slog.String("remediation_id", rem.ID))
	}
	return created, r.store.MarkRemediationWorkflowStarted(ctx, rem.ID, r.now())
}

// Run sweeps every interval until ctx ends.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) {
	temporalx.SweepLoop(ctx, interval, nil, r.log, "remediation reconciler sweep", func(bool) (int, error) { return r.Sweep(ctx, ReconcileGrace) })
}

// inputOf is the workflow input of a recorded remediation: what the pass that
// proposed it starts the workflow with, so whoever starts it (the pass, the
// reconciler, an early approval) starts the same workflow.
func inputOf(rem *Remediation) Input {
	in := Input{TenantID: rem.TenantID, IncidentID: rem.IncidentID, RemediationID: rem.ID, PlanHash: rem.PlanHash}
	for _, s := range rem.Steps {
		in.Steps = append(in.Steps, StepRef{Index: s.Index, Type: s.Type})
	}
	return in
}

// startOptions start a remediation's workflow under its business-key ID: a
// running one is joined, a finished one is never run again.
func startOptions(rem *Remediation, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: WorkflowID(rem.ID), TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:            fmt.Sprintf("remediation of %s · %d steps", rem.IncidentID, len(rem.Steps))}
}
