package ui

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/service"
)

// listView is the incidents page: one page of the list with its filters.
type listView struct {
	Filter     investigation.ListInput
	Items      []models.Incident
	Count      int64
	Next       string // address of the next page, "" on the last
	First      string // address of the first page when not on it
	Statuses   []string
	Severities []string
	PageSizes  []string
	Form       incidentForm
}

// incidentForm keeps what was typed into "Open an incident" when it is refused.
type incidentForm struct {
	Title       string
	Description string
}

var (
	statuses = []string{models.StatusOpen, models.StatusTriaging, models.StatusInvestigating,
		models.StatusInvestigated, models.StatusRemediating, models.StatusResolved}
	severities = []string{models.SeverityCritical, models.SeverityHigh, models.SeverityMedium, models.SeverityLow, models.SeverityInfo}
)

func (d *Dashboard) incidents(c *gin.Context) {
	d.showIncidents(c, http.StatusOK, nil, incidentForm{})
}

// showIncidents renders the list with the filters of the query string; a
// failure of the list itself (a stale cursor) is shown above an empty list.
func (d *Dashboard) showIncidents(c *gin.Context, status int, prob *problem, form incidentForm) {
	in := investigation.ListInput{Limit: c.Query("limit"), Cursor: c.Query("cursor"), Status: c.Query("status"), Severity: c.Query("severity")}
	lv := listView{Filter: in, Statuses: statuses, Severities: severities, PageSizes: []string{"20", "50", "100"}, Form: form}
	page, err := d.o.Incidents.List(c.Request.Context(), principal(c), in)
	if err != nil && prob == nil {
		prob = problemOf(c, err)
		status = prob.Status
	}
	lv.Items, lv.Count = page.Items, page.Count
	q := url.Values{}
	for k, v := range map[string]string{"limit": in.Limit, "status": in.Status, "severity": in.Severity} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if in.Cursor != "" {
		lv.First = Prefix + "/incidents?" + q.Encode()
	}
	if page.Cursor != "" {
		q.Set("cursor", page.Cursor)
		lv.Next = Prefix + "/incidents?" + q.Encode()
	}
	v := d.page(c, "Incidents", "incidents", lv)
	v.Problem = prob
	d.render(c, status, "incidents", v)
}

func (d *Dashboard) createIncident(c *gin.Context) {
	form := incidentForm{Title: c.PostForm("title"), Description: c.PostForm("description")}
	inc, _, err := d.o.Incidents.Create(c.Request.Context(), principal(c), investigation.CreateIncidentInput(form))
	if err != nil {
		prob := problemOf(c, err)
		d.showIncidents(c, prob.Status, prob, form)
		return
	}
	redirectNotice(c, Prefix+"/incidents/"+inc.ID, "created")
}

// incidentView is the incident page. Everything that changes while a person
// watches lives in Live, which the page's script fetches again and again.
type incidentView struct {
	Live *liveIncident
	// Agents are the roles a person may pick for a pass, each with what it reads.
	Agents []analyzer.RoleSpec
	// Categories are the choices of a grade's actual category.
	Categories []string
	// Context keeps the add-context form's text when the request is refused.
	Context string
}

// liveIncident is the live region of the incident page.
type liveIncident struct {
	Incident     *models.Incident
	Timeline     []models.TimelineEntry
	Latest       *passView
	Earlier      []passView
	Remediations []remediation.RemediationView
	// Feedback are the people's grades of the passes, newest first.
	Feedback  []service.FeedbackView
	Workflows []workflowLink
	// Active is true while something is still moving (triage, a pass, an
	// execution): the page then asks again sooner.
	Active bool
	// Summary is one sentence on where the incident stands, announced to
	// screen readers when it changes.
	Summary string
}

// passView is one investigation pass as the page shows it.
type passView struct {
	investigation.PassProgress
	Result   models.InvestigationResult
	Reported int
	Evidence []evidenceGroup
}

// evidenceGroup is the evidence one agent contributed.
type evidenceGroup struct {
	AgentRole string
	Items     []models.Evidence
}

// workflowLink names one of the incident's workflows and where the Temporal
// UI shows it.
type workflowLink struct {
	Label string
	ID    string
	URL   string
}

func (d *Dashboard) incident(c *gin.Context) {
	d.showIncident(c, http.StatusOK, nil, "")
}

