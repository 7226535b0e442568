package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
)

// accuracyFigures mirrors one group of GET /v1/analytics/accuracy.
type accuracyFigures struct {
	Answers   int     `json:"answers"`
	Graded    int     `json:"graded"`
	Correct   int     `json:"correct"`
	Partly    int     `json:"partly"`
	Wrong     int     `json:"wrong"`
	Recovered int     `json:"recoveredAfterRemediation"`
	Median    float64 `json:"medianTimeToAnswer"`
}

type accuracyBody struct {
	Period     string                     `json:"period"`
	Total      accuracyFigures            `json:"total"`
	ByCategory map[string]accuracyFigures `json:"byCategory"`
	ByAgent    map[string]accuracyFigures `json:"byAgent"`
	ByModel    map[string]accuracyFigures `json:"byModel"`
}

// seedAnswer records an incident whose one pass ran from started to
// started+took with the given answer (status running when took is 0).
func seedAnswer(t *testing.T, s *apiServer, tenantID, category, model string, agents []string, started time.Time, took time.Duration) string {
	t.Helper()
	ctx := context.Background()
	inc := &models.Incident{ID: models.NewID("inc"), TenantID: tenantID, Title: "checkout degraded", Description: "checkout is degraded since noon",
		Severity: models.SeverityHigh, Status: models.StatusInvestigated, Source: models.SourceManual, CreatedAt: started, UpdatedAt: started, AlertCount: 1}
	if _, err := s.app.Store.CreateIncident(ctx, inc, models.TimelineEntry{At: started, Kind: "created", Message: "seeded", DedupKey: inc.ID + "/created"}); err != nil {
		t.Fatal(err)
	}
	inv := &models.Investigation{ID: inc.ID + "/1", TenantID: tenantID, IncidentID: inc.ID, Pass: 1, Status: models.InvestigationRunning,
		Agents: agents, Category: category, Model: model, StartedAt: started}
	if took > 0 {
		done := started.Add(took)
		inv.Status, inv.CompletedAt = models.InvestigationCompleted, &done
	}
	if err := s.app.Store.DB().Create(inv).Error; err != nil {
		t.Fatal(err)
	}
	return inc.ID
}

func (s *apiServer) userToken(t *testing.T, owner, email, role string) string {
	t.Helper()
	if st, _ := s.do(t, "POST", "/v1/users", owner, map[string]string{"email": email, "password": "correct horse battery", "name": role, "role": role}, nil); st != http.StatusCreated {
		t.Fatalf("create %s: %d", role, st)
	}
	var tk tokens
	if st, _ := s.do(t, "POST", "/auth/login", "", map[string]string{"email": email, "password": "correct horse battery"}, &tk); st != http.StatusOK {
		t.Fatalf("login %s: %d", role, st)
	}
	return tk.AccessToken
}

