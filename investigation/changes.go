package investigation

import (
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/analyzer"
)

// versionReadChanges marks passes that read the tenant's recorded changes
// before their agents run. Histories recorded before it replay without.
const versionReadChanges = "read-changes"

// readChanges reads the changes recorded around the onset. A failure is
// logged and the pass goes on without them: changes sharpen an answer, they
// are never a reason to have none.
func (w *investigation) readChanges(ctx workflow.Context) {
	if workflow.GetVersion(ctx, versionReadChanges, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	var out ChangesOutput
	err := workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), NameReadChanges, ChangesInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, At: workflow.Now(ctx),
	}).Get(ctx, &out)
	if err != nil {
		w.log.Error("could not read recorded changes", "error", err)
		return
	}
	w.changes = out.Changes
}

// changesFor is what one agent is given of the recorded changes: the
// deployments agent weighs them; the others do not read them, which keeps
// them out of every other agent's history.
func (w *investigation) changesFor(role string) []analyzer.Change {
	if role != analyzer.RoleDeployments {
		return nil
	}
	return w.changes
}
