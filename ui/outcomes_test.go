package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
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
		Agents: []string{"metrics"}, Category: "memory_exhaustion", RootCause: "checkout pods ran out of memory", StartedAt: started, CompletedAt: &done,
		Culprit: &analyzer.Culprit{Kind: analyzer.KindDeployment, Name: "checkout", Namespace: "shop"}, Mechanism: "oom_killed",
		Candidates: []analyzer.Candidate{{Culprit: &analyzer.Culprit{Kind: analyzer.KindDeployment, Name: "checkout", Namespace: "shop"}, Category: "memory_exhaustion", Mechanism: "oom_killed", Confidence: 0.8},
			{Culprit: &analyzer.Culprit{Kind: analyzer.KindNode, Name: "worker-2"}, Category: "node_failure", Mechanism: "node_not_ready", Confidence: 0.3}}}).Error; err != nil {
		t.Fatal(err)
	}

	page := v.get("/ui/incidents/" + id)
	// The culprit leads the answer, before the narrative; the candidates follow.
	culprit, narrative := strings.Index(page.body, `id="culprit"><strong>deployment shop/checkout</strong> — <code>oom_killed</code>`), strings.Index(page.body, `id="root-cause"`)
	if culprit < 0 || narrative < culprit || !strings.Contains(page.body, `<td>node worker-2</td><td>Node failure</td><td><code>node_not_ready</code></td><td>30%</td>`) {
		t.Fatalf("the culprit does not lead the answer: %.3000s", page.body[max(0, narrative-1500):])
	}
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
