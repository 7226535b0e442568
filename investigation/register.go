package investigation

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/temporalx"
)

// Register adds the incident and investigation workflows and their
// activities under their explicit names; each domain slice registers its own
// (remediation.Register, delivery.Register). The worker binary, `make run`
// and the tests all call them, so they cannot drift apart.
func Register(r temporalx.Registry, a *Activities) {
	r.RegisterWorkflowWithOptions(IncidentWorkflow, workflow.RegisterOptions{Name: IncidentWorkflowName})
	r.RegisterWorkflowWithOptions(InvestigationWorkflow, workflow.RegisterOptions{Name: InvestigationWorkflowName})
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})

	r.RegisterActivityWithOptions(a.SetIncidentStatus, activity.RegisterOptions{Name: NameSetIncidentStatus})
	r.RegisterActivityWithOptions(a.AddTimeline, activity.RegisterOptions{Name: NameAddTimeline})
	r.RegisterActivityWithOptions(a.TriageIncident, activity.RegisterOptions{Name: NameTriageIncident})
	r.RegisterActivityWithOptions(a.BeginInvestigation, activity.RegisterOptions{Name: NameBeginInvestigation})
	r.RegisterActivityWithOptions(a.PlanGathering, activity.RegisterOptions{Name: NamePlanGathering})
	r.RegisterActivityWithOptions(a.RunDataSourceQuery, activity.RegisterOptions{Name: NameRunDataSourceQuery})
	r.RegisterActivityWithOptions(a.ReadChanges, activity.RegisterOptions{Name: NameReadChanges})
	r.RegisterActivityWithOptions(a.RunAgent, activity.RegisterOptions{Name: NameRunAgent})
	r.RegisterActivityWithOptions(a.RunAgentStep, activity.RegisterOptions{Name: NameRunAgentStep})
	r.RegisterActivityWithOptions(a.SynthesizeInvestigation, activity.RegisterOptions{Name: NameSynthesizeInvestigation})
	r.RegisterActivityWithOptions(a.FinishInvestigation, activity.RegisterOptions{Name: NameFinishInvestigation})
}
