package remediation

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestPlanHashBindsEveryRenderedDetail: an approval binds to the plan's hash,
// so any change to what would run, however deep in a step's params, must
// change it; and the digest is the SHA-256 of the plan written out below by
// hand, so a weakened PlanHash cannot agree with itself and pass.
func TestPlanHashBindsEveryRenderedDetail(t *testing.T) {
	plan := func() []RemediationStep {
		return []RemediationStep{
			{Type: "http", Description: "restart checkout", Params: map[string]any{
				"method": "POST", "url": "https://deploy.example/restart?svc=checkout",
				"headers": map[string]any{"X-Team": "payments"}, "expectStatus": float64(202)}},
			{Type: "verification", Description: "checkout answers", Params: map[string]any{"url": "https://checkout.example/health", "expectStatus": float64(200)}},
		}
	}
	const canonical = `[{"type":"http","description":"restart checkout","params":{"expectStatus":202,"headers":{"X-Team":"payments"},"method":"POST","url":"https://deploy.example/restart?svc=checkout"}},` +
		`{"type":"verification","description":"checkout answers","params":{"expectStatus":200,"url":"https://checkout.example/health"}}]`
	sum := sha256.Sum256([]byte(canonical))
	if got, want := PlanHash(plan()), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("PlanHash = %s, want the SHA-256 of the canonical plan %s", got, want)
	}
	base := PlanHash(plan())
	for what, change := range map[string]func(p []RemediationStep) []RemediationStep{
		"a step's type":        func(p []RemediationStep) []RemediationStep { p[0].Type = "deployment_rollback"; return p },
		"a step's description": func(p []RemediationStep) []RemediationStep { p[1].Description = "checkout answers fast"; return p },
		"a URL's query": func(p []RemediationStep) []RemediationStep {
			p[0].Params["url"] = "https://deploy.example/restart?svc=ledger"
			return p
		},
		"a header deep in params": func(p []RemediationStep) []RemediationStep {
			p[0].Params["headers"].(map[string]any)["X-Team"] = "ops"
			return p
		},
		"an expected status": func(p []RemediationStep) []RemediationStep { p[1].Params["expectStatus"] = float64(204); return p },
		"a param added":      func(p []RemediationStep) []RemediationStep { p[0].Params["body"] = "{}"; return p },
		"the order of steps": func(p []RemediationStep) []RemediationStep { return []RemediationStep{p[1], p[0]} },
		"a step added": func(p []RemediationStep) []RemediationStep {
			return append(p, RemediationStep{Type: "wait", Params: map[string]any{"duration": "1m"}})
		},
		"a step removed": func(p []RemediationStep) []RemediationStep { return p[:1] },
		"a value moved between steps": func(p []RemediationStep) []RemediationStep {
			p[0].Description, p[1].Description = p[1].Description, p[0].Description
			return p
		},
	} {
		if PlanHash(change(plan())) == base {
			t.Errorf("changing %s leaves the plan hash as it was", what)
		}
	}
}
