package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/models"
)

// Notifier turns incident changes into message workflows. Every change of an
// incident writes a timeline entry, so the notifier follows each connected
// tenant's timeline from its cursor: for each new entry of an incident that
// passes the notify filter it refreshes the root message, the thread and the
// incident's proposals. Refreshes are signal-with-start on the message's
// business-key ID, so a repeated sweep changes nothing twice.
type Notifier struct {
	store        *Store
	models       *models.Store
	temporal     client.Client
	taskQueue    string
	remediations Remediations
	log          *slog.Logger
	now          func() time.Time
	// Settle is how old an entry must be before the cursor passes it, so an
	// entry whose transaction commits late (ids are assigned before commit)
	// is not skipped.
	Settle time.Duration
}

// NewNotifier starts message workflows on taskQueue.
func NewNotifier(store *Store, m *models.Store, tc client.Client, taskQueue string, rems Remediations, log *slog.Logger) *Notifier {
	return &Notifier{store: store, models: m, temporal: tc, taskQueue: taskQueue, remediations: rems, log: log, now: time.Now, Settle: 2 * time.Second}
}

// sweepPage is how many timeline entries one tenant's sweep reads.
const sweepPage = 200

// Sweep handles every connected tenant's new timeline entries and returns how
// many incidents it refreshed.
func (n *Notifier) Sweep(ctx context.Context) (int, error) {
	integs, err := n.store.ActiveIntegrations(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for i := range integs {
		k, err := n.sweepTenant(ctx, &integs[i])
		total += k
		if err != nil {
			return total, fmt.Errorf("slack sweep of tenant %s: %w", integs[i].TenantID, err)
		}
	}
	return total, nil
}

func (n *Notifier) sweepTenant(ctx context.Context, integ *Integration) (int, error) {
	entries, err := n.store.TimelineAfter(ctx, integ.TenantID, integ.Cursor, sweepPage)
	if err != nil {
		return 0, err
	}
	settled := n.now().Add(-n.Settle)
	cursor := integ.Cursor
	var touched []string
	for _, e := range entries {
		if e.At.After(settled) {
			break
		}
		cursor = e.ID
		if !slices.Contains(touched, e.IncidentID) {
			touched = append(touched, e.IncidentID)
		}
	}
	for _, id := range touched {
		if err := n.refreshIncident(ctx, integ, id); err != nil {
			return 0, err
		}
	}
	if cursor > integ.Cursor {
		return len(touched), n.store.AdvanceCursor(ctx, integ.TenantID, cursor)
	}
	return len(touched), nil
}

// refreshIncident refreshes every message of an incident that passes the
// tenant's notify filter.
func (n *Notifier) refreshIncident(ctx context.Context, integ *Integration, incidentID string) error {
	inc, err := n.models.GetIncident(ctx, integ.TenantID, incidentID)
	if errors.Is(err, models.ErrNotFound) {
		return nil // a deleted incident has nothing to show
	}
	if err != nil {
		return err
	}
	category := ""
	inv, err := n.models.LatestInvestigation(ctx, integ.TenantID, incidentID)
	switch {
	case err == nil:
		category = inv.Category
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	if !Passes(integ.MinSeverity, integ.Categories, inc.Severity, category) {
		return nil
	}
	keys := []string{KeyRoot, KeyThread}
	props, err := n.remediations.Proposals(ctx, integ.TenantID, incidentID)
	if err != nil {
		return err
	}
	for _, p := range props {
		keys = append(keys, RemediationKey(p.ID))
	}
	for _, k := range keys {
		if err := n.Refresh(ctx, integ.TenantID, incidentID, k); err != nil {
			return err
		}
	}
	return nil
}

// Refresh asks one message's workflow to send the current state, starting it
// when it is not running (again after it ended: the new run finds the
// recorded ts and updates the message).
func (n *Notifier) Refresh(ctx context.Context, tenantID, incidentID, key string) error {
	opts := client.StartWorkflowOptions{
		ID:                    MessageWorkflowID(tenantID, incidentID, key),
		TaskQueue:             n.taskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:         "Slack " + key + " of " + incidentID,
	}
	in := MessageInput{TenantID: tenantID, IncidentID: incidentID, Key: key}
	_, err := n.temporal.SignalWithStartWorkflow(ctx, opts.ID, SignalRefresh, nil, opts, MessageWorkflowName, in)
	return err
}

// Run sweeps every interval until ctx ends.
func (n *Notifier) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := n.Sweep(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("slack notifier sweep failed", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Passes is the notify filter: the incident is at least minSeverity and, when
// categories are given, its investigation answered one of them.
func Passes(minSeverity string, categories []string, severity, category string) bool {
	if models.SeverityRank(severity) > models.SeverityRank(minSeverity) {
		return false
	}
	return len(categories) == 0 || slices.Contains(categories, category)
}
