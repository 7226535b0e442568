package investigation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

var incWF = IncidentWorkflowID(incID)

func tl(at time.Time, kind, msg, actor, step string) TimelineInput {
	return TimelineInput{TenantID: tenant, IncidentID: incID, At: at, Kind: kind, Message: msg, Actor: actor,
		DedupKey: incWF + "/" + step}
}

func newIncidentEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	env := newEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: incWF})
	env.OnActivity(NameAddTimeline, mock.Anything,
		tl(t0, "workflow_started", "Incident workflow "+incWF+" started", "causeway", "workflow_started")).Return(nil).Once()
	return env
}

func beginIn(pass int, agents []string, context, actor string, at time.Time) BeginInput {
	return BeginInput{TenantID: tenant, IncidentID: incID, InvestigationID: InvestigationID(incID, pass), Pass: pass,
		Agents: agents, Context: context, Actor: actor, At: at, DedupKey: incWF + "/investigation/" + string(rune('0'+pass)) + "/started"}
}

func childIn(pass int, agents []string) InvestigationInput {
	return InvestigationInput{TenantID: tenant, IncidentID: incID, InvestigationID: InvestigationID(incID, pass), Pass: pass, Agents: agents}
}

// resolveAt resolves the incident at t0+d through the update, as the API does.
func resolveAt(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration) {
	env.OnActivity(NameSetIncidentStatus, mock.Anything, StatusInput{
		Status: models.StatusResolved, Timeline: tl(t0.Add(d), "resolved", "Resolved by oncall@example.com: fixed", "oncall@example.com", "resolved"),
	}).Return(StatusOutput{PreviousStatus: models.StatusInvestigated}, nil).Once()
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateResolve, "resolve", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("resolve rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, ResolveRequest{Actor: "oncall@example.com", Note: "fixed"})
	}, d)
}

func webhookInput() IncidentInput {
	return IncidentInput{TenantID: tenant, IncidentID: incID, Source: "datadog", Status: models.StatusTriaging,
		Severity: "P2", Title: "checkout db pool exhausted", CreatedAt: t0}
}

func finalState(t *testing.T, env *testsuite.TestWorkflowEnvironment) IncidentState {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st IncidentState
	require.NoError(t, env.GetWorkflowResult(&st))
	return st
}

func TestTriageSelectsAgentsAndStartsTheFirstPass(t *testing.T) {
	env := newIncidentEnv(t)
	agents := []string{"database", "logs", "metrics"}
	env.OnActivity(NameTriageIncident, mock.Anything, TriageInput{
		TenantID: tenant, IncidentID: incID, At: t0, DedupKey: incWF + "/triaged",
	}).Return(TriageOutput{Severity: "high", Agents: agents, Reason: "database matched"}, nil).Once()
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(1, agents, "", "causeway", t0)).
		Return(BeginOutput{Agents: agents}, nil).Once()
	env.OnWorkflow(InvestigationWorkflowName, mock.Anything, childIn(1, agents)).
		Return(InvestigationOutcome{InvestigationID: InvestigationID(incID, 1), Status: models.InvestigationCompleted,
			IncidentStatus: models.StatusInvestigated}, nil).Once()

	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryState)
		require.NoError(t, err)
		var st IncidentState
		require.NoError(t, v.Get(&st))
		require.Equal(t, models.StatusInvestigated, st.Status)
		require.Equal(t, "high", st.Severity)
		require.Equal(t, 1, st.Pass)
		require.False(t, st.Investigating)
	}, 30*time.Second)
	resolveAt(t, env, time.Minute)

	env.ExecuteWorkflow(IncidentWorkflowName, webhookInput())
	st := finalState(t, env)
	require.Equal(t, models.StatusResolved, st.Status)
	require.Equal(t, InvestigationID(incID, 1), st.InvestigationID)
}

