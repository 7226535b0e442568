package remediation

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/models"
)

// TestRemediationViewShowsRedactedParams shows approvers see what a step
// does, without its credentials.
func TestRemediationViewShowsRedactedParams(t *testing.T) {
	r := Remediation{Steps: []RemediationStep{{Type: "http", Params: map[string]any{
		"url": "https://deploy.example.com/rollback", "headers": map[string]any{"Authorization": "Bearer abc"}}}}}
	p := r.View().Steps[0].Params
	if p["url"] != "https://deploy.example.com/rollback" || p["headers"].(map[string]any)["Authorization"] != models.Redacted {
		t.Fatalf("step params %#v", p)
	}
}

// TestRemediationViewRedactsErrors shows step errors and the failure reason,
// which quote URLs from failed requests, are shown (and sent in
// remediation.* events) without the credentials in those URLs.
func TestRemediationViewRedactsErrors(t *testing.T) {
	reason := `step 0 (http) failed: Post "https://hooks.example.com/run?token=t-secret&x=1": dial tcp: connection refused (StepUnavailable)`
	r := Remediation{FailureReason: reason, Steps: []RemediationStep{{Type: "http", Error: reason}}}
	v := r.View()
	for _, s := range []string{v.FailureReason, v.Steps[0].Error} {
		if strings.Contains(s, "t-secret") || !strings.Contains(s, "hooks.example.com/run") {
			t.Errorf("shown as %q", s)
		}
	}
}
