package models

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestInvestigationResultByStatus pins what clients see of a pass in each status:
// nothing of a draft while it runs, the answer once completed, and "unknown"
// rather than an empty category when it failed before synthesis.
func TestInvestigationResultByStatus(t *testing.T) {
	draft := Investigation{ID: "inv_1", IncidentID: "inc_1", Pass: 1, StartedAt: time.Unix(0, 0),
		RootCause: "pool exhausted", Category: "db_connection_exhaustion", Confidence: 0.8,
		Evidence: []Evidence{{AgentRole: "database", Content: `"too many connections"`}}}
	cases := []struct {
		status, category, wantCategory string
		wantRootCause                  bool
	}{
		{InvestigationRunning, "db_connection_exhaustion", "", false},
		{InvestigationCompleted, "db_connection_exhaustion", "db_connection_exhaustion", true},
		{InvestigationFailed, "", "unknown", false},
	}
	for _, c := range cases {
		inv := draft
		inv.Status, inv.Category = c.status, c.category
		r := inv.Result()
		body, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.wantCategory == "" && r.Category != nil, c.wantCategory != "" && (r.Category == nil || *r.Category != c.wantCategory):
			t.Errorf("%s: category %s, want %q", c.status, body, c.wantCategory)
		case c.wantRootCause != (r.RootCause != nil):
			t.Errorf("%s: rootCause %v", c.status, r.RootCause)
		case c.status == InvestigationRunning && (len(r.Evidence) != 0 || r.Confidence != 0 ||
			!strings.Contains(string(body), `"rootCause":null`) || !strings.Contains(string(body), `"category":null`)):
			t.Errorf("running pass shows its draft: %s", body)
		}
	}
}