func TestTriageWithSpentQuotaLeavesTheIncidentOpen(t *testing.T) {
	env := newIncidentEnv(t)
	agents := []string{"logs", "metrics"}
	env.OnActivity(NameTriageIncident, mock.Anything, TriageInput{
		TenantID: tenant, IncidentID: incID, At: t0, DedupKey: incWF + "/triaged",
	}).Return(TriageOutput{Severity: "medium", Agents: agents}, nil).Once()
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(1, agents, "", "causeway", t0)).
		Return(BeginOutput{}, temporal.NewNonRetryableApplicationError("quota used up", ErrTypeQuotaExceeded, nil)).Once()
	env.OnActivity(NameSetIncidentStatus, mock.Anything, StatusInput{
		Status: models.StatusOpen,
		Timeline: tl(t0, "investigation_skipped", "Not investigated automatically: the tenant's monthly investigation quota is used up. "+
			"Start an investigation manually once quota is available.", "causeway", "investigation_skipped"),
	}).Return(StatusOutput{PreviousStatus: models.StatusTriaging}, nil).Once()

	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryState)
		require.NoError(t, err)
		var st IncidentState
		require.NoError(t, v.Get(&st))
		require.Equal(t, models.StatusOpen, st.Status)
		require.Equal(t, 0, st.Pass)
	}, 30*time.Second)
	resolveAt(t, env, time.Minute)

	env.ExecuteWorkflow(IncidentWorkflowName, webhookInput())
	require.Equal(t, models.StatusResolved, finalState(t, env).Status)
}

func TestManualStartRefusesASecondPassAndSurfacesTheQuota(t *testing.T) {
	env := newIncidentEnv(t)
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(1, []string{"logs"}, "stack trace", "op@example.com", t0.Add(time.Second))).
		Return(BeginOutput{Agents: []string{"logs"}}, nil).Once()
	env.OnWorkflow(InvestigationWorkflowName, mock.Anything, childIn(1, []string{"logs"})).After(10*time.Minute).
		Return(InvestigationOutcome{Status: models.InvestigationCompleted, IncidentStatus: models.StatusInvestigated}, nil).Once()
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(2, nil, "", "op@example.com", t0.Add(20*time.Minute))).
		Return(BeginOutput{}, temporal.NewNonRetryableApplicationError("quota used up", ErrTypeQuotaExceeded, nil)).Once()

	var first StartInvestigationResult
	var refused, quota error
	start := func(at time.Duration, id string, req StartInvestigationRequest, onDone func(any, error)) {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(UpdateStartInvestigation, id, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { onDone(nil, err) }, OnAccept: func() {}, OnComplete: onDone,
			}, req)
		}, at)
	}
	start(time.Second, "start-1", StartInvestigationRequest{Agents: []string{"logs"}, Context: "stack trace", Actor: "op@example.com"},
		func(v any, err error) {
			require.NoError(t, err)
			first = v.(StartInvestigationResult)
		})
	start(2*time.Second, "start-2", StartInvestigationRequest{Actor: "op@example.com"}, func(_ any, err error) { refused = err })
	start(20*time.Minute, "start-3", StartInvestigationRequest{Actor: "op@example.com"}, func(_ any, err error) { quota = err })
	resolveAt(t, env, 30*time.Minute)

	env.ExecuteWorkflow(IncidentWorkflowName, IncidentInput{TenantID: tenant, IncidentID: incID, Source: models.SourceManual,
		Status: models.StatusOpen, Severity: "medium", Title: "checkout slow", CreatedAt: t0})
	st := finalState(t, env)
	require.Equal(t, StartInvestigationResult{InvestigationID: InvestigationID(incID, 1), Pass: 1}, first)
	require.True(t, temporalx.HasErrorType(refused, ErrTypeInvestigationInProgress), "second start while running: %v", refused)
	require.True(t, temporalx.HasErrorType(quota, ErrTypeQuotaExceeded), "start with no quota: %v", quota)
	require.Equal(t, 1, st.Pass, "a refused start does not use up a pass number")
}

