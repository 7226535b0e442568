package workflows

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/activities"
	"github.com/causeway/causeway/temporalx"
)

// Register adds the incident and investigation workflows and their
// activities under their explicit names; each domain slice registers its own
// (remediation.Register, delivery.Register). The worker binary, `make run`
// and the tests all call them, so they cannot drift apart.
func Register(r temporalx.Registry, a *activities.Activities) {
	r.RegisterWorkflowWithOptions(IncidentWorkflow, workflow.RegisterOptions{Name: IncidentWorkflowName})
	r.RegisterWorkflowWithOptions(InvestigationWorkflow, workflow.RegisterOptions{Name: InvestigationWorkflowName})
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})

	r.RegisterActivityWithOptions(a.SetIncidentStatus, activity.RegisterOptions{Name: activities.NameSetIncidentStatus})
	r.RegisterActivityWithOptions(a.AddTimeline, activity.RegisterOptions{Name: activities.NameAddTimeline})
	r.RegisterActivityWithOptions(a.TriageIncident, activity.RegisterOptions{Name: activities.NameTriageIncident})
	r.RegisterActivityWithOptions(a.BeginInvestigation, activity.RegisterOptions{Name: activities.NameBeginInvestigation})
	r.RegisterActivityWithOptions(a.PlanGathering, activity.RegisterOptions{Name: activities.NamePlanGathering})
	r.RegisterActivityWithOptions(a.RunDataSourceQuery, activity.RegisterOptions{Name: activities.NameRunDataSourceQuery})
	r.RegisterActivityWithOptions(a.ReadChanges, activity.RegisterOptions{Name: activities.NameReadChanges})
	r.RegisterActivityWithOptions(a.RunAgent, activity.RegisterOptions{Name: activities.NameRunAgent})
	r.RegisterActivityWithOptions(a.RunAgentStep, activity.RegisterOptions{Name: activities.NameRunAgentStep})
	r.RegisterActivityWithOptions(a.SynthesizeInvestigation, activity.RegisterOptions{Name: activities.NameSynthesizeInvestigation})
	r.RegisterActivityWithOptions(a.FinishInvestigation, activity.RegisterOptions{Name: activities.NameFinishInvestigation})
}
