package remediation

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/temporalx"
)

// Register adds the remediation workflow and its activities under their
// explicit names, which recorded histories and the investigation workflow
// (proposals, child starts) refer to.
func Register(r temporalx.Registry, a *Activities) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(a.ProposeRemediations, activity.RegisterOptions{Name: NameProposeRemediations})
	r.RegisterActivityWithOptions(a.DecideRemediation, activity.RegisterOptions{Name: NameDecideRemediation})
	r.RegisterActivityWithOptions(a.BeginRemediation, activity.RegisterOptions{Name: NameBeginRemediation})
	r.RegisterActivityWithOptions(a.RunRemediationStep, activity.RegisterOptions{Name: NameRunRemediationStep})
	r.RegisterActivityWithOptions(a.FinishRemediation, activity.RegisterOptions{Name: NameFinishRemediation})
	r.RegisterActivityWithOptions(a.PlanRemediationVerification, activity.RegisterOptions{Name: NamePlanVerification})
	r.RegisterActivityWithOptions(a.VerifyRemediation, activity.RegisterOptions{Name: NameVerifyRemediation})
	r.RegisterActivityWithOptions(a.ReinvestigateAfterRemediation, activity.RegisterOptions{Name: NameReinvestigateAfter})
}
