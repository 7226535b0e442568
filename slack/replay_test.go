package slack

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays message workflows recorded on a real
// server (by the e2e suite with CAUSEWAY_WRITE_HISTORIES=1) against today's
// code: a change to the command sequence not behind workflow.GetVersion fails
// here.
func TestReplayRecordedHistories(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(MessageWorkflow, workflow.RegisterOptions{Name: MessageWorkflowName})
	for _, name := range []string{"root.json", "thread.json", "remediation.json"} {
		t.Run(name, func(t *testing.T) {
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "histories", name)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
