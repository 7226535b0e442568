package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// runbookJSON is a runbook as the API shows it.
type runbookJSON struct {
	RunbookID   string                    `json:"runbookId"`
	Name        string                    `json:"name"`
	Description string                    `json:"description"`
	Match       remediation.RunbookMatch  `json:"match"`
	Steps       []remediation.RunbookStep `json:"steps"`
	CreatedAt   time.Time                 `json:"createdAt"`
}

// toRunbook shows step params through models.RedactParams: every role may list
// runbooks, but only the admins who wrote them should see their credentials.
func toRunbook(r *remediation.Runbook) runbookJSON {
	steps := make([]remediation.RunbookStep, len(r.Steps))
	for i, s := range r.Steps {
		steps[i] = remediation.RunbookStep{Type: s.Type, Description: s.Description, Params: models.RedactParams(s.Params)}
	}
	return runbookJSON{RunbookID: r.ID, Name: r.Name, Description: r.Description, Match: r.Match, Steps: steps, CreatedAt: r.CreatedAt.UTC()}
}

func (h *handlers) createRunbook(c *gin.Context) {
	var in remediation.RunbookInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	rb, err := h.Remediations.CreateRunbook(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, toRunbook(rb))
}

func (h *handlers) listRunbooks(c *gin.Context) {
	books, err := h.Remediations.ListRunbooks(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]runbookJSON, len(books))
	for i := range books {
		out[i] = toRunbook(&books[i])
	}
	c.JSON(http.StatusOK, gin.H{"runbooks": out})
}

func (h *handlers) deleteRunbook(c *gin.Context) {
	if err := h.Remediations.DeleteRunbook(c.Request.Context(), caller(c), c.Param("runbookId")); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"runbookId": c.Param("runbookId"), "status": "deleted"})
}

func (h *handlers) listRemediations(c *gin.Context) {
	rems, err := h.Remediations.List(c.Request.Context(), caller(c), c.Param("incidentId"))
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]remediation.RemediationView, len(rems))
	for i := range rems {
		out[i] = rems[i].View()
	}
	c.JSON(http.StatusOK, gin.H{"remediations": out})
}

func (h *handlers) approveRemediation(c *gin.Context) {
	var in remediation.ApproveInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	if err := h.Remediations.Approve(c.Request.Context(), caller(c), c.Param("remediationId"), in); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"remediationId": c.Param("remediationId"), "status": remediation.Approved})
}

func (h *handlers) rejectRemediation(c *gin.Context) {
	var in remediation.RejectInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	if err := h.Remediations.Reject(c.Request.Context(), caller(c), c.Param("remediationId"), in); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"remediationId": c.Param("remediationId"), "status": remediation.Rejected})
}

func (h *handlers) executeRemediation(c *gin.Context) {
	if err := h.Remediations.Execute(c.Request.Context(), caller(c), c.Param("remediationId")); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"remediationId": c.Param("remediationId"), "status": remediation.Executing})
}