// TestFeedbackMovesAccuracy grades seeded answers through the API and checks
// every accuracy figure against values worked out by hand below.
func TestFeedbackMovesAccuracy(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@outcomes.example")
	other := s.signup(t, "owner@other.example")
	operator := s.userToken(t, owner.AccessToken, "op@outcomes.example", models.RoleOperator)
	viewer := s.userToken(t, owner.AccessToken, "viewer@outcomes.example", models.RoleViewer)

	now := time.Now().UTC()
	// Three answers in the period: 10 s, 30 s and 20 s to answer.
	mem1 := seedAnswer(t, s, owner.TenantID, "memory_exhaustion", "", []string{"logs", "metrics"}, now.Add(-2*time.Hour), 10*time.Second)
	deploy := seedAnswer(t, s, owner.TenantID, "bad_deployment", "gpt-4o", []string{"deployments"}, now.Add(-90*time.Minute), 30*time.Second)
	seedAnswer(t, s, owner.TenantID, "memory_exhaustion", "", []string{"metrics"}, now.Add(-time.Hour), 20*time.Second)
	// Not counted: a pass still running, one answered before the period, and
	// another tenant's answer.
	running := seedAnswer(t, s, owner.TenantID, "", "", []string{"metrics"}, now.Add(-time.Minute), 0)
	seedAnswer(t, s, owner.TenantID, "disk_full", "", []string{"infrastructure"}, now.AddDate(0, 0, -40), 5*time.Second)
	foreign := seedAnswer(t, s, other.TenantID, "memory_exhaustion", "", []string{"metrics"}, now.Add(-time.Hour), 7*time.Second)

	grade := func(token, incidentID string, body map[string]any) (int, errorBody) {
		var e errorBody
		st, _ := s.do(t, "POST", "/v1/investigation/"+incidentID+"/feedback", token, body, &e)
		return st, e
	}
	// The owner first says wrong, then correct: only the latest counts.
	if st, _ := grade(owner.AccessToken, mem1, map[string]any{"verdict": "wrong", "actualCategory": "cpu_saturation"}); st != http.StatusOK {
		t.Fatalf("first grade: %d", st)
	}
	var got struct {
		Verdict, InvestigationID, ActualCulprit string
	}
	if st, _ := s.do(t, "POST", "/v1/investigation/"+mem1+"/feedback", owner.AccessToken,
		map[string]any{"verdict": "correct", "actualCulprit": "checkout-7d9f8c6b5-x2k4q", "note": "OOM killed"}, &got); st != http.StatusOK ||
		got.Verdict != "correct" || got.InvestigationID != mem1+"/1" || got.ActualCulprit != "checkout-7d9f8c6b5-x2k4q" {
		t.Fatalf("regrade: %d %+v", st, got)
	}
	if st, _ := grade(operator, mem1, map[string]any{"verdict": "partly"}); st != http.StatusOK {
		t.Fatalf("operator grade: %d", st)
	}
	if st, _ := grade(owner.AccessToken, deploy, map[string]any{"verdict": "wrong", "actualCategory": "config_change"}); st != http.StatusOK {
		t.Fatalf("grade deploy: %d", st)
	}

	// Refusals change nothing.
	for name, c := range map[string]struct {
		token, incident string
		body            map[string]any
		status          int
		code            string
	}{
		"viewer":           {viewer, mem1, map[string]any{"verdict": "wrong"}, http.StatusForbidden, "forbidden"},
		"unknown verdict":  {owner.AccessToken, mem1, map[string]any{"verdict": "maybe"}, http.StatusBadRequest, "validation_error"},
		"missing verdict":  {owner.AccessToken, mem1, map[string]any{}, http.StatusBadRequest, "validation_error"},
		"unknown category": {owner.AccessToken, mem1, map[string]any{"verdict": "wrong", "actualCategory": "gremlins"}, http.StatusBadRequest, "validation_error"},
		"no answer yet":    {owner.AccessToken, running, map[string]any{"verdict": "wrong"}, http.StatusNotFound, "incident_not_found"},
		"other tenant":     {other.AccessToken, mem1, map[string]any{"verdict": "wrong"}, http.StatusNotFound, "incident_not_found"},
		"into other":       {owner.AccessToken, foreign, map[string]any{"verdict": "wrong"}, http.StatusNotFound, "incident_not_found"},
	} {
		if st, e := grade(c.token, c.incident, c.body); st != c.status || e.Error != c.code || e.Message == "" {
			t.Errorf("%s: %d %+v, want %d %s", name, st, e, c.status, c.code)
		}
	}

	// The bad deployment's remediation recovered.
	if err := s.app.Store.SaveVerification(context.Background(), &models.RemediationVerification{RemediationID: "rem_1", TenantID: owner.TenantID,
		IncidentID: deploy, InvestigationID: deploy + "/1", Outcome: models.OutcomeRecovered, VerifiedAt: now}); err != nil {
		t.Fatal(err)
	}

	var acc accuracyBody
	if st, _ := s.do(t, "GET", "/v1/analytics/accuracy", viewer, nil, &acc); st != http.StatusOK {
		t.Fatalf("accuracy: %d", st)
	}
	want := accuracyBody{
		Period: "30d",
		// Grades: mem1 owner correct + operator partly; deploy owner wrong.
		Total: accuracyFigures{Answers: 3, Graded: 2, Correct: 1, Partly: 1, Wrong: 1, Recovered: 1, Median: 20},
		ByCategory: map[string]accuracyFigures{
			"memory_exhaustion": {Answers: 2, Graded: 1, Correct: 1, Partly: 1, Median: 15},
			"bad_deployment":    {Answers: 1, Graded: 1, Wrong: 1, Recovered: 1, Median: 30},
		},
		ByAgent: map[string]accuracyFigures{
			"logs":        {Answers: 1, Graded: 1, Correct: 1, Partly: 1, Median: 10},
			"metrics":     {Answers: 2, Graded: 1, Correct: 1, Partly: 1, Median: 15},
			"deployments": {Answers: 1, Graded: 1, Wrong: 1, Recovered: 1, Median: 30},
		},
		ByModel: map[string]accuracyFigures{
			"offline": {Answers: 2, Graded: 1, Correct: 1, Partly: 1, Median: 15},
			"gpt-4o":  {Answers: 1, Graded: 1, Wrong: 1, Recovered: 1, Median: 30},
		},
	}
	assertAccuracy(t, acc, want)

	// The other tenant sees only its own answer, ungraded.
	var theirs accuracyBody
	if st, _ := s.do(t, "GET", "/v1/analytics/accuracy?period=7d", other.AccessToken, nil, &theirs); st != http.StatusOK {
		t.Fatalf("other accuracy: %d", st)
	}
	assertAccuracy(t, theirs, accuracyBody{Period: "7d", Total: accuracyFigures{Answers: 1, Median: 7},
		ByCategory: map[string]accuracyFigures{"memory_exhaustion": {Answers: 1, Median: 7}},
		ByAgent:    map[string]accuracyFigures{"metrics": {Answers: 1, Median: 7}},
		ByModel:    map[string]accuracyFigures{"offline": {Answers: 1, Median: 7}}})

	var e errorBody
	if st, _ := s.do(t, "GET", "/v1/analytics/accuracy?period=1y", owner.AccessToken, nil, &e); st != http.StatusBadRequest || e.Error != "validation_error" {
		t.Fatalf("bad period: %d %+v", st, e)
	}
}

func assertAccuracy(t *testing.T, got, want accuracyBody) {
	t.Helper()
	if got.Period != want.Period || got.Total != want.Total {
		t.Errorf("period/total: got %s %+v, want %s %+v", got.Period, got.Total, want.Period, want.Total)
	}
	for name, pair := range map[string][2]map[string]accuracyFigures{
		"byCategory": {got.ByCategory, want.ByCategory}, "byAgent": {got.ByAgent, want.ByAgent}, "byModel": {got.ByModel, want.ByModel},
	} {
		if len(pair[0]) != len(pair[1]) {
			t.Errorf("%s: got %v, want %v", name, pair[0], pair[1])
		}
		for k, w := range pair[1] {
			if pair[0][k] != w {
				t.Errorf("%s[%s]: got %+v, want %+v", name, k, pair[0][k], w)
			}
		}
	}
}
