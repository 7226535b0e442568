package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/investigation"
)

type incidentBody struct {
	IncidentID              string `json:"incidentId"`
	Title                   string `json:"title"`
	Severity                string `json:"severity"`
	Status                  string `json:"status"`
	Source                  string `json:"source"`
	InvestigationsRemaining int    `json:"investigationsRemaining"`
	EventsRemaining         int    `json:"eventsRemaining"`
	ResolvedAt              *time.Time
	Timeline                []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Actor   string `json:"actor"`
	} `json:"timeline"`
}

type pageBody struct {
	Items  []incidentBody `json:"items"`
	Cursor *string        `json:"cursor"`
	Count  int            `json:"count"`
}

func createIncident(t *testing.T, e *env, token, title string) incidentBody {
	t.Helper()
	var inc incidentBody
	st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{
		"title": title, "description": "checkout p99 latency above 2s for ten minutes",
	}, &inc)
	if st != http.StatusCreated {
		t.Fatalf("create incident: status %d", st)
	}
	return inc
}

// The walking skeleton: sign-up → login → create → listed → workflow exists and
// answers queries → resolve → the timeline shows it.
func TestIncidentLifecycle(t *testing.T) {
	e := newEnv(t)
	_, _ = e.signup(t, "Acme")

	var login struct {
		AccessToken string `json:"accessToken"`
	}
	email := strings.ToLower(fmt.Sprintf("ops-%s@example.com", auth.RandomToken(4)))
	var su struct {
		AccessToken string `json:"accessToken"`
	}
	if st := e.call(t, "POST", "/auth/signup", "", map[string]string{
		"tenantName": "Globex", "email": email, "password": "correct horse battery", "name": "Ops",
	}, &su); st != http.StatusCreated {
		t.Fatalf("signup %d", st)
	}
	if st := e.call(t, "POST", "/auth/login", "", map[string]string{"email": email, "password": "correct horse battery"}, &login); st != http.StatusOK {
		t.Fatalf("login %d", st)
	}
	token := login.AccessToken

	inc := createIncident(t, e, token, "Checkout latency")
	if inc.Status != "open" || inc.Severity != "medium" || inc.Source != "manual" || inc.IncidentID == "" {
		t.Fatalf("created incident = %+v", inc)
	}
	if inc.EventsRemaining != 9999 || inc.InvestigationsRemaining != 1000 {
		t.Fatalf("remaining = %d events, %d investigations", inc.EventsRemaining, inc.InvestigationsRemaining)
	}

	var page pageBody
	if st := e.call(t, "GET", "/v1/incidents", token, nil, &page); st != http.StatusOK || page.Count != 1 || page.Items[0].IncidentID != inc.IncidentID {
		t.Fatalf("list: status %d, page %+v", st, page)
	}

	ctx := context.Background()
	wfID := investigation.IncidentWorkflowID(inc.IncidentID)
	desc, err := e.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		t.Fatalf("describe %s: %v", wfID, err)
	}
	if desc.WorkflowExecutionInfo.Status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("workflow status = %v", desc.WorkflowExecutionInfo.Status)
	}
	q, err := e.Temporal.QueryWorkflow(ctx, wfID, "", investigation.QueryState)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	var state investigation.IncidentState
	if err := q.Get(&state); err != nil || state.Status != "open" || state.IncidentID != inc.IncidentID {
		t.Fatalf("query state = %+v, %v", state, err)
	}

	// The workflow writes its "workflow_started" entry with an activity that
	// may still be in flight when the query above answers.
	eventually(t, 10*time.Second, "workflow_started in the timeline", func() bool {
		var got incidentBody
		e.call(t, "GET", "/v1/incidents/"+inc.IncidentID, token, nil, &got)
		for _, en := range got.Timeline {
			if en.Kind == "workflow_started" {
				return true
			}
		}
		return false
	})

	var resolved incidentBody
	if st := e.call(t, "POST", "/v1/incidents/"+inc.IncidentID+"/resolve", token, map[string]string{"note": "rolled back"}, &resolved); st != http.StatusOK {
		t.Fatalf("resolve: status %d", st)
	}
	if resolved.Status != "resolved" {
		t.Fatalf("resolved status = %q", resolved.Status)
	}
	kinds := map[string]string{}
	for _, en := range resolved.Timeline {
		kinds[en.Kind] = en.Message
	}
	if kinds["created"] == "" || kinds["workflow_started"] == "" || kinds["resolved"] != "Resolved by "+email+": rolled back" {
		t.Fatalf("timeline = %+v", resolved.Timeline)
	}

	// Resolving twice is refused, and the workflow has finished its job.
	var errBody map[string]any
	if st := e.call(t, "POST", "/v1/incidents/"+inc.IncidentID+"/resolve", token, nil, &errBody); st != http.StatusConflict || errBody["error"] != "invalid_status" {
		t.Fatalf("second resolve: %d %v", st, errBody)
	}
	eventually(t, 10*time.Second, "workflow completion", func() bool {
		d, err := e.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
		return err == nil && d.WorkflowExecutionInfo.Status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
}

func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	tokenA, _ := e.signup(t, "A")
	tokenB, _ := e.signup(t, "B")
	inc := createIncident(t, e, tokenA, "Only A sees this")

	var body map[string]any
	for _, path := range []string{"/v1/incidents/" + inc.IncidentID} {
		if st := e.call(t, "GET", path, tokenB, nil, &body); st != http.StatusNotFound || body["error"] != "incident_not_found" {
			t.Fatalf("GET %s as B: %d %v", path, st, body)
		}
	}
	if st := e.call(t, "POST", "/v1/incidents/"+inc.IncidentID+"/resolve", tokenB, nil, &body); st != http.StatusNotFound {
		t.Fatalf("resolve as B: %d", st)
	}
	var page pageBody
	if st := e.call(t, "GET", "/v1/incidents", tokenB, nil, &page); st != http.StatusOK || page.Count != 0 || len(page.Items) != 0 {
		t.Fatalf("B's list: %d %+v", st, page)
	}
	// A's incident is untouched by B's attempts.
	var got incidentBody
	if st := e.call(t, "GET", "/v1/incidents/"+inc.IncidentID, tokenA, nil, &got); st != http.StatusOK || got.Status != "open" {
		t.Fatalf("A's incident: %d %+v", st, got)
	}
}

