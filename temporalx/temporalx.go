// Package temporalx holds the Temporal helpers every domain shares: starting a
// workflow once under its business key, bounding a request's wait on a
// workflow, sweeping pages of starts, the activity option presets for
// database writes, heartbeats and the retry classification of store errors.
// It sits below every domain and imports none of them.
package temporalx

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/models"
)

// CallTimeout bounds how long a request waits on a workflow (an update and its
// result, or a start). An update is answered within a second when Temporal and
// a worker are up; without a deadline the SDK keeps retrying an unreachable
// server for a minute, past the HTTP server's write timeout and most clients'
// patience, so the caller would see a dropped connection instead of a 503 it
// can retry. Every request-path update has an ID that makes a retry join the
// first attempt or be refused by the workflow's validator.
const CallTimeout = 10 * time.Second

// Call is ctx bounded by CallTimeout.
func Call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, CallTimeout)
}

// StartOnce starts workflow name under opts.ID unless a workflow with that ID
// already exists or has run. Sweeps start workflows under business-key IDs and
// may repeat or run in several processes at once; the conflict policy attaches
// to a running workflow and the reuse policy refuses a second run after it
// finished, so both answers mean "it exists" and are success.
func StartOnce(ctx context.Context, tc client.Client, opts client.StartWorkflowOptions, name string, input any) error {
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	_, err := tc.ExecuteWorkflow(ctx, opts, name, input)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return err
	}
	return nil
}

// Sweep parameters shared by every sweep that starts workflows from database
// rows: how many rows one query fetches, and how many starts run at once, so
// a burst drains in a few round trips without flooding Temporal.
const (
	SweepPage        = 200
	SweepConcurrency = 16
)

// ForEachConcurrently runs f on every item, at most SweepConcurrency at a
// time. It returns how many calls succeeded and every failure.
func ForEachConcurrently[T any](items []T, f func(*T) error) (int, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		n    int
		errs []error
		sem  = make(chan struct{}, SweepConcurrency)
	)
	for i := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func(it *T) {
			defer func() { <-sem; wg.Done() }()
			err := f(it)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			n++
		}(&items[i])
	}
	wg.Wait()
	return n, errors.Join(errs...)
}

// StoreOptions is the preset for database writes: short attempts, retried with
// backoff for as long as the database is away, because losing a state change is
// worse than recording it late.
func StoreOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         StoreRetryPolicy(),
	})
}

// StoreRetryPolicy retries a database write without limit: short waits first,
// then once a minute until the database is back.
func StoreRetryPolicy() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}
}

// ErrTypeNotFound marks a non-retryable failure because a row the activity
// needs does not exist: no retry will create it.
const ErrTypeNotFound = "NotFound"

// Classify turns store errors into what Temporal should do with them: a missing
// row is final; anything else (the database away, a timeout) is retried.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, models.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeNotFound, err)
	}
	return err
}

// HeartbeatInterval is how often a long activity (a remediation step, a
// data-source query) reports that its worker is alive; the presets' heartbeat
// timeouts are a few times longer.
const HeartbeatInterval = 2 * time.Second

// Heartbeat records an activity heartbeat every HeartbeatInterval until ctx ends, so a
// lost worker is noticed within the heartbeat timeout and a cancelled activity
// learns of it. The first beat is due one interval in, because the heartbeat
// timeout counts from the start; a run that ended meanwhile sends none (the
// SDK logs a warning for every heartbeat after the end).
func Heartbeat(ctx context.Context) {
	t := time.NewTicker(HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ctx.Err() != nil {
			return
		}
		activity.RecordHeartbeat(ctx)
	}
}

// Reason keeps a failure reason readable in coverage, the timeline, delivery
// attempts and history. It cuts on a rune boundary: PostgreSQL refuses invalid
// UTF-8, so a cut inside a character would fail the write on every retry.
func Reason(s string) string { return clip.To(s, 300) }

// SweepLoop runs sweep now, then at every tick and whenever kick fires (a nil
// kick never does), until ctx ends. Failures are logged and retried at the next
// round: the database rows are the queue, so nothing is lost by waiting. The
// dispatcher, the event relay and the remediation reconciler share it.
func SweepLoop(ctx context.Context, interval time.Duration, kick <-chan struct{}, log *slog.Logger, what string,
	sweep func(kicked bool) (int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	kicked := false
	for {
		if n, err := sweep(kicked); err != nil && ctx.Err() == nil {
			log.Warn(what+" failed; will retry", slog.Any("error", err))
		} else if n > 0 {
			log.Info(what+" started workflows", slog.Int("count", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			kicked = false
		case <-kick:
			kicked = true
		}
	}
}

// TimelineKey makes the DedupKey of a timeline entry from the workflow and the
// step, so a retried activity writes its entry once.
func TimelineKey(workflowID, step string) string { return workflowID + "/" + step }

// IsTimeout reports whether err is an activity's or a child's timeout, which a
// workflow treats as "no answer in time" rather than as a refusal.
func IsTimeout(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te)
}

// Registry is the part of a Temporal worker (or test environment) that takes
// registrations, so each domain registers its workflows and activities
// through one signature.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// HasErrorType reports whether err carries an application error of type typ,
// however deeply it is wrapped in activity, child or update errors.
func HasErrorType(err error, typ string) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == typ
}
