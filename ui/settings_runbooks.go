package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// runbooksView is the runbooks section: the catalogue and the JSON editor that
// adds to it.
type runbooksView struct {
	Runbooks []remediation.Runbook
	JSON     string
	// Categories are the root-cause categories a runbook may match.
	Categories []string
}

// runbookExample is what the editor starts with: a valid runbook that shows
// the template fields a step may use.
const runbookExample = `{
  "name": "Restart the connection pool",
  "description": "Recycle the service's database connections",
  "match": {"categories": ["db_connection_exhaustion"]},
  "steps": [
    {"type": "http", "description": "Ask the service to recycle its pool",
     "params": {"method": "POST", "url": "https://ops.example.com/services/{{.Service}}/pool/recycle", "expectStatus": 200}},
    {"type": "verification", "description": "The service answers again",
     "params": {"url": "https://ops.example.com/services/{{.Service}}/health", "expectStatus": 200, "retries": 3}}
  ]
}`

func runbookRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.runbooks)
	g.POST("", d.allow(models.Managers...), d.createRunbook)
	g.POST("/:id/delete", d.allow(models.Managers...), d.deleteRunbook)
}

func (d *Dashboard) runbooks(c *gin.Context) {
	d.showRunbooks(c, http.StatusOK, runbookExample, nil)
}

func (d *Dashboard) showRunbooks(c *gin.Context, status int, text string, prob *problem) {
	books, err := d.o.Remediations.ListRunbooks(c.Request.Context(), principal(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	for i := range books {
		for j := range books[i].Steps {
			books[i].Steps[j].Params = models.RedactParams(books[i].Steps[j].Params)
		}
	}
	d.settingsPage(c, status, "runbooks", "Runbooks", runbooksView{Runbooks: books, JSON: text, Categories: analyzer.Categories}, prob)
}

// createRunbook reads the editor's JSON exactly as the API reads a body, then
// hands it to the same validation; a refusal is shown beside the editor with
// the text kept as typed.
func (d *Dashboard) createRunbook(c *gin.Context) {
	text := c.PostForm("runbook")
	var in remediation.RunbookInput
	err := decodeJSON(text, &in)
	if err == nil {
		_, err = d.o.Remediations.CreateRunbook(c.Request.Context(), principal(c), in)
	}
	if err != nil {
		prob := problemOf(c, err)
		d.showRunbooks(c, prob.Status, text, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/runbooks", "runbook")
}

// decodeJSON decodes one JSON object, saying where a syntax error is (line and
// column), since the text was typed by hand.
func decodeJSON(text string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	err := dec.Decode(v)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil && dec.More():
		return errcode.New(errcode.Validation, "the runbook must be one JSON object; there is more text after it")
	case err == nil:
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		line, col := position(text, int64(len(text))+1)
		return errcode.New(errcode.Validation, "the JSON ends early at line %d, column %d: a brace, bracket or string is not closed", line, col)
	case errors.As(err, &syntax):
		line, col := position(text, syntax.Offset)
		return errcode.New(errcode.Validation, "JSON syntax error at line %d, column %d: %v", line, col, syntax)
	case errors.As(err, &typ) && typ.Field != "":
		return errcode.New(errcode.Validation, "field %s must be of type %s", typ.Field, typ.Type)
	}
	return errcode.New(errcode.Validation, "the runbook must be a JSON object: %v", err)
}

// position turns a byte offset into a 1-based line and column.
func position(text string, offset int64) (line, col int) {
	line, col = 1, 1
	for i, r := range text {
		if int64(i) >= offset-1 {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (d *Dashboard) deleteRunbook(c *gin.Context) {
	if err := d.o.Remediations.DeleteRunbook(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		d.fail(c, err)
		return
	}
	redirectNotice(c, Prefix+"/settings/runbooks", "deleted")
}
