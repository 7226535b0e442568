package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/remediation"
)

func TestSafeNextStaysInTheDashboard(t *testing.T) {
	for in, want := range map[string]string{
		"/ui/incidents/inc_1":            "/ui/incidents/inc_1",
		"/ui/incidents?status=open":      "/ui/incidents?status=open",
		"":                               "/ui/incidents",
		"https://evil.example/ui/":       "/ui/incidents",
		"//evil.example/ui/":             "/ui/incidents",
		"/\\evil.example":                "/ui/incidents",
		"/v1/incidents":                  "/ui/incidents",
		"/ui/login?next=/ui/x":           "/ui/incidents",
		"/ui/static/app.js":              "/ui/incidents",
		"javascript:alert(1)":            "/ui/incidents",
		"/ui/../v1/users":                "/ui/incidents",
		"/ui/remediations/rem_1/approve": "/ui/remediations/rem_1/approve",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChartScaleIsRound(t *testing.T) {
	for v, want := range map[int64]int64{0: 4, 3: 4, 4: 4, 5: 8, 8: 8, 9: 20, 20: 20, 21: 40, 41: 80, 81: 200, 999: 2000, 1500: 2000} {
		if got := niceMax(v); got != want {
			t.Errorf("niceMax(%d) = %d, want %d", v, got, want)
		}
	}
	c := drawBars("t", []barInput{{Label: "a", Value: 20}, {Label: "b", Value: 5}, {Label: "c", Value: 0}, {Label: "d", Value: 1}})
	plot := chartWidth - chartLabelW - chartValueW
	if c.Bars[0].Width != plot || c.Bars[1].Width != 113 || c.Bars[2].Width != 0 || c.Bars[3].Width < 2 {
		t.Errorf("bar widths %d %d %d %d for plot %d", c.Bars[0].Width, c.Bars[1].Width, c.Bars[2].Width, c.Bars[3].Width, plot)
	}
	var labels []string
	for _, tk := range c.Ticks {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, ",") != "0,5,10,15,20" {
		t.Errorf("ticks %v", labels)
	}
}

func TestJSONErrorsSayWhere(t *testing.T) {
	var v map[string]any
	err := decodeJSON("{\n  \"a\": 1,\n  \"b\": ]\n}", &v)
	if err == nil || !strings.Contains(err.Error(), "line 3, column 8") {
		t.Fatalf("got %v", err)
	}
}

func TestConflictsAreExplainedInWords(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC)
	approve, execute := decisions[0], decisions[2]
	cases := []struct {
		r    remediation.RemediationView
		d    decision
		want string
	}{
		{remediation.RemediationView{Status: "approved", ApprovedBy: "ann@x.io", ApprovedAt: &at}, approve, "Already approved by ann@x.io at 2026-03-04 05:06 UTC. It can now be executed."},
		{remediation.RemediationView{Status: "rejected", RejectedBy: "bob@x.io", RejectedAt: &at, RejectReason: "wrong service"}, approve, "Already rejected by bob@x.io at 2026-03-04 05:06 UTC: wrong service."},
		{remediation.RemediationView{Status: "rejected", RejectedBy: "causeway", RejectedAt: &at, RejectReason: "no decision within 168h0m0s; the proposal expired"}, approve, "This remediation expired at 2026-03-04 05:06 UTC: no decision within 168h0m0s; the proposal expired"},
		{remediation.RemediationView{Status: "completed", ExecutedBy: "cy@x.io", ExecutedAt: &at}, execute, "Already executed by cy@x.io at 2026-03-04 05:06 UTC; it completed."},
		{remediation.RemediationView{Status: "awaiting_approval"}, execute, "This remediation is not approved yet; it must be approved before it can be executed."},
	}
	for _, c := range cases {
		if got := explainStatus(c.r, c.d); got != c.want {
			t.Errorf("%s/%s: %q, want %q", c.r.Status, c.d.Name, got, c.want)
		}
	}
}

func TestWorkflowLinksEscapeTheID(t *testing.T) {
	d := &Dashboard{o: Options{TemporalUIURL: "https://temporal.example.com", TemporalNamespace: "prod ns"}}
	l := d.workflowLink("x", "investigation/inc_1/2/agent/logs")
	if l.URL != "https://temporal.example.com/namespaces/prod%20ns/workflows/investigation%2Finc_1%2F2%2Fagent%2Flogs" {
		t.Errorf("link %s", l.URL)
	}
}

func TestLabelsReadAsWords(t *testing.T) {
	for in, want := range map[string]string{"db_connection_exhaustion": "DB connection exhaustion", "timed_out": "Timed out", "dns_failure": "DNS failure", "": ""} {
		if got := label(in); got != want {
			t.Errorf("label(%q) = %q, want %q", in, got, want)
		}
	}
}
