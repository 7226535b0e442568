package remediation

import (
	"context"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
)

// TestPassRemediationsReadsOnePass shows a proposal reads back only its own
// pass's remediations, with their plan hash and step types, even when the
// incident has remediations from earlier passes.
func TestPassRemediationsReadsOnePass(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t)
	at := time.Now().UTC()
	for i, inv := range []string{"inv_old", "inv_new", "inv_new"} {
		id := RemediationID(inv, []string{"rb_a", "rb_a", "rb_b"}[i])
		steps := []RemediationStep{
			{RemediationID: id, Index: 0, Type: "http", Params: map[string]any{"url": "https://x/"}, Status: StepPending},
			{RemediationID: id, Index: 1, Type: "wait", Params: map[string]any{"duration": "1s"}, Status: StepPending},
		}
		r := Remediation{ID: id, TenantID: "ten_1", IncidentID: "inc_1", InvestigationID: inv, RunbookID: "rb",
			Status: AwaitingApproval, PlanHash: PlanHash(steps), CreatedAt: at.Add(time.Duration(i) * time.Second), Steps: steps}
		e := models.TimelineEntry{TenantID: "ten_1", IncidentID: "inc_1", At: at, Kind: "remediation_proposed", Message: "m", Actor: "causeway", DedupKey: "remediation/" + id}
		if err := NewStore(s.DB()).ProposeRemediations(ctx, []Remediation{r}, []models.TimelineEntry{e}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := NewStore(s.DB()).PassRemediations(ctx, "ten_1", "inc_1", "inv_new")
	if err != nil || len(got) != 2 {
		t.Fatalf("pass remediations: %d, %v", len(got), err)
	}
	for i, r := range got {
		if r.ID != RemediationID("inv_new", []string{"rb_a", "rb_b"}[i]) || r.PlanHash == "" ||
			len(r.Steps) != 2 || r.Steps[0].Type != "http" || r.Steps[1].Index != 1 || r.Steps[0].Params != nil {
			t.Fatalf("remediation %d: %+v", i, r)
		}
	}
}
