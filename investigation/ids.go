package investigation

import (
	"fmt"
	"strings"
)

// IncidentWorkflowID is the business key of an incident's workflow. It is the only
// place the format lives, so the API, the dispatcher and the Temporal UI agree.
func IncidentWorkflowID(incidentID string) string { return "incident/" + incidentID }

// InvestigationID is the business key of one investigation pass: the incident and
// the pass number. The database enforces it too, so a retried start records one
// pass, not two.
func InvestigationID(incidentID string, pass int) string {
	return fmt.Sprintf("inv_%s_%d", strings.TrimPrefix(incidentID, "inc_"), pass)
}

// InvestigationWorkflowID names the workflow of one pass, under its incident.
func InvestigationWorkflowID(incidentID string, pass int) string {
	return fmt.Sprintf("investigation/%s/%d", incidentID, pass)
}

// AgentWorkflowID names one agent's workflow within a pass.
func AgentWorkflowID(incidentID string, pass int, role string) string {
	return InvestigationWorkflowID(incidentID, pass) + "/agent/" + role
}
