package investigation

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/temporalx"
)

// TestReinvestigationWithNewContextChangesTheAnswer runs the real activities and
// the offline analyzer against an in-memory database: the alert alone is too thin
// for an answer, the pasted pool errors are decisive.
func TestReinvestigationWithNewContextChangesTheAnswer(t *testing.T) {
	ctx := context.Background()
	store, err := models.Open(ctx, "", ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	require.NoError(t, store.Migrate(ctx))
	require.NoError(t, store.DB().Create(&models.Tenant{ID: tenant, Name: "Acme", QuotaEvents: 10, QuotaInvestigations: 2, CreatedAt: t0}).Error)
	inc := &models.Incident{ID: incID, TenantID: tenant, Title: "Checkout API errors elevated",
		Description: "Error rate on the checkout service is above 5% for 10 minutes.", Severity: "high",
		Status: models.StatusOpen, Source: models.SourceManual, Service: "checkout", CreatedAt: t0, UpdatedAt: t0}
	_, err = store.CreateIncident(ctx, inc, models.TimelineEntry{At: t0, Kind: "created", Message: "opened", Actor: "op", DedupKey: incID + "/created"})
	require.NoError(t, err)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(t0)
	Register(env, &Activities{Store: store, Passes: NewStore(store.DB())})
	remediation.Register(env, &remediation.Activities{Kernel: store, Store: remediation.NewStore(store.DB())})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: incWF})

	results := map[string]error{}
	start := func(at time.Duration, id string, req StartInvestigationRequest) {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(UpdateStartInvestigation, id, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { results[id] = err }, OnAccept: func() {},
				OnComplete: func(_ any, err error) { results[id] = err },
			}, req)
		}, at)
	}
	start(time.Second, "first", StartInvestigationRequest{Actor: "op@example.com"})
	start(time.Minute, "second", StartInvestigationRequest{Actor: "op@example.com",
		Context: "FATAL: remaining connection slots are reserved for non-replication superuser connections\n" +
			"HikariPool-1 - Connection is not available, request timed out after 30000ms (active=50, idle=0, waiting=212)"})
	start(2*time.Minute, "third", StartInvestigationRequest{Actor: "op@example.com"})
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateResolve, "resolve", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("resolve rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, ResolveRequest{Actor: "op@example.com"})
	}, 3*time.Minute)

	env.ExecuteWorkflow(IncidentWorkflowName, IncidentInput{TenantID: tenant, IncidentID: incID, Source: models.SourceManual,
		Status: models.StatusOpen, Severity: "high", Title: inc.Title, CreatedAt: t0})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, results["first"])
	require.NoError(t, results["second"])
	require.True(t, temporalx.HasErrorType(results["third"], ErrTypeQuotaExceeded), "quota of 2: %v", results["third"])

	first, err := store.GetInvestigation(ctx, tenant, InvestigationID(incID, 1))
	require.NoError(t, err)
	second, err := store.LatestInvestigation(ctx, tenant, incID)
	require.NoError(t, err)
	require.Equal(t, 2, second.Pass)
	require.Equal(t, models.InvestigationCompleted, first.Status)
	require.Equal(t, "unknown", first.Category)
	require.Equal(t, models.InvestigationCompleted, second.Status)
	require.Equal(t, "db_connection_exhaustion", second.Category)
	require.Greater(t, second.Confidence, first.Confidence)
	require.Len(t, second.Context, 1)
	require.Equal(t, OfflineModel, second.Model)
	for _, c := range second.Coverage {
		require.Equal(t, models.CoverageCompleted, c.Status, c.AgentRole)
	}

	var events []models.OutboxEvent
	require.NoError(t, store.DB().Order("created_at").Find(&events).Error)
	require.Len(t, events, 2, "one investigation.completed per pass")
	require.Equal(t, models.EventID(second.ID, models.EventInvestigationCompleted), events[1].ID)

	got, err := store.GetIncident(ctx, tenant, incID)
	require.NoError(t, err)
	require.Equal(t, models.StatusResolved, got.Status)
	tl, err := store.Timeline(ctx, tenant, incID)
	require.NoError(t, err)
	var kinds []string
	for _, e := range tl {
		kinds = append(kinds, e.Kind)
	}
	require.Equal(t, []string{"created", "workflow_started", "investigation_started", "investigation_completed",
		"investigation_started", "investigation_completed", "resolved"}, kinds)
}
