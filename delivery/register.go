package delivery

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/temporalx"
)

// Register adds the delivery workflow and its activity under their explicit
// names, which recorded histories refer to.
func Register(r temporalx.Registry, a *Activities) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(a.DeliverEvent, activity.RegisterOptions{Name: NameDeliverEvent})
}