func TestResolveWhileAPassRunsLetsThePassFinish(t *testing.T) {
	env := newIncidentEnv(t)
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(1, nil, "", "op@example.com", t0.Add(time.Second))).
		Return(BeginOutput{Agents: []string{"logs", "metrics"}}, nil).Once()
	env.OnWorkflow(InvestigationWorkflowName, mock.Anything, childIn(1, []string{"logs", "metrics"})).After(10*time.Minute).
		Return(InvestigationOutcome{Status: models.InvestigationCompleted, IncidentStatus: models.StatusResolved}, nil).Once()
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateStartInvestigation, "start-1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, StartInvestigationRequest{Actor: "op@example.com"})
	}, time.Second)
	resolveAt(t, env, time.Minute)

	env.ExecuteWorkflow(IncidentWorkflowName, IncidentInput{TenantID: tenant, IncidentID: incID, Source: models.SourceManual,
		Status: models.StatusOpen, Severity: "medium", Title: "checkout slow", CreatedAt: t0})
	st := finalState(t, env)
	require.Equal(t, models.StatusResolved, st.Status, "the finished pass does not reopen a resolved incident")
	require.GreaterOrEqual(t, env.Now().Sub(t0), 10*time.Minute, "the workflow waited for the pass")
}

// TestStartWaitsForAPassRecordedFinished shows a start that saw the running
// pass recorded as finished waits for it to report back and then starts the
// next pass, while a start without that knowledge is refused at once and one
// whose pass does not report back in time is refused after a bounded wait.
func TestStartWaitsForAPassRecordedFinished(t *testing.T) {
	env := newIncidentEnv(t)
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(1, nil, "", "op@example.com", t0.Add(time.Second))).
		Return(BeginOutput{Agents: []string{"logs"}}, nil).Once()
	env.OnWorkflow(InvestigationWorkflowName, mock.Anything, childIn(1, []string{"logs"})).After(10*time.Minute).
		Return(InvestigationOutcome{Status: models.InvestigationCompleted, IncidentStatus: models.StatusInvestigated}, nil).Once()
	reported := t0.Add(10*time.Minute + time.Second)
	env.OnActivity(NameBeginInvestigation, mock.Anything, beginIn(2, nil, "", "late@example.com", reported)).
		Return(BeginOutput{Agents: []string{"metrics"}}, nil).Once()
	env.OnWorkflow(InvestigationWorkflowName, mock.Anything, childIn(2, []string{"metrics"})).After(time.Minute).
		Return(InvestigationOutcome{Status: models.InvestigationCompleted, IncidentStatus: models.StatusInvestigated}, nil).Once()

	results := map[string]error{}
	var second StartInvestigationResult
	start := func(at time.Duration, id string, req StartInvestigationRequest) {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(UpdateStartInvestigation, id, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { results[id] = err }, OnAccept: func() {},
				OnComplete: func(v any, err error) {
					results[id] = err
					if id == "late" && err == nil {
						second = v.(StartInvestigationResult)
					}
				},
			}, req)
		}, at)
	}
	start(time.Second, "first", StartInvestigationRequest{Actor: "op@example.com"})
	start(time.Minute, "too-early", StartInvestigationRequest{Actor: "early@example.com", FinishedPass: 1})
	start(10*time.Minute-2*time.Second, "late", StartInvestigationRequest{Actor: "late@example.com", FinishedPass: 1})
	start(10*time.Minute-time.Second, "unaware", StartInvestigationRequest{Actor: "other@example.com"})
	resolveAt(t, env, 30*time.Minute)

	env.ExecuteWorkflow(IncidentWorkflowName, IncidentInput{TenantID: tenant, IncidentID: incID, Source: models.SourceManual,
		Status: models.StatusOpen, Severity: "medium", Title: "checkout slow", CreatedAt: t0})
	st := finalState(t, env)
	require.NoError(t, results["first"])
	require.True(t, temporalx.HasErrorType(results["too-early"], ErrTypeInvestigationInProgress), "pass still running past the wait: %v", results["too-early"])
	require.True(t, temporalx.HasErrorType(results["unaware"], ErrTypeInvestigationInProgress), "start without the finished pass: %v", results["unaware"])
	require.NoError(t, results["late"], "a start that saw pass 1 finished waits for it")
	require.Equal(t, StartInvestigationResult{InvestigationID: InvestigationID(incID, 2), Pass: 2}, second)
	require.Equal(t, 2, st.Pass)
}
