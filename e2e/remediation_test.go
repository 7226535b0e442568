package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// remediationJSON is one item of GET /v1/remediation/{incidentId}.
type remediationJSON struct {
	RemediationID string `json:"remediationId"`
	IncidentID    string `json:"incidentId"`
	RunbookID     string `json:"runbookId"`
	Status        string `json:"status"`
	Description   string `json:"description"`
	PlanHash      string `json:"planHash"`
	Steps         []struct {
		Index    int    `json:"index"`
		Type     string `json:"type"`
		Status   string `json:"status"`
		Error    string `json:"error"`
		Attempts int    `json:"attempts"`
	} `json:"steps"`
	ApprovedBy    string     `json:"approvedBy"`
	ApprovedAt    *time.Time `json:"approvedAt"`
	ExecutedBy    string     `json:"executedBy"`
	ExecutedAt    *time.Time `json:"executedAt"`
	RejectedBy    string     `json:"rejectedBy"`
	RejectReason  string     `json:"rejectReason"`
	CompletedAt   *time.Time `json:"completedAt"`
	FailureReason string     `json:"failureReason"`
}

// userToken creates a user with role in the owner's tenant and signs them in.
func (e *env) userToken(t *testing.T, ownerToken, role string) (token, email string) {
	t.Helper()
	email = fmt.Sprintf("%s-%s@example.com", role, auth.RandomToken(6))
	body := map[string]string{"email": email, "password": "correct horse battery", "name": role, "role": role}
	if st := e.call(t, "POST", "/v1/users", ownerToken, body, nil); st != http.StatusCreated {
		t.Fatalf("create %s: status %d", role, st)
	}
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	if st := e.call(t, "POST", "/auth/login", "", map[string]string{"email": email, "password": "correct horse battery"}, &out); st != http.StatusOK {
		t.Fatalf("login %s: status %d", role, st)
	}
	return out.AccessToken, strings.ToLower(email)
}

// createRunbook stores a runbook that matches every category.
func (e *env) createRunbook(t *testing.T, token, name string, steps ...map[string]any) string {
	t.Helper()
	var out struct {
		RunbookID string `json:"runbookId"`
	}
	body := map[string]any{"name": name, "description": "test runbook", "match": map[string]any{"categories": analyzer.Categories}, "steps": steps}
	if st := e.call(t, "POST", "/v1/runbooks", token, body, &out); st != http.StatusCreated {
		t.Fatalf("create runbook: status %d", st)
	}
	return out.RunbookID
}

// investigatedIncident opens an incident, runs a pass and waits for want
// remediations to be proposed.
func (e *env) investigatedIncident(t *testing.T, token string, want int) (string, []remediationJSON) {
	t.Helper()
	id := e.openIncident(t, token, "Checkout errors", "Checkout API fails with FATAL: too many connections for role app")
	eventually(t, 30*time.Second, "start accepted", func() bool {
		return e.call(t, "POST", "/v1/investigation/"+id+"/start", token, nil, nil) == http.StatusAccepted
	})
	if res := e.awaitInvestigation(t, token, id, time.Minute); res.Status != "completed" {
		t.Fatalf("pass %+v", res)
	}
	return id, e.awaitRemediations(t, token, id, want)
}

func (e *env) awaitRemediations(t *testing.T, token, incidentID string, want int) []remediationJSON {
	t.Helper()
	var out struct {
		Remediations []remediationJSON `json:"remediations"`
	}
	eventually(t, 30*time.Second, "remediations proposed", func() bool {
		out.Remediations = nil
		return e.call(t, "GET", "/v1/remediation/"+incidentID, token, nil, &out) == http.StatusOK && len(out.Remediations) == want
	})
	return out.Remediations
}

func (e *env) remediation(t *testing.T, token, incidentID, remID string) remediationJSON {
	t.Helper()
	var out struct {
		Remediations []remediationJSON `json:"remediations"`
	}
	if st := e.call(t, "GET", "/v1/remediation/"+incidentID, token, nil, &out); st != http.StatusOK {
		t.Fatalf("list remediations: status %d", st)
	}
	for _, r := range out.Remediations {
		if r.RemediationID == remID {
			return r
		}
	}
	t.Fatalf("remediation %s not listed", remID)
	return remediationJSON{}
}

