package investigation

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/temporalx"
)

// workflowTaskTimeout is the workflow task timeout of the pipeline's
// workflows (incident, pass, agent), half the server's default of 10 s. A
// workflow task of theirs takes milliseconds (local activities past the
// timeout keep it alive by heartbeat), so the timeout only matters when the
// worker holding the task dies: then it is how long the investigation stalls,
// holding its admission slot, before another worker takes the task over
// (docs/failure-modes.md, "Storms").
const workflowTaskTimeout = 5 * time.Second

// withLocalStoreOptions is the preset for the short database writes on an
// investigation's critical path (start, synthesis, finish, proposals). They run
// as local activities, inside the workflow task that asks for them, so each
// saves a round trip through the server (three activity events, a dispatch and
// one more workflow task), which is most of a write's latency. That is safe
// because each write is idempotent (keyed by the investigation id or a
// DedupKey): a workflow task lost after the write committed runs it again and
// changes nothing. Retries back off as in withStoreOptions, in memory while the
// backoff fits in a workflow task timeout, on a durable timer beyond. A local
// activity's ScheduleToClose defaults to its StartToClose, so it is set to a day
// to keep retrying while the database is away.
func withLocalStoreOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy:            temporalx.StoreRetryPolicy(),
	})
}

// withLLMOptions is the preset for agent runs: one LLM call (plus its repair) fits
// in two minutes; transient failures (429, 5xx, network) back off and retry a
// bounded number of times, because a pass must end while it is still useful.
// Refusals and malformed output arrive as non-retryable errors and fail at once.
func withLLMOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		// Heartbeats are how a cancelled agent (deadline passed) learns to stop
		// its LLM call instead of spending tokens nobody will count.
		HeartbeatTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    4,
		},
	})
}

// withQueryOptions is the preset of a data-source query: a read, so it gets
// a short attempt, one retry for a passing outage, and nothing past the
// pass's budget; refusals do not retry at all.
func withQueryOptions(ctx workflow.Context, timeout, budget time.Duration) workflow.Context {
	if timeout <= 0 {
		timeout = config.ProductionDefaults().DataSourceQueryTimeout
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    timeout + 5*time.Second,
		ScheduleToCloseTimeout: budget + 5*time.Second,
		// The activity heartbeats while it waits on the source, so a query
		// cancelled at the budget stops instead of running to its timeout.
		HeartbeatTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        500 * time.Millisecond,
			BackoffCoefficient:     2,
			MaximumInterval:        2 * time.Second,
			MaximumAttempts:        2,
			NonRetryableErrorTypes: []string{ErrTypeDataSourceDenied, ErrTypeDataSourceMissing},
		},
	})
}