// 250 incidents are each visited exactly once, at the maximum page size and at
// the default; a tampered or expired cursor is refused.
func TestPagination(t *testing.T) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "Pager")
	want := map[string]bool{}
	for i := range 250 {
		want[createIncident(t, e, token, fmt.Sprintf("incident %03d", i)).IncidentID] = true
	}

	walk := func(limit string) (pages int) {
		seen := map[string]bool{}
		cursor := ""
		for {
			q := url.Values{}
			if limit != "" {
				q.Set("limit", limit)
			}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			var page pageBody
			if st := e.call(t, "GET", "/v1/incidents?"+q.Encode(), token, nil, &page); st != http.StatusOK {
				t.Fatalf("page %d (limit %q): status %d", pages, limit, st)
			}
			pages++
			if page.Count != 250 {
				t.Fatalf("count = %d", page.Count)
			}
			for _, it := range page.Items {
				if seen[it.IncidentID] {
					t.Fatalf("incident %s seen twice", it.IncidentID)
				}
				seen[it.IncidentID] = true
			}
			if page.Cursor == nil {
				break
			}
			cursor = *page.Cursor
		}
		if len(seen) != len(want) {
			t.Fatalf("limit %q: saw %d incidents, want %d", limit, len(seen), len(want))
		}
		return pages
	}
	if n := walk("100"); n != 3 {
		t.Fatalf("limit 100: %d pages", n)
	}
	if n := walk(""); n != 13 {
		t.Fatalf("default limit: %d pages", n)
	}

	var first pageBody
	e.call(t, "GET", "/v1/incidents?limit=100", token, nil, &first)
	good := *first.Cursor
	expired, err := auth.NewSigner(e.Config.AuthJWTSecret, "cursor").Seal(map[string]string{"a": first.Items[99].IncidentID, "t": tenantID, "q": "|"}, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"tampered":       good[:len(good)-2] + "xx",
		"garbage":        "not-a-cursor",
		"expired":        expired,
		"other filters":  good + "&status=open",
		"limit too big":  good + "&limit=101",
		"limit not int":  good + "&limit=ten",
		"bad status":     good + "&status=sleeping",
		"bad severity":   good + "&severity=urgent",
		"limit zero":     good + "&limit=0",
		"negative limit": good + "&limit=-5",
	}
	for name, c := range bad {
		var body map[string]any
		if st := e.call(t, "GET", "/v1/incidents?cursor="+c, token, nil, &body); st != http.StatusBadRequest || body["error"] != "validation_error" || body["message"] == "" {
			t.Errorf("%s: status %d body %v", name, st, body)
		}
	}
}

