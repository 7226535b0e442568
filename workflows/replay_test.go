package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays histories recorded on a real server (by the
// e2e suite with CAUSEWAY_WRITE_HISTORIES=1) against today's code: a change to a
// workflow's command sequence that is not behind workflow.GetVersion fails here.
func TestReplayRecordedHistories(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(IncidentWorkflow, workflow.RegisterOptions{Name: IncidentWorkflowName})
	r.RegisterWorkflowWithOptions(InvestigationWorkflow, workflow.RegisterOptions{Name: InvestigationWorkflowName})
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})
	r.RegisterWorkflowWithOptions(RemediationWorkflow, workflow.RegisterOptions{Name: RemediationWorkflowName})
	for _, name := range []string{
		"incident.json", "investigation.json", "remediation.json",
		// Recorded with only one of versionGather and versionSearchAttributes
		// in the code: each still replays.
		"investigation-gather.json", "investigation-before-gather.json",
		// Recorded before approvals expired (versionApprovalExpiry): still replays.
		"remediation-before-approval-expiry.json",
		// Recorded before the workflows upserted search attributes
		// (versionSearchAttributes): still replay.
		"incident-before-search-attributes.json", "investigation-before-search-attributes.json",
		// An agent whose attempts all met a database outage, waiting it out
		// (versionAgentWaitsForStore).
		"agent-waited-for-store.json",
	} {
		t.Run(name, func(t *testing.T) {
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "histories", name)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
