package replay

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/investigation"
)

// TestExportedAnswersCarryNoCredentials: the log lines a pass read go into
// the exported file as read, but for the credentials they printed.
func TestExportedAnswersCarryNoCredentials(t *testing.T) {
	const line = `2026-12-04T10:00:01Z level=error msg="payment provider refused" authorization="Bearer sk-live-4f9a8b7c6d5e" dsn=postgres://app:pa55word@db-1/orders`
	rec := Recorded{Queries: []RecordedQuery{{
		Query:  datasources.Query{DataSourceID: "ds_1", Source: "loki", Type: "loki", Entry: "errors", Text: `{service_name="checkout"} |= "error"`},
		Output: investigation.QueryOutput{Text: line, Note: "1 of 1 lines; retried with password=hunter22"},
	}}}
	_, answers := rec.Answers(func(string) map[string]any { return nil })
	if len(answers) != 1 {
		t.Fatalf("%d answers", len(answers))
	}
	got := answers[0].Text + "\n" + answers[0].Note
	for _, secret := range []string{"sk-live-4f9a8b7c6d5e", "pa55word", "hunter22"} {
		if strings.Contains(got, secret) {
			t.Errorf("the exported answer keeps %q:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, "payment provider refused") || !strings.Contains(got, "db-1/orders") {
		t.Errorf("the exported answer lost the line itself:\n%s", got)
	}
}
