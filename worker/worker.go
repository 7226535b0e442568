// Package worker builds the Temporal worker that runs Causeway's workflows and
// activities. The worker binary and `make run` both use it.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/slack"
	"github.com/causeway/causeway/temporalx"
)

// Slices are the activities of each domain slice, registered with the
// slice's workflows.
type Slices struct {
	Remediation *remediation.Activities
	Delivery    *delivery.Activities
	Slack       *slack.Activities
}

// New returns a worker polling taskQueue with every workflow and activity
// registered. It is not started.
func New(c client.Client, taskQueue string, acts *investigation.Activities, s Slices) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, Options())
	Register(w, acts, s)
	return w
}

// Register adds the incident pipeline's workflows and activities and each
// slice's to r: the worker and the replay of recorded histories register the
// same set under the same names.
func Register(r temporalx.Registry, acts *investigation.Activities, s Slices) {
	investigation.Register(r, acts)
	remediation.Register(r, s.Remediation)
	delivery.Register(r, s.Delivery)
	slack.Register(r, s.Slack)
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
