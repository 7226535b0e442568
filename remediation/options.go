package remediation

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// withStepOptions is the preset of one remediation step, by type. Every step
// heartbeats (temporalx.Heartbeat), so a lost worker is noticed within
// the heartbeat timeout and the step moves to another worker with the same
// idempotency key. Transient failures retry with backoff a bounded number of
// times; executors return refusals and bad params as non-retryable errors.
func withStepOptions(ctx workflow.Context, stepType string) workflow.Context {
	o := workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    5,
		},
	}
	switch stepType {
	case StepVerification:
		// The executor probes repeatedly itself; retries here only cover lost workers.
		o.StartToCloseTimeout, o.RetryPolicy.MaximumAttempts = 15*time.Minute, 3
	case StepSQLMigration:
		o.StartToCloseTimeout, o.RetryPolicy.MaximumAttempts = 10*time.Minute, 3
	case StepDeploymentRollback:
		o.StartToCloseTimeout = 5 * time.Minute
	case StepWait:
		o.StartToCloseTimeout, o.RetryPolicy.MaximumAttempts = MaxWait+5*time.Minute, 10
	}
	return workflow.WithActivityOptions(ctx, o)
}
