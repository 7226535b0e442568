package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/apptest"
	"github.com/causeway/causeway/models"
)

// TestGradeAnAnswerOnTheIncidentPage: the incident page offers the grade
// buttons once a pass has answered; a grade is shown on the page and counted
// on the accuracy page.
func TestGradeAnAnswerOnTheIncidentPage(t *testing.T) {
	srv, a := apptest.Start(t, testConfig(t))
	v := newVisitor(t, srv.URL)
	v.signUp("Acme", "owner@acme.test")
	tok := v.csrf("/ui/incidents")
	loc := v.post("/ui/incidents", url.Values{"csrf": {tok}, "title": {"Checkout slow"}, "description": {"p95 latency of checkout doubled since 14:00"}}).header.Get("Location")
	id := strings.TrimPrefix(strings.Split(loc, "?")[0], "/ui/incidents/")
	if before := v.get("/ui/incidents/" + id); strings.Contains(before.body, `name="verdict"`) {
		t.Fatal("grade buttons before any answer")
	}
	var tenantID string
	if err := a.Store.DB().Model(&models.Incident{}).Where("id = ?", id).Pluck("tenant_id", &tenantID).Error; err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Minute)
	done := started.Add(12 * time.Second)
	if err := a.Store.DB().Create(&models.Investigation{ID: id + "/1", TenantID: tenantID, IncidentID: id, Pass: 1, Status: models.InvestigationCompleted,
		Agents: []string{"metrics"}, Category: "memory_exhaustion", RootCause: "checkout pods ran out of memory", StartedAt: started, CompletedAt: &done}).Error; err != nil {
		t.Fatal(err)
	}

	page := v.get("/ui/incidents/" + id)
	for _, want := range []string{`name="verdict" value="correct"`, `name="verdict" value="partly"`, `name="verdict" value="wrong"`, `name="actualCategory"`} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("incident page lacks %s", want)
		}
	}
	graded := v.post("/ui/incidents/"+id+"/feedback", url.Values{"csrf": {v.csrf("/ui/incidents/" + id)}, "verdict": {"wrong"},
		"actualCategory": {"cpu_saturation"}, "actualCulprit": {"checkout-7d9f8c6b5-x2k4q"}})
	if graded.status != http.StatusSeeOther || !strings.Contains(graded.header.Get("Location"), "notice=graded") {
		t.Fatalf("grade: %d %s", graded.status, graded.header.Get("Location"))
	}
	page = v.get(graded.header.Get("Location"))
	if !strings.Contains(page.body, `data-verdict="wrong"`) || !strings.Contains(page.body, "actually CPU saturation") || !strings.Contains(page.body, "checkout-7d9f8c6b5-x2k4q") {
		t.Fatalf("the grade is not shown: %.2000s", page.body)
	}
	if bad := v.post("/ui/incidents/"+id+"/feedback", url.Values{"csrf": {v.csrf("/ui/incidents/" + id)}, "verdict": {"maybe"}}); bad.status != http.StatusBadRequest ||
		!strings.Contains(bad.body, "verdict must be one of correct, partly, wrong") {
		t.Fatalf("unknown verdict: %d", bad.status)
	}

	acc := v.get("/ui/analytics/accuracy")
	for _, want := range []string{`id="acc-answers">1<`, `id="acc-graded">1<`, `id="acc-correct">0<`, "12.0 s"} {
		if !strings.Contains(acc.body, want) {
			t.Fatalf("accuracy page lacks %s: %.3000s", want, acc.body)
		}
	}
}
