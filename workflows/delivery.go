package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/activities"
	"github.com/causeway/causeway/temporalx"
)

// DeliveryWorkflowName is the registered name of DeliveryWorkflow.
const DeliveryWorkflowName = "DeliveryWorkflow"

// The delivery retry schedule: exponential backoff from DeliveryInitialBackoff,
// doubling up to DeliveryMaxBackoff, for at least DeliveryHorizon after the first
// attempt (about 30 attempts), as Standard Webhooks receivers expect.
const (
	DeliveryInitialBackoff = 10 * time.Second
	DeliveryMaxBackoff     = time.Hour
	DeliveryHorizon        = 24 * time.Hour
)

// DeliveryInput starts the delivery of one outbox event to one endpoint.
type DeliveryInput struct {
	DeliveryID string
	TenantID   string
	EventID    string
	EndpointID string
}

// DeliveryResult is how the delivery ended and after how many attempts.
type DeliveryResult struct {
	Outcome  string
	Attempts int
}

// DeliveryWorkflow delivers one event to one endpoint: one activity per attempt
// (each attempt is recorded by the activity), durable timers in between. The loop
// lives in the workflow rather than in an activity retry policy so each attempt
// gets its own number in the log and a receiver's Retry-After can stretch the wait.
func DeliveryWorkflow(ctx workflow.Context, in DeliveryInput) (DeliveryResult, error) {
	ctx = withDeliveryOptions(ctx)
	start := workflow.Now(ctx)
	backoff := DeliveryInitialBackoff
	for attempt := 1; ; attempt++ {
		// Send once; the last attempt inside the horizon closes the delivery.
		final := workflow.Now(ctx).Sub(start) >= DeliveryHorizon
		var out activities.DeliverOutput
		err := workflow.ExecuteActivity(ctx, activities.NameDeliverEvent,
			activities.DeliverInput{DeliveryID: in.DeliveryID, Attempt: attempt, Final: final}).Get(ctx, &out)
		if err != nil {
			return DeliveryResult{Attempts: attempt}, err
		}
		if out.Outcome != activities.DeliveryRetry {
			return DeliveryResult{Outcome: out.Outcome, Attempts: attempt}, nil
		}
		// Wait out the backoff, or longer when the receiver asked for it.
		wait := min(max(backoff, out.RetryAfter), DeliveryMaxBackoff)
		if err := workflow.Sleep(ctx, wait); err != nil {
			return DeliveryResult{Attempts: attempt}, err
		}
		backoff = min(backoff*2, DeliveryMaxBackoff)
	}
}

// withDeliveryOptions is the preset for delivery attempts: the HTTP call itself
// times out in the egress client (15 s); an activity error means our own side
// failed (database, sealed secret), which is retried with the same backoff for
// as long as it takes, because an event must not be lost.
func withDeliveryOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        DeliveryInitialBackoff,
			BackoffCoefficient:     2,
			MaximumInterval:        DeliveryMaxBackoff,
			NonRetryableErrorTypes: []string{temporalx.ErrTypeNotFound},
		},
	})
}
