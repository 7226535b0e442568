// Package worker builds the Temporal worker that runs Causeway's workflows and
// activities. The worker binary and `make run` both use it.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/causeway/causeway/activities"
	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/workflows"
)

// New returns a worker polling taskQueue with every workflow and activity
// registered: the incident pipeline's and each domain slice's. It is not started.
func New(c client.Client, taskQueue string, acts *activities.Activities, rem *remediation.Activities, dlv *delivery.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, Options())
	workflows.Register(w, acts)
	remediation.Register(w, rem)
	delivery.Register(w, dlv)
	return w
}

// Options are the worker settings Causeway runs with, shared with benchmarks
// that measure the engine under the same settings.
func Options() sdkworker.Options {
	return sdkworker.Options{
		// Finish in-flight activities on shutdown before their tasks time out and
		// move to another worker.
		WorkerStopTimeout: 20 * time.Second,
		// An investigation starts one child workflow per agent at once, and each
		// child's first workflow task comes from the shared queue, not the sticky
		// one. With the SDK's two pollers (one of them on the sticky queue) those
		// tasks queue behind each other; a long poll is one idle goroutine on a
		// shared connection, so poll with room for a whole fan-out.
		MaxConcurrentWorkflowTaskPollers: 8,
		// A pass schedules all its data-source queries at once; only a few
		// start eagerly with the workflow task, the rest wait on the activity
		// pollers, so give those the same room.
		MaxConcurrentActivityTaskPollers: 8,
	}
}
