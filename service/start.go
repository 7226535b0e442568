package service

import (
	"context"
	"errors"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// workflowCallTimeout bounds how long a request waits on a workflow (an update
// and its result, or a start). An update is answered within a second when
// Temporal and a worker are up; without a deadline the SDK keeps retrying an
// unreachable server for a minute, past the HTTP server's write timeout and
// most clients' patience, so the caller would see a dropped connection instead
// of a 503 it can retry. Every request-path update has an ID that makes a retry
// join the first attempt or be refused by the workflow's validator.
const workflowCallTimeout = 10 * time.Second

// workflowCall is ctx bounded by workflowCallTimeout.
func workflowCall(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, workflowCallTimeout)
}

// startOnce starts workflow name under opts.ID unless a workflow with that ID
// already exists or has run. The dispatcher and the relay both start
// workflows under business-key IDs from sweeps that may repeat or run in
// several processes at once; the conflict policy attaches to a running
// workflow and the reuse policy refuses a second run after it finished, so
// both answers mean "it exists" and are success.
func startOnce(ctx context.Context, tc client.Client, opts client.StartWorkflowOptions, name string, input any) error {
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	_, err := tc.ExecuteWorkflow(ctx, opts, name, input)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return err
	}
	return nil
}

// forEachConcurrently runs f on every item, at most sweepConcurrency at a
// time, so a sweep's page of workflow starts drains in a few round trips
// without flooding Temporal. It returns how many calls succeeded and every
// failure.
func forEachConcurrently[T any](items []T, f func(*T) error) (int, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		n    int
		errs []error
		sem  = make(chan struct{}, sweepConcurrency)
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