// A crash (or a Temporal outage) between committing an incident and starting its
// workflow cannot orphan it: the incident is answered as created, stays queued in
// the database, and the dispatcher of any worker starts its workflow later.
func TestIncidentSurvivesMissingWorkflowStart(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()

	// An API whose Temporal is unreachable: the database write succeeds, the
	// workflow start cannot happen — the same state a crash right after the
	// commit leaves behind.
	down, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := down.Store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(down.Router())
	defer srv.Close()
	defer down.Close()
	e0 := &env{URL: srv.URL, Store: down.Store, Config: cfg}
	token, tenantID := e0.signup(t, "Outage")
	inc := createIncident(t, e0, token, "Created while Temporal is away")

	row, err := down.Store.GetIncident(ctx, tenantID, inc.IncidentID)
	if err != nil || row.WorkflowStartedAt != nil {
		t.Fatalf("row = %+v, %v; want recorded with no workflow yet", row, err)
	}

	// A worker comes up (same database, real Temporal): its dispatcher finds the
	// incident and starts the workflow, which records itself in the timeline.
	e := newEnvWith(t, cfg)
	wfID := investigation.IncidentWorkflowID(inc.IncidentID)
	eventually(t, 15*time.Second, "the dispatcher to start the workflow", func() bool {
		_, err := e.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			t.Fatalf("describe: %v", err)
		}
		return err == nil
	})
	eventually(t, 10*time.Second, "the workflow's timeline entry", func() bool {
		var got incidentBody
		e.call(t, "GET", "/v1/incidents/"+inc.IncidentID, token, nil, &got)
		for _, en := range got.Timeline {
			if en.Kind == "workflow_started" {
				return true
			}
		}
		return false
	})
	row, _ = e.Store.GetIncident(ctx, tenantID, inc.IncidentID)
	if row.WorkflowStartedAt == nil {
		t.Fatal("incident not marked as having its workflow")
	}
	// A second sweep finds nothing to do and starts nothing twice.
	if n, err := e.App.Dispatcher().Sweep(ctx, 0); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v)", n, err)
	}
}

func TestEventQuota(t *testing.T) {
	cfg := testConfig(t)
	cfg.QuotaEventsPerMonth = 2
	e := newEnvWith(t, cfg)
	token, _ := e.signup(t, "Small plan")
	if inc := createIncident(t, e, token, "one"); inc.EventsRemaining != 1 {
		t.Fatalf("remaining after first = %d", inc.EventsRemaining)
	}
	if inc := createIncident(t, e, token, "two"); inc.EventsRemaining != 0 {
		t.Fatalf("remaining after second = %d", inc.EventsRemaining)
	}
	var body map[string]any
	st := e.call(t, "POST", "/v1/incidents/chat", token, map[string]string{"title": "three", "description": "one too many for this plan"}, &body)
	if st != http.StatusTooManyRequests || body["error"] != "event_quota_exceeded" {
		t.Fatalf("third: %d %v", st, body)
	}
	var page pageBody
	if e.call(t, "GET", "/v1/incidents", token, nil, &page); page.Count != 2 {
		t.Fatalf("refused request changed state: %d incidents", page.Count)
	}
}

func TestHealthDetailed(t *testing.T) {
	e := newEnv(t)
	var rep struct {
		Status   string `json:"status"`
		Services map[string]struct {
			Status    string `json:"status"`
			LatencyMs *int   `json:"latencyMs"`
		} `json:"services"`
	}
	if st := e.call(t, "GET", "/health/detailed", "", nil, &rep); st != http.StatusOK {
		t.Fatalf("status %d", st)
	}
	if rep.Status != "healthy" {
		t.Fatalf("overall %q: %+v", rep.Status, rep.Services)
	}
	for _, k := range []string{e.Store.Dialect(), "memory", "temporal"} {
		if s, ok := rep.Services[k]; !ok || s.Status != "healthy" || s.LatencyMs == nil {
			t.Fatalf("service %s = %+v (all: %+v)", k, s, rep.Services)
		}
	}
}
