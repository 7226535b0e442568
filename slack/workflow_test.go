package slack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

func newWorkflowEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env, &Activities{})
	return env
}

var rootIn = MessageInput{TenantID: "ten_a", IncidentID: "inc_a", Key: KeyRoot}

func TestMessageWorkflowEndsWhenTheMessageIsFinal(t *testing.T) {
	env := newWorkflowEnv(t)
	env.OnActivity(NameSyncMessage, mock.Anything, rootIn).Return(SyncOutput{Done: true}, nil).Once()
	env.ExecuteWorkflow(MessageWorkflow, rootIn)
	var res MessageResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Rounds != 1 {
		t.Fatalf("result %+v, %v", res, err)
	}
	env.AssertExpectations(t)
}

// TestMessageWorkflowSendsAgainOnRefreshThenIdles: a refresh during the wait
// sends once more; then the idle timer ends the run.
func TestMessageWorkflowSendsAgainOnRefreshThenIdles(t *testing.T) {
	env := newWorkflowEnv(t)
	env.OnActivity(NameSyncMessage, mock.Anything, rootIn).Return(SyncOutput{}, nil).Twice()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalRefresh, nil) }, time.Hour)
	env.ExecuteWorkflow(MessageWorkflow, rootIn)
	var res MessageResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Rounds != 2 {
		t.Fatalf("result %+v, %v", res, err)
	}
	env.AssertExpectations(t)
}

func TestMessageWorkflowStopsOnAPermanentError(t *testing.T) {
	env := newWorkflowEnv(t)
	env.OnActivity(NameSyncMessage, mock.Anything, rootIn).Return(SyncOutput{Done: true, Stopped: "channel_not_found"}, nil).Once()
	env.ExecuteWorkflow(MessageWorkflow, rootIn)
	var res MessageResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Stopped != "channel_not_found" {
		t.Fatalf("result %+v, %v", res, err)
	}
}

// TestMessageWorkflowRetriesSlacksOutagesButNotARefusal: 5xx and 429 are
// retried by the activity policy; a message Slack refuses is not.
func TestMessageWorkflowRetriesSlacksOutagesButNotARefusal(t *testing.T) {
	env := newWorkflowEnv(t)
	calls := 0
	env.OnActivity(NameSyncMessage, mock.Anything, rootIn).Return(func(context.Context, MessageInput) (SyncOutput, error) {
		calls++
		switch calls {
		case 1:
			return SyncOutput{}, temporal.NewApplicationError("slack chat.postMessage: http_503", ErrTypeUnavailable)
		case 2:
			return SyncOutput{}, temporal.NewApplicationErrorWithOptions("slack chat.postMessage: ratelimited", ErrTypeRateLimited,
				temporal.ApplicationErrorOptions{NextRetryDelay: 30 * time.Second})
		}
		return SyncOutput{}, temporal.NewNonRetryableApplicationError("slack chat.update: invalid_blocks", ErrTypeRejected, nil)
	})
	env.ExecuteWorkflow(MessageWorkflow, rootIn)
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrTypeRejected || calls != 3 {
		t.Fatalf("error %v after %d attempts; want the refusal after two retried outages", err, calls)
	}
}

// TestThreadWorkflowPostsEntriesInOrder: the thread is one send per timeline
// entry, in the order of the timeline.
func TestThreadWorkflowPostsEntriesInOrder(t *testing.T) {
	env := newWorkflowEnv(t)
	in := MessageInput{TenantID: "ten_a", IncidentID: "inc_a", Key: KeyThread}
	env.OnActivity(NamePendingTimeline, mock.Anything, in).Return(PendingOutput{EntryIDs: []uint64{7, 9}, Final: true}, nil).Once()
	var order []string
	for _, id := range []uint64{7, 9} {
		entry := MessageInput{TenantID: "ten_a", IncidentID: "inc_a", Key: TimelineKey(id)}
		env.OnActivity(NameSyncMessage, mock.Anything, entry).Return(func(_ context.Context, m MessageInput) (SyncOutput, error) {
			order = append(order, m.Key)
			return SyncOutput{Done: true}, nil
		}).Once()
	}
	env.ExecuteWorkflow(MessageWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || order[0] != "timeline/7" || order[1] != "timeline/9" {
		t.Fatalf("order %v", order)
	}
	env.AssertExpectations(t)
}
