package slack

import (
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/temporalx"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Registered names of the workflow, its signal and its activities.
const (
	MessageWorkflowName = "SlackMessageWorkflow"
	SignalRefresh       = "slack-refresh"
	NameSyncMessage     = "SlackSyncMessage"
	NamePendingTimeline = "SlackPendingTimeline"
)

// Message keys: the incident's root message, its thread (the timeline, one
// reply per entry), and one message per remediation proposal.
const (
	KeyRoot              = "root"
	KeyThread            = "thread"
	keyRemediationPrefix = "remediation/"
	keyTimelinePrefix    = "timeline/"
)

// RemediationKey is the message key of a proposal.
func RemediationKey(remediationID string) string { return keyRemediationPrefix + remediationID }

// MessageWorkflowID names the workflow of one message by its business keys,
// so every notification of the same message reaches the same workflow.
func MessageWorkflowID(tenantID, incidentID, key string) string {
	return "slack/" + tenantID + "/" + incidentID + "/" + key
}

// Retry and wait settings of message workflows.
const (
	// IdleTimeout ends a message's workflow after the incident has been quiet
	// this long; the next change starts a new run that finds the recorded ts.
	IdleTimeout = 6 * time.Hour
	// SendHorizon is how long one send keeps retrying Slack's 429s and 5xx.
	SendHorizon = 24 * time.Hour
	// maxRounds bounds one run's history; the workflow continues as new after.
	maxRounds = 200
	// threadPage is how many timeline entries one round of the thread posts.
	threadPage = 20
)

// MessageInput names one message. It holds IDs only: tokens and texts are
// loaded by the activity, so workflow history stays small and secret-free.
type MessageInput struct {
	TenantID   string
	IncidentID string
	Key        string
}

// SyncOutput is how a send ended. Done means the message will not change
// again (or sending stopped); Stopped names a permanent Slack error.
type SyncOutput struct {
	Done    bool
	Stopped string
}

// MessageResult is how a message workflow ended.
type MessageResult struct {
	Rounds  int
	Stopped string
}

// Register adds the message workflow and its activities under their names.
func Register(r temporalx.Registry, a *Activities) {
	r.RegisterWorkflowWithOptions(MessageWorkflow, workflow.RegisterOptions{Name: MessageWorkflowName})
	r.RegisterActivityWithOptions(a.SyncMessage, activity.RegisterOptions{Name: NameSyncMessage})
	r.RegisterActivityWithOptions(a.PendingTimeline, activity.RegisterOptions{Name: NamePendingTimeline})
}

// MessageWorkflow keeps one Slack message in step with Causeway: it sends,
// then waits for the next refresh signal and sends again, until the message
// is final, sending stopped, or nothing changed for IdleTimeout.
func MessageWorkflow(ctx workflow.Context, in MessageInput) (MessageResult, error) {
	ctx = withSendOptions(ctx)
	refresh := workflow.GetSignalChannel(ctx, SignalRefresh)
	for round := 1; round <= maxRounds; round++ {
		// Every pending refresh is answered by this one send of the current state.
		for refresh.ReceiveAsync(nil) {
		}
		out, err := sendOnce(ctx, in)
		if err != nil || out.Done {
			return MessageResult{Rounds: round, Stopped: out.Stopped}, err
		}
		// Wait for the incident to move again, or end when it stays quiet.
		if !awaitRefresh(ctx, refresh) {
			return MessageResult{Rounds: round}, nil
		}
	}
	return MessageResult{Rounds: maxRounds}, workflow.NewContinueAsNewError(ctx, MessageWorkflowName, in)
}

// sendOnce brings the message up to date; the thread is one reply per
// timeline entry, posted in order, each its own idempotent send.
func sendOnce(ctx workflow.Context, in MessageInput) (SyncOutput, error) {
	if in.Key != KeyThread {
		var out SyncOutput
		err := workflow.ExecuteActivity(ctx, NameSyncMessage, in).Get(ctx, &out)
		return out, err
	}
	for {
		var pending PendingOutput
		if err := workflow.ExecuteActivity(ctx, NamePendingTimeline, in).Get(ctx, &pending); err != nil {
			return SyncOutput{}, err
		}
		for _, id := range pending.EntryIDs {
			var out SyncOutput
			entry := MessageInput{TenantID: in.TenantID, IncidentID: in.IncidentID, Key: TimelineKey(id)}
			if err := workflow.ExecuteActivity(ctx, NameSyncMessage, entry).Get(ctx, &out); err != nil || out.Stopped != "" {
				return out, err
			}
		}
		if len(pending.EntryIDs) < threadPage {
			return SyncOutput{Done: pending.Final}, nil
		}
	}
}

// awaitRefresh reports whether a refresh arrived before IdleTimeout.
func awaitRefresh(ctx workflow.Context, refresh workflow.ReceiveChannel) bool {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	got := false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(refresh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); got = true })
	sel.AddFuture(workflow.NewTimer(tctx, IdleTimeout), func(workflow.Future) {})
	sel.Select(ctx)
	return got
}

// withSendOptions retries Slack's 429s (after its Retry-After, which the
// activity passes as the next retry delay) and 5xx with backoff for
// SendHorizon; a message Slack refuses for its content is not retried.
func withSendOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: SendHorizon,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        2 * time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        5 * time.Minute,
			NonRetryableErrorTypes: []string{ErrTypeRejected},
		},
	})
}

// TimelineKey is the message key of one timeline entry's thread reply.
func TimelineKey(entryID uint64) string { return keyTimelinePrefix + strconv.FormatUint(entryID, 10) }

// keyKind splits a message key into its kind and reference.
func keyKind(key string) (kind, ref string) {
	for _, p := range []string{keyRemediationPrefix, keyTimelinePrefix} {
		if rest, ok := strings.CutPrefix(key, p); ok {
			return p, rest
		}
	}
	return key, ""
}
