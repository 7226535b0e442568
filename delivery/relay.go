package delivery

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Relay moves outbound events from the transactional outbox to their endpoints.
//
// A state change and its OutboxEvent commit together. The relay then fans each
// undispatched event out into one EventDelivery row per subscribed endpoint and
// marks the event dispatched, in one transaction; finally it starts one
// DeliveryWorkflow per delivery whose workflow is not known to exist, under the
// deterministic ID DeliveryWorkflowID, and marks the row. A crash between any two
// of these steps leaves a row the next sweep picks up, and starting twice is
// harmless (the conflict policy attaches to the running workflow, the reuse
// policy refuses a second run after it finished), so every event is delivered
// and none twice by the same workflow.
type Relay struct {
	store     *Store
	temporal  client.Client
	taskQueue string
	log       *slog.Logger
	now       func() time.Time
}

// NewRelay builds a relay that starts delivery workflows on taskQueue.
func NewRelay(store *models.Store, tc client.Client, taskQueue string, log *slog.Logger) *Relay {
	return &Relay{store: NewStore(store.DB()), temporal: tc, taskQueue: taskQueue, log: log, now: time.Now}
}

// relayPage is how many rows one relay query handles.
const relayPage = 200

// Sweep fans out every pending event, then starts every delivery still without a
// workflow, up to temporalx.SweepConcurrency starts at a time like the dispatcher. It
// returns how many delivery workflows it started.
func (r *Relay) Sweep(ctx context.Context) (int, error) {
	for {
		n, err := r.store.FanOutEvents(ctx, r.now().UTC(), relayPage)
		if err != nil {
			return 0, fmt.Errorf("fan out events: %w", err)
		}
		if n < relayPage {
			break
		}
	}
	started := 0
	for {
		pending, err := r.store.DeliveriesWithoutWorkflow(ctx, r.now().UTC(), relayPage)
		if err != nil {
			return started, err
		}
		n, err := temporalx.ForEachConcurrently(pending, func(d *EventDelivery) error { return r.start(ctx, d) })
		started += n
		if err != nil || len(pending) < relayPage {
			return started, err
		}
	}
}

// start starts one delivery's workflow unless it exists, then marks the row.
func (r *Relay) start(ctx context.Context, d *EventDelivery) error {
	opts := client.StartWorkflowOptions{
		ID:            WorkflowID(d.EventID, d.EndpointID),
		TaskQueue:     r.taskQueue,
		StaticSummary: d.EventType + " → " + d.EndpointID,
	}
	in := Input{DeliveryID: d.ID, TenantID: d.TenantID, EventID: d.EventID, EndpointID: d.EndpointID}
	if err := temporalx.StartOnce(ctx, r.temporal, opts, WorkflowName, in); err != nil {
		return fmt.Errorf("start delivery %s: %w", d.ID, err)
	}
	return r.store.MarkDeliveryStarted(ctx, d.ID, r.now().UTC())
}

// Run sweeps every interval until ctx ends. It runs in every worker process (and
// in `causeway run`); concurrent relays are safe for the reasons above.
func (r *Relay) Run(ctx context.Context, interval time.Duration) {
	temporalx.SweepLoop(ctx, interval, nil, r.log, "event relay sweep", func(bool) (int, error) { return r.Sweep(ctx) })
}
