package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/activities"
)

const dlvID = "dlv_1"

var dlvIn = DeliveryInput{DeliveryID: dlvID, TenantID: tenant, EventID: "evt_1", EndpointID: "whe_1"}

// deliveryCalls runs DeliveryWorkflow with a DeliverEvent stand-in that answers
// with answer(attempt) and records each attempt's input and workflow-clock time.
func deliveryCalls(t *testing.T, answer func(activities.DeliverInput) activities.DeliverOutput) (DeliveryResult, []activities.DeliverInput, []time.Duration) {
	env := newEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: DeliveryWorkflowID("evt_1", "whe_1")})
	var ins []activities.DeliverInput
	var at []time.Duration
	start := env.Now()
	env.OnActivity(activities.NameDeliverEvent, mock.Anything, mock.MatchedBy(func(in activities.DeliverInput) bool {
		return in.DeliveryID == dlvID
	})).Return(func(_ context.Context, in activities.DeliverInput) (activities.DeliverOutput, error) {
		ins = append(ins, in)
		at = append(at, env.Now().Sub(start))
		return answer(in), nil
	})
	env.ExecuteWorkflow(DeliveryWorkflowName, dlvIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res DeliveryResult
	require.NoError(t, env.GetWorkflowResult(&res))
	return res, ins, at
}

func TestDeliveryRetriesWithBackoffForADay(t *testing.T) {
	res, ins, at := deliveryCalls(t, func(in activities.DeliverInput) activities.DeliverOutput {
		if in.Final {
			return activities.DeliverOutput{Outcome: activities.DeliveryFailed, StatusCode: 500}
		}
		return activities.DeliverOutput{Outcome: activities.DeliveryRetry, StatusCode: 500}
	})
	require.Equal(t, activities.DeliveryFailed, res.Outcome)
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
	require.GreaterOrEqual(t, at[last], DeliveryHorizon, "retries must span at least 24 h")
	require.Less(t, at[last-1], DeliveryHorizon, "no attempt after the first one past the horizon")
	for _, in := range ins[:last] {
		require.False(t, in.Final)
	}
	require.Equal(t, len(ins), res.Attempts)
	t.Logf("%d attempts over %s", len(ins), at[last])
}

func TestDeliveryStopsOnSuccessAndGone(t *testing.T) {
	for _, outcome := range []string{activities.DeliverySucceeded, activities.DeliveryGone, activities.DeliveryAbandoned} {
		t.Run(outcome, func(t *testing.T) {
			res, ins, _ := deliveryCalls(t, func(in activities.DeliverInput) activities.DeliverOutput {
				if in.Attempt < 3 {
					return activities.DeliverOutput{Outcome: activities.DeliveryRetry, StatusCode: 503}
				}
				return activities.DeliverOutput{Outcome: outcome}
			})
			require.Equal(t, DeliveryResult{Outcome: outcome, Attempts: 3}, res)
			require.Len(t, ins, 3)
		})
	}
}

func TestDeliveryHonoursRetryAfter(t *testing.T) {
	_, _, at := deliveryCalls(t, func(in activities.DeliverInput) activities.DeliverOutput {
		switch in.Attempt {
		case 1:
			return activities.DeliverOutput{Outcome: activities.DeliveryRetry, StatusCode: 429, RetryAfter: 2 * time.Minute}
		case 2:
			return activities.DeliverOutput{Outcome: activities.DeliveryRetry, StatusCode: 503, RetryAfter: 5 * time.Hour}
		}
		return activities.DeliverOutput{Outcome: activities.DeliverySucceeded, StatusCode: 200}
	})
	require.Equal(t, []time.Duration{0, 2 * time.Minute, 2*time.Minute + time.Hour}, at,
		"Retry-After stretches the wait, capped at the maximum backoff")
}
