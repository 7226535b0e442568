package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/worker"
)

// floorCall is the stand-in for one agent's LLM call: it only waits.
func floorCall(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// floorAgent is an agent workflow with nothing of Causeway in it: one activity.
func floorAgent(ctx workflow.Context, d time.Duration) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(ctx, floorCall, d).Get(ctx, nil)
}

// floorPass is the bare shape of a pass: n children in parallel, then done.
func floorPass(ctx workflow.Context, n int, d time.Duration) error {
	futures := make([]workflow.ChildWorkflowFuture, n)
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	for i := range futures {
		futures[i] = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: fmt.Sprintf("%s/agent/%d", id, i),
		}), floorAgent, d)
	}
	for _, f := range futures {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkOrchestrationFloor is BenchmarkInvestigationOverhead's shape with
// none of Causeway's work: a parent starts four children, each runs one 300 ms
// activity. Its overhead is what the embedded server and SDK cost on this
// machine by themselves, the floor under the investigation's figure. Workers use
// Causeway's worker options.
func BenchmarkOrchestrationFloor(b *testing.B) {
	const agents, call = 4, 300 * time.Millisecond
	c, queue := floorWorker(b, "floor-")
	ctx := context.Background()
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue + fmt.Sprintf("/pass/%d", i), TaskQueue: queue}, floorPass, agents, call)
		if err != nil {
			b.Fatal(err)
		}
		if err := run.Get(ctx, nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.StopTimer()
	wall := total / time.Duration(b.N)
	b.ReportMetric(float64(wall.Milliseconds()), "wall-ms/pass")
	b.ReportMetric(100*float64(wall-call)/float64(call), "overhead-%")
	if os.Getenv("CAUSEWAY_BENCH_TRACE") != "" {
		last := queue + fmt.Sprintf("/pass/%d", b.N-1)
		ids := [][2]string{{"pass", last}}
		for i := range agents {
			ids = append(ids, [2]string{fmt.Sprintf("agent/%d", i), fmt.Sprintf("%s/agent/%d", last, i)})
		}
		traceWorkflows(b, c, ids, nil)
	}
}

// floorWorker dials the embedded server and starts a worker with Causeway's
// worker options that runs only the bare floor workflows, on its own queue
// (prefix plus a random suffix); both stop when b ends.
func floorWorker(b *testing.B, prefix string) (client.Client, string) {
	c, err := client.Dial(client.Options{
		HostPort: stack.FrontendAddress(), Namespace: stack.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	queue := prefix + auth.RandomToken(6)
	w := sdkworker.New(c, queue, worker.Options())
	w.RegisterWorkflow(floorPass)
	w.RegisterWorkflow(floorAgent)
	w.RegisterActivity(floorCall)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	return c, queue
}
