// Package investigation is the incident and investigation pipeline, one
// slice from an incident's workflow to its answer.
//
// Work flows through it in this order:
//
//   - The API's incident and investigation routes call the services
//     (Incidents, Investigations in service*.go). A new incident is
//     durable before its workflow starts; the Dispatcher starts
//     IncidentWorkflow (incident.go) at once and its sweep starts any the
//     API could not.
//   - IncidentWorkflow triages (TriageIncident), then runs one pass at a
//     time through the startInvestigation update: BeginInvestigation spends
//     the quota and records the pass, and InvestigationWorkflow (pass.go)
//     runs it.
//   - A pass plans and runs the data-source queries (gather.go,
//     activities_gather.go), reads the recorded changes (changes.go), runs
//     one AgentWorkflow (agent.go, activities_agent.go, activities_tools.go)
//     per agent role, synthesizes the answer, records it and proposes
//     remediations, which the remediation slice takes from there by
//     workflow name.
//   - History (history.go) reads what each pass did; searchattributes.go
//     labels the workflows for the Temporal UI.
//
// The slice's own rows (passes, agent runs, answers, context entries) are
// written by Store (store.go) over the shared database; the rows other
// slices read, the Investigation and AgentRun models among them, stay in the
// kernel (package models). Workflow, activity, update and query names are in
// messages.go and register.go and never change: recorded histories replay
// against them.
package investigation
