package ui

import (
	"fmt"
	"net/url"

	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// workflowLinks lists every workflow of the incident, oldest first: its
// IncidentWorkflow, each pass's InvestigationWorkflow with one AgentWorkflow
// per agent, and each remediation's RemediationWorkflow. The IDs are the
// business keys of workflows/ids.go, so each link opens the latest run of that
// workflow in the Temporal UI.
func (d *Dashboard) workflowLinks(inc *models.Incident, history []investigation.PassProgress, rems []remediation.Remediation) []workflowLink {
	out := []workflowLink{d.workflowLink("Incident", investigation.IncidentWorkflowID(inc.ID))}
	for i := len(history) - 1; i >= 0; i-- {
		inv := history[i].Investigation
		out = append(out, d.workflowLink(fmt.Sprintf("Investigation pass %d", inv.Pass), investigation.InvestigationWorkflowID(inc.ID, inv.Pass)))
		for _, role := range inv.Agents {
			out = append(out, d.workflowLink(fmt.Sprintf("Pass %d · %s agent", inv.Pass, role), investigation.AgentWorkflowID(inc.ID, inv.Pass, role)))
		}
	}
	for _, r := range rems {
		out = append(out, d.workflowLink("Remediation "+r.ID, remediation.WorkflowID(r.ID)))
	}
	return out
}

// workflowLink addresses one workflow in the Temporal UI. The ID holds slashes,
// so it is escaped as one path segment.
func (d *Dashboard) workflowLink(label, id string) workflowLink {
	return workflowLink{Label: label, ID: id, URL: d.o.TemporalUIURL + "/namespaces/" + url.PathEscape(d.o.TemporalNamespace) +
		"/workflows/" + url.PathEscape(id)}
}
