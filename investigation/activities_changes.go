package investigation

import (
	"context"
	"sort"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// NameReadChanges is the registered name of the activity that reads a pass's
// recorded changes.
const NameReadChanges = "ReadChanges"

// Bounds of the changes one pass reads. They keep what enters workflow
// history small (a few kilobytes) whatever a tenant records: the latest
// changes of the incident's service, and a few of other services, which the
// deployments agent needs to tell a decoy from the trigger.
const (
	ChangesLookback       = 24 * time.Hour
	MaxServiceChanges     = 10
	MaxOtherChanges       = 5
	maxChangeDescription  = 300
	maxChangeFieldInPass  = 120
	changesWindowMaxCount = 200
)

// ChangesInput asks for the changes recorded around an incident's onset; At is
// the pass's start, the end of the window.
type ChangesInput struct {
	TenantID   string
	IncidentID string
	At         time.Time
}

// ChangesOutput is what a pass's agents read about recorded changes: bounded
// and free of anything secret (a change holds what its sender chose to
// publish to the team).
type ChangesOutput struct {
	Changes []analyzer.Change
}

// ReadChanges reads the tenant's changes that started from ChangesLookback
// before the incident's onset (the alert's start, else its creation) up to
// the pass's start: those of the incident's service first, then a few of
// other services, latest first.
func (a *Activities) ReadChanges(ctx context.Context, in ChangesInput) (ChangesOutput, error) {
	inc, err := a.Store.GetIncident(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return ChangesOutput{}, temporalx.Classify(err)
	}
	onset := datasources.ScopeOf(alertOf(inc), in.At, 0).Onset
	rows, err := a.Store.ChangesInWindow(ctx, in.TenantID, onset.Add(-ChangesLookback), in.At.Add(time.Minute), changesWindowMaxCount)
	if err != nil {
		return ChangesOutput{}, temporalx.Classify(err)
	}
	return ChangesOutput{Changes: passChanges(rows, inc.Service)}, nil
}

// passChanges keeps the incident's service's changes and a few others', each
// cut to bounded fields, in the order of their start.
func passChanges(rows []models.Change, service string) []analyzer.Change {
	var own, other []analyzer.Change
	for _, r := range rows {
		c := analyzer.Change{
			ID: r.ID, Service: r.Service, Environment: r.Environment, Kind: r.Kind,
			Version: analyzer.RunePrefix(r.Version, maxChangeFieldInPass), Description: analyzer.RunePrefix(r.Description, maxChangeDescription),
			StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt, Author: analyzer.RunePrefix(r.Author, maxChangeFieldInPass),
			URL: analyzer.RunePrefix(r.URL, maxChangeFieldInPass*2), RevertOf: analyzer.RunePrefix(r.RevertOf, maxChangeFieldInPass),
		}
		switch {
		case service != "" && r.Service == service:
			if len(own) < MaxServiceChanges {
				own = append(own, c)
			}
		case len(other) < MaxOtherChanges:
			other = append(other, c)
		}
	}
	out := append(own, other...)
	// Agents read them in the order they happened.
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out
}

// changeReaders is the deployments agent when the tenant records changes: it
// is the one that weighs them, whatever the alert's wording calls for.
func (a *Activities) changeReaders(ctx context.Context, tenantID string) []string {
	if ok, err := a.Store.HasChanges(ctx, tenantID); err != nil || !ok {
		return nil
	}
	return []string{analyzer.RoleDeployments}
}
