package worker

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/slack"
)

// replayRegistry lets a replayer take the worker's own registrations, so the
// replay runs exactly the workflows the worker runs under the names it runs
// them; replays execute no activities, so those are dropped.
type replayRegistry struct{ sdkworker.WorkflowReplayer }

func (replayRegistry) RegisterActivityWithOptions(any, activity.RegisterOptions) {}

// TestReplayRecordedHistories replays histories recorded on a real server (by the
// e2e suite with CAUSEWAY_WRITE_HISTORIES=1) against today's code: a change to a
// workflow's command sequence that is not behind workflow.GetVersion fails here.
func TestReplayRecordedHistories(t *testing.T) {
	r := sdkworker.NewWorkflowReplayer()
	Register(replayRegistry{r}, &investigation.Activities{}, Slices{
		Remediation: &remediation.Activities{}, Delivery: &delivery.Activities{}, Slack: &slack.Activities{},
	})
	for _, name := range []string{
		"incident.json", "investigation.json", "remediation.json",
		// Recorded while the first timeline entry and triage were activities
		// of their own (before versionLocalTriage): still replays.
		"incident-before-local-triage.json",
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
		// An LLM agent's tool-use loop: steps, the queries the model chose and
		// its answer, within the pass's budget.
		"agent-tool-use.json",
		// One outbound event to one endpoint, retried once after a 500.
		"delivery.json",
		// A completed remediation verified after its durable timer
		// (versionVerify): the evidencing queries showed recovery.
		"remediation-verified.json",
		// Slack messages: an incident's root message, its thread, and a
		// proposal with its buttons, each kept in step across refreshes.
		"slack-root.json", "slack-thread.json", "slack-remediation.json",
	} {
		t.Run(name, func(t *testing.T) {
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "histories", name)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
