package delivery

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/temporalx"
)

// WorkflowName is the registered name of Workflow.
const WorkflowName = "DeliveryWorkflow"

// The delivery retry schedule: exponential backoff from InitialBackoff,
// doubling up to MaxBackoff, for at least Horizon after the first
// attempt (about 30 attempts), as Standard Webhooks receivers expect.
const (
	InitialBackoff = 10 * time.Second
	MaxBackoff     = time.Hour
	Horizon        = 24 * time.Hour
)

// Input starts the delivery of one outbox event to one endpoint.
type Input struct {
	DeliveryID string
	TenantID   string
	EventID    string
	EndpointID string
}

// Result is how the delivery ended and after how many attempts.
type Result struct {
	Outcome  string
	Attempts int
}

// Workflow delivers one event to one endpoint: one activity per attempt
// (each attempt is recorded by the activity), durable timers in between. The loop
// lives in the workflow rather than in an activity retry policy so each attempt
// gets its own number in the log and a receiver's Retry-After can stretch the wait.
func Workflow(ctx workflow.Context, in Input) (Result, error) {
	ctx = withDeliveryOptions(ctx)
	start := workflow.Now(ctx)
	backoff := InitialBackoff
	for attempt := 1; ; attempt++ {
		// Send once; the last attempt inside the horizon closes the delivery.
		final := workflow.Now(ctx).Sub(start) >= Horizon
		var out DeliverOutput
		err := workflow.ExecuteActivity(ctx, NameDeliverEvent,
			DeliverInput{DeliveryID: in.DeliveryID, Attempt: attempt, Final: final}).Get(ctx, &out)
		if err != nil {
			return Result{Attempts: attempt}, err
		}
		if out.Outcome != OutcomeRetry {
			return Result{Outcome: out.Outcome, Attempts: attempt}, nil
		}
		// Wait out the backoff, or longer when the receiver asked for it.
		wait := min(max(backoff, out.RetryAfter), MaxBackoff)
		if err := workflow.Sleep(ctx, wait); err != nil {
			return Result{Attempts: attempt}, err
		}
		backoff = min(backoff*2, MaxBackoff)
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
			InitialInterval:        InitialBackoff,
			BackoffCoefficient:     2,
			MaximumInterval:        MaxBackoff,
			NonRetryableErrorTypes: []string{temporalx.ErrTypeNotFound},
		},
	})
}

// WorkflowID names the workflow delivering one event to one endpoint, so
// the relay can start it any number of times and it runs once.
func WorkflowID(eventID, endpointID string) string {
	return "delivery/" + eventID + "/" + endpointID
}
