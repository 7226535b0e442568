package delivery

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
)

const dlvID = "dlv_1"

var dlvIn = Input{DeliveryID: dlvID, TenantID: "ten_1", EventID: "evt_1", EndpointID: "whe_1"}

// deliveryCalls runs Workflow with a DeliverEvent stand-in that answers
// with answer(attempt) and records each attempt's input and workflow-clock time.
func deliveryCalls(t *testing.T, answer func(DeliverInput) DeliverOutput) (Result, []DeliverInput, []time.Duration) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env, &Activities{})
	t.Cleanup(func() { env.AssertExpectations(t) })
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: WorkflowID("evt_1", "whe_1")})
	var ins []DeliverInput
	var at []time.Duration
	start := env.Now()
	env.OnActivity(NameDeliverEvent, mock.Anything, mock.MatchedBy(func(in DeliverInput) bool {
		return in.DeliveryID == dlvID
	})).Return(func(_ context.Context, in DeliverInput) (DeliverOutput, error) {
		ins = append(ins, in)
		at = append(at, env.Now().Sub(start))
		return answer(in), nil
	})
	env.ExecuteWorkflow(WorkflowName, dlvIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res Result
	require.NoError(t, env.GetWorkflowResult(&res))
	return res, ins, at
}

func TestDeliveryRetriesWithBackoffForADay(t *testing.T) {
	res, ins, at := deliveryCalls(t, func(in DeliverInput) DeliverOutput {
		if in.Final {
			return DeliverOutput{Outcome: OutcomeFailed, StatusCode: 500}
		}
		return DeliverOutput{Outcome: OutcomeRetry, StatusCode: 500}
	})
	require.Equal(t, OutcomeFailed, res.Outcome)
	// 10 s doubling: 10, 20, 40, ... 2560 s, then capped at one hour.
	want := time.Duration(0)
	backoff := 10 * time.Second
	for i := range ins {
		require.Equal(t, i+1, ins[i].Attempt)
		require.Equal(t, want, at[i], "attempt %d", i+1)
		want += backoff
		backoff = min(backoff*2, time.Hour)
	}
	last := len(ins) - 1
	require.True(t, ins[last].Final, "last attempt must be marked final")
	require.GreaterOrEqual(t, at[last], Horizon, "retries must span at least 24 h")
	require.Less(t, at[last-1], Horizon, "no attempt after the first one past the horizon")
	for _, in := range ins[:last] {
		require.False(t, in.Final)
	}
	require.Equal(t, len(ins), res.Attempts)
	t.Logf("%d attempts over %s", len(ins), at[last])
}

func TestDeliveryStopsOnSuccessAndGone(t *testing.T) {
	for _, outcome := range []string{OutcomeSucceeded, OutcomeGone, OutcomeAbandoned} {
		t.Run(outcome, func(t *testing.T) {
			res, ins, _ := deliveryCalls(t, func(in DeliverInput) DeliverOutput {
				if in.Attempt < 3 {
					return DeliverOutput{Outcome: OutcomeRetry, StatusCode: 503}
				}
				return DeliverOutput{Outcome: outcome}
			})
			require.Equal(t, Result{Outcome: outcome, Attempts: 3}, res)
			require.Len(t, ins, 3)
		})
	}
}

func TestDeliveryHonoursRetryAfter(t *testing.T) {
	_, _, at := deliveryCalls(t, func(in DeliverInput) DeliverOutput {
		switch in.Attempt {
		case 1:
			return DeliverOutput{Outcome: OutcomeRetry, StatusCode: 429, RetryAfter: 2 * time.Minute}
		case 2:
			return DeliverOutput{Outcome: OutcomeRetry, StatusCode: 503, RetryAfter: 5 * time.Hour}
		}
		return DeliverOutput{Outcome: OutcomeSucceeded, StatusCode: 200}
	})
	require.Equal(t, []time.Duration{0, 2 * time.Minute, 2*time.Minute + time.Hour}, at,
		"Retry-After stretches the wait, capped at the maximum backoff")
}
