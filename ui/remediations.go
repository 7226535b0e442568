package ui

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/remediation"
)

// decision is one of the three moves on a remediation, each confirmed on its
// own page that shows the rendered steps it applies to.
type decision struct {
	Name   string // path segment: approve, reject, execute
	Title  string
	Button string
	// Want is the status the move needs; Notice the confirmation shown after.
	Want   string
	Notice string
	// Explain says in a sentence what the move does, on the confirmation page.
	Explain string
}

var decisions = []decision{
	{Name: "approve", Title: "Approve remediation", Button: "Approve these steps", Want: remediation.AwaitingApproval, Notice: "approved",
		Explain: "Approving binds your approval to exactly the steps below (their plan hash). Nothing runs until someone executes it."},
	{Name: "reject", Title: "Reject remediation", Button: "Reject remediation", Want: remediation.AwaitingApproval, Notice: "rejected",
		Explain: "Rejecting closes this proposal; its steps will never run. Say why, so the team knows."},
	{Name: "execute", Title: "Execute remediation", Button: "Execute these steps now", Want: remediation.Approved, Notice: "executing",
		Explain: "Executing runs the approved steps below in order, now. A failed step stops the run; later steps stay pending."},
}

// remediationView is the remediation page and its confirmations.
type remediationView struct {
	Rem remediation.RemediationView
	// Decision is set on a confirmation page.
	Decision *decision
	// Reason keeps a typed rejection reason when the request is refused.
	Reason string
	// Active is true while the steps are running.
	Active bool
}

func (d *Dashboard) loadRemediation(c *gin.Context) (*remediationView, error) {
	rem, err := d.o.Remediations.Get(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return nil, err
	}
	v := rem.View()
	return &remediationView{Rem: v, Active: v.Status == remediation.Executing}, nil
}

func (d *Dashboard) remediation(c *gin.Context) {
	rv, err := d.loadRemediation(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.render(c, http.StatusOK, "remediation", d.page(c, "Remediation", "incidents", rv))
}

func (d *Dashboard) remediationLive(c *gin.Context) {
	rv, err := d.loadRemediation(c)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.renderFragment(c, "remediation", "remediation-live", d.page(c, "", "", rv))
}

// confirmDecision shows exactly the steps a decision applies to. When the
// remediation has already moved on, the page says so instead of offering the
// button.
func (d *Dashboard) confirmDecision(a decision) gin.HandlerFunc {
	return func(c *gin.Context) {
		rv, err := d.loadRemediation(c)
		if err != nil {
			d.fail(c, err)
			return
		}
		rv.Decision = &a
		v := d.page(c, a.Title, "incidents", rv)
		status := http.StatusOK
		if rv.Rem.Status != a.Want {
			status = http.StatusConflict
			v.Problem = &problem{Status: status, Code: errcode.InvalidStatus, Message: explainStatus(rv.Rem, a)}
		}
		d.render(c, status, "confirm", v)
	}
}

// decide sends the decision through the service, exactly as the API's approve,
// reject and execute endpoints do. An approval names the plan hash of the page
// the approver confirmed, so a plan that changed since is refused.
func (d *Dashboard) decide(a decision) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, p, id := c.Request.Context(), principal(c), c.Param("id")
		var err error
		switch a.Name {
		case "approve":
			if c.PostForm("planHash") == "" {
				err = errcode.New(errcode.Validation, "the approval does not name the plan you reviewed; open the confirmation page again")
			} else {
				err = d.o.Remediations.Approve(ctx, p, id, remediation.ApproveInput{PlanHash: c.PostForm("planHash")})
			}
		case "reject":
			err = d.o.Remediations.Reject(ctx, p, id, remediation.RejectInput{Reason: c.PostForm("reason")})
		case "execute":
			err = d.o.Remediations.Execute(ctx, p, id)
		}
		if err != nil {
			d.decisionProblem(c, a, err)
			return
		}
		redirectNotice(c, Prefix+"/remediations/"+id, a.Notice)
	}
}

// decisionProblem shows the confirmation page again with why the decision was
// refused; a conflict is told in words from the remediation's current state
// ("already approved by …").
func (d *Dashboard) decisionProblem(c *gin.Context, a decision, err error) {
	prob := problemOf(c, err)
	rv, lerr := d.loadRemediation(c)
	if lerr != nil {
		d.fail(c, err)
		return
	}
	switch prob.Code {
	case errcode.InvalidStatus:
		prob.Message = explainStatus(rv.Rem, a)
	case errcode.PlanChanged:
		prob.Message = "The steps changed after you reviewed them. Review the steps below again before approving."
	}
	rv.Decision, rv.Reason = &a, c.PostForm("reason")
	v := d.page(c, a.Title, "incidents", rv)
	v.Problem = prob
	d.render(c, prob.Status, "confirm", v)
}

// explainStatus says why a remediation in its current state cannot take the
// decision: who already decided, and when.
func explainStatus(r remediation.RemediationView, a decision) string {
	switch r.Status {
	case remediation.AwaitingApproval:
		return "This remediation is not approved yet; it must be approved before it can be executed."
	case remediation.Approved:
		return fmt.Sprintf("Already approved by %s%s. It can now be executed.", r.ApprovedBy, at(r.ApprovedAt))
	case remediation.Rejected:
		if r.RejectedBy == expiryActor {
			return fmt.Sprintf("This remediation expired%s: %s", at(r.RejectedAt), r.RejectReason)
		}
		msg := fmt.Sprintf("Already rejected by %s%s", r.RejectedBy, at(r.RejectedAt))
		if r.RejectReason != "" {
			msg += ": " + r.RejectReason
		}
		return msg + "."
	case remediation.Executing:
		return fmt.Sprintf("Already executed by %s%s; its steps are running.", r.ExecutedBy, at(r.ExecutedAt))
	case remediation.Completed:
		return fmt.Sprintf("Already executed by %s%s; it completed.", r.ExecutedBy, at(r.ExecutedAt))
	case remediation.Failed:
		return fmt.Sprintf("Already executed by %s%s; it failed: %s", r.ExecutedBy, at(r.ExecutedAt), r.FailureReason)
	}
	return fmt.Sprintf("This remediation is %s; to %s it, it must be %s.", label(r.Status), a.Name, label(a.Want))
}

// expiryActor is who the remediation workflow records when a proposal or an
// approval expires unanswered.
const expiryActor = "causeway"

func at(t *time.Time) string {
	if t == nil {
		return ""
	}
	return " at " + t.UTC().Format("2006-01-02 15:04 UTC")
}