func expectCall(t *testing.T, e *env, what, method, path, token string, body any, wantStatus int, wantCode string) {
	t.Helper()
	var out struct {
		Error string `json:"error"`
	}
	st := e.call(t, method, path, token, body, &out)
	if st != wantStatus || (wantCode != "" && out.Error != wantCode) {
		t.Errorf("%s: %s %s → %d %q, want %d %q", what, method, path, st, out.Error, wantStatus, wantCode)
	}
}

// concurrently sends n identical requests at once and counts the statuses.
func concurrently(t *testing.T, e *env, n int, path, token string) map[int]int {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	counts := map[int]int{}
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st := e.call(t, "POST", path, token, nil, nil)
			mu.Lock()
			counts[st]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

func TestRemediationStateTable(t *testing.T) {
	e := newEnv(t)
	owner, _ := e.signup(t, "Acme")
	admin, adminEmail := e.userToken(t, owner, models.RoleAdmin)
	operator, _ := e.userToken(t, owner, models.RoleOperator)
	viewer, _ := e.userToken(t, owner, models.RoleViewer)
	stranger, _ := e.signup(t, "Other")

	// Runbooks: unknown step types, bad params and bad templates are refused.
	bad := []map[string]any{
		{"type": "shell", "description": "x", "params": map[string]any{"cmd": "rm -rf /"}},
		{"type": "wait", "description": "x", "params": map[string]any{"duration": "forever"}},
		{"type": "http", "description": "x", "params": map[string]any{"url": "http://{{.Service"}},
		{"type": "http", "description": "x", "params": map[string]any{"url": "ftp://example.com/"}},
		{"type": "sql_migration", "description": "x", "params": map[string]any{"target": "nope", "statements": []string{"SELECT 1"}}},
	}
	for _, step := range bad {
		body := map[string]any{"name": "bad", "match": map[string]any{"categories": []string{"bad_deployment"}}, "steps": []any{step}}
		expectCall(t, e, fmt.Sprintf("runbook %v", step), "POST", "/v1/runbooks", owner, body, http.StatusBadRequest, "validation_error")
	}
	expectCall(t, e, "viewer creates runbook", "POST", "/v1/runbooks", viewer, map[string]any{}, http.StatusForbidden, "forbidden")

	wait := map[string]any{"type": "wait", "description": "let it settle for {{.IncidentID}}", "params": map[string]any{"duration": "10ms"}}
	first := e.createRunbook(t, owner, "first", wait, wait)
	e.createRunbook(t, owner, "second", wait)
	incID, rems := e.investigatedIncident(t, owner, 2)
	a, b := rems[0], rems[1]
	if a.RunbookID != first {
		a, b = b, a
	}
	if a.Status != "awaiting_approval" || len(a.Steps) != 2 || a.Steps[0].Status != "pending" || a.PlanHash == "" {
		t.Fatalf("proposal %+v", a)
	}

	approveA, executeA := "/v1/remediation/"+a.RemediationID+"/approve", "/v1/remediation/"+a.RemediationID+"/execute"
	expectCall(t, e, "viewer approves", "POST", approveA, viewer, nil, http.StatusForbidden, "forbidden")
	expectCall(t, e, "operator approves", "POST", approveA, operator, nil, http.StatusForbidden, "forbidden")
	expectCall(t, e, "operator executes", "POST", executeA, operator, nil, http.StatusForbidden, "forbidden")
	expectCall(t, e, "viewer rejects", "POST", "/v1/remediation/"+a.RemediationID+"/reject", viewer, nil, http.StatusForbidden, "forbidden")
	expectCall(t, e, "unknown id", "POST", "/v1/remediation/rem_missing/approve", owner, nil, http.StatusNotFound, "remediation_not_found")
	expectCall(t, e, "unknown id execute", "POST", "/v1/remediation/rem_missing/execute", owner, nil, http.StatusNotFound, "remediation_not_found")
	expectCall(t, e, "other tenant approves", "POST", approveA, stranger, nil, http.StatusNotFound, "remediation_not_found")
	expectCall(t, e, "other tenant lists", "GET", "/v1/remediation/"+incID, stranger, nil, http.StatusNotFound, "incident_not_found")
	expectCall(t, e, "execute before approval", "POST", executeA, owner, nil, http.StatusConflict, "invalid_status")
	expectCall(t, e, "stale plan", "POST", approveA, owner, map[string]string{"planHash": "0000"}, http.StatusConflict, "plan_changed")

	if got := concurrently(t, e, 50, approveA, admin); got[http.StatusOK] != 1 || got[http.StatusConflict] != 49 {
		t.Fatalf("50 concurrent approvals: %v, want one 200 and 49 409", got)
	}
	expectCall(t, e, "approve again", "POST", approveA, owner, nil, http.StatusConflict, "invalid_status")
	expectCall(t, e, "reject approved", "POST", "/v1/remediation/"+a.RemediationID+"/reject", owner, nil, http.StatusConflict, "invalid_status")
	if got := concurrently(t, e, 20, executeA, owner); got[http.StatusOK] != 1 || got[http.StatusConflict] != 19 {
		t.Fatalf("20 concurrent executes: %v, want one 200 and 19 409", got)
	}
	eventually(t, 30*time.Second, "remediation to complete", func() bool { return e.remediation(t, owner, incID, a.RemediationID).Status == "completed" })
	done := e.remediation(t, owner, incID, a.RemediationID)
	if done.ApprovedBy != adminEmail || done.ApprovedAt == nil || done.ExecutedAt == nil || done.CompletedAt == nil {
		t.Errorf("completed remediation %+v", done)
	}
	for _, s := range done.Steps {
		if s.Status != "completed" || s.Attempts != 1 {
			t.Errorf("step %+v: want completed once", s)
		}
	}
	expectCall(t, e, "execute completed", "POST", executeA, owner, nil, http.StatusConflict, "invalid_status")
	var evts int64
	e.Store.DB().Model(&models.OutboxEvent{}).Where("type = ? AND id = ?", "remediation.completed", models.EventID(a.RemediationID, "remediation.completed")).Count(&evts)
	if evts != 1 {
		t.Errorf("remediation.completed events: %d, want 1", evts)
	}

	// Reject B: then nothing else moves it.
	rejectB := "/v1/remediation/" + b.RemediationID + "/reject"
	expectCall(t, e, "reject", "POST", rejectB, owner, map[string]string{"reason": "not during peak"}, http.StatusOK, "")
	expectCall(t, e, "reject again", "POST", rejectB, owner, nil, http.StatusConflict, "invalid_status")
	expectCall(t, e, "approve rejected", "POST", "/v1/remediation/"+b.RemediationID+"/approve", owner, nil, http.StatusConflict, "invalid_status")
	expectCall(t, e, "execute rejected", "POST", "/v1/remediation/"+b.RemediationID+"/execute", owner, nil, http.StatusConflict, "invalid_status")
	if r := e.remediation(t, owner, incID, b.RemediationID); r.Status != "rejected" || r.RejectReason != "not during peak" || r.RejectedBy == "" {
		t.Errorf("rejected remediation %+v", r)
	}

	// The incident shows who did what, and is remediating.
	var inc struct {
		Status   string `json:"status"`
		Timeline []struct{ Kind, Actor string }
	}
	e.call(t, "GET", "/v1/incidents/"+incID, owner, nil, &inc)
	kinds := map[string]string{}
	for _, en := range inc.Timeline {
		kinds[en.Kind] = en.Actor
	}
	if inc.Status != "remediating" || kinds["remediation_approved"] != adminEmail || kinds["remediation_executing"] == "" ||
		kinds["remediation_completed"] == "" || kinds["remediation_rejected"] == "" || kinds["remediation_proposed"] == "" {
		t.Errorf("incident %s, timeline %v", inc.Status, kinds)
	}
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, remediation.WorkflowID(a.RemediationID), "remediation.json")
	}
}