func (d *Dashboard) showIncident(c *gin.Context, status int, prob *problem, context string) {
	live, err := d.liveIncident(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	v := d.page(c, live.Incident.Title, "incidents", incidentView{Live: live, Agents: analyzer.RoleTable, Categories: analyzer.Categories, Context: context})
	v.Problem = prob
	d.render(c, status, "incident", v)
}

func (d *Dashboard) incidentLive(c *gin.Context) {
	live, err := d.liveIncident(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.renderFragment(c, "incident", "incident-live", d.page(c, "", "", incidentView{Live: live}))
}

// liveIncident reads the incident, its passes and its remediations through
// the same service calls the API's GET endpoints make.
func (d *Dashboard) liveIncident(c *gin.Context) (*liveIncident, error) {
	ctx, p, id := c.Request.Context(), principal(c), c.Param("id")
	inc, tl, err := d.o.Incidents.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	history, err := d.o.Investigations.History(ctx, p, id)
	if err != nil {
		return nil, err
	}
	rems, err := d.o.Remediations.List(ctx, p, id)
	if err != nil {
		return nil, err
	}
	grades, err := d.o.Outcomes.Feedback(ctx, p, id)
	if err != nil {
		return nil, err
	}
	live := &liveIncident{Incident: inc, Timeline: tl, Feedback: grades}
	for i := range history {
		pv := newPassView(history[i])
		if i == 0 {
			live.Latest = &pv
		} else {
			live.Earlier = append(live.Earlier, pv)
		}
	}
	for i := range rems {
		live.Remediations = append(live.Remediations, rems[i].View())
	}
	live.Workflows = d.workflowLinks(inc, history, rems)
	live.Active = isActive(live)
	live.Summary = summarize(live)
	return live, nil
}

// summarize says in one sentence where the incident stands.
func summarize(l *liveIncident) string {
	running := 0
	for _, r := range l.Remediations {
		if r.Status == remediation.Executing {
			running++
		}
	}
	var s string
	switch p := l.Latest; {
	case l.Incident.Status == models.StatusResolved:
		return "Resolved."
	case p == nil && l.Incident.Status == models.StatusTriaging:
		s = "Triage is running."
	case p == nil:
		s = "Not investigated yet."
	case p.Investigation.Status == models.InvestigationRunning:
		s = fmt.Sprintf("Investigation pass %d is running: %d of %d agents reported.", p.Investigation.Pass, p.Reported, len(p.Agents))
	case p.Investigation.Status == models.InvestigationFailed:
		s = fmt.Sprintf("Investigation pass %d failed.", p.Investigation.Pass)
	default:
		answer := label(p.Investigation.Category)
		if c := p.Investigation.Culprit; c != nil {
			answer = c.String() + " — " + answer
		}
		s = fmt.Sprintf("Investigation pass %d completed: %s, confidence %.0f%%.", p.Investigation.Pass, answer, p.Investigation.Confidence*100)
	}
	if running > 0 {
		s += fmt.Sprintf(" %d remediation(s) executing.", running)
	}
	return s
}

func newPassView(pp investigation.PassProgress) passView {
	pv := passView{PassProgress: pp, Result: pp.Investigation.Result()}
	for _, a := range pp.Agents {
		if a.Status != investigation.AgentRunning {
			pv.Reported++
		}
	}
	index := map[string]int{}
	for _, e := range pv.Result.Evidence {
		i, ok := index[e.AgentRole]
		if !ok {
			i = len(pv.Evidence)
			index[e.AgentRole] = i
			pv.Evidence = append(pv.Evidence, evidenceGroup{AgentRole: e.AgentRole})
		}
		pv.Evidence[i].Items = append(pv.Evidence[i].Items, e)
	}
	return pv
}

// isActive reports whether something is moving right now. An incident stays
// remediating after its remediation ends, so that status alone does not count.
func isActive(l *liveIncident) bool {
	switch l.Incident.Status {
	case models.StatusTriaging, models.StatusInvestigating:
		return true
	}
	if l.Latest != nil && l.Latest.Investigation.Status == models.InvestigationRunning {
		return true
	}
	for _, r := range l.Remediations {
		if r.Status == remediation.Executing {
			return true
		}
	}
	return false
}

// addContext stores supplemental context, or with "investigate again" starts
// a new pass over all context (a pass without new context when the box is
// empty).
func (d *Dashboard) addContext(c *gin.Context) {
	ctx, p, id := c.Request.Context(), principal(c), c.Param("id")
	text, agents := c.PostForm("context"), c.PostFormArray("agents")
	var err error
	notice := "context"
	switch {
	case c.PostForm("action") != "reinvestigate":
		_, err = d.o.Investigations.AddContext(ctx, p, id, investigation.AddContextInput{Context: text})
	case text == "":
		notice = "investigating"
		_, err = d.o.Investigations.Start(ctx, p, id, investigation.StartInvestigationInput{Agents: agents})
	default:
		notice = "reinvestigate"
		_, err = d.o.Investigations.AddContext(ctx, p, id, investigation.AddContextInput{Context: text, Reinvestigate: true, SuggestedAgents: agents})
	}
	if err != nil {
		d.incidentProblem(c, err, text)
		return
	}
	redirectNotice(c, Prefix+"/incidents/"+id, notice)
}

// grade records the signed-in person's grade of the latest answer.
func (d *Dashboard) grade(c *gin.Context) {
	id := c.Param("id")
	in := service.FeedbackInput{Verdict: c.PostForm("verdict"), ActualCategory: c.PostForm("actualCategory"),
		ActualCulprit: c.PostForm("actualCulprit"), Note: c.PostForm("note")}
	if _, err := d.o.Outcomes.Grade(c.Request.Context(), principal(c), id, in); err != nil {
		d.incidentProblem(c, err, "")
		return
	}
	redirectNotice(c, Prefix+"/incidents/"+id, "graded")
}

func (d *Dashboard) resolve(c *gin.Context) {
	id := c.Param("id")
	if _, _, err := d.o.Incidents.Resolve(c.Request.Context(), principal(c), id, c.PostForm("note")); err != nil {
		d.incidentProblem(c, err, "")
		return
	}
	redirectNotice(c, Prefix+"/incidents/"+id, "resolved")
}

// incidentProblem shows the incident page again with why an action was
// refused, keeping what was typed.
func (d *Dashboard) incidentProblem(c *gin.Context, err error, context string) {
	prob := problemOf(c, err)
	if prob.Status == http.StatusNotFound || prob.Status == http.StatusForbidden {
		d.fail(c, err)
		return
	}
	d.showIncident(c, prob.Status, prob, context)
}
