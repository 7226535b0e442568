package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// switchingProxy fronts one real Prometheus after another under one URL, as
// a tenant's Prometheus looks before and after a fix.
type switchingProxy struct {
	*httptest.Server
	target atomic.Pointer[url.URL]
	// hold, when set, makes the next request wait: it is announced on held
	// and goes on when release is closed or its client gives up.
	hold    atomic.Bool
	held    chan struct{}
	release chan struct{}
}

func newSwitchingProxy(t *testing.T, first string) *switchingProxy {
	p := &switchingProxy{held: make(chan struct{}, 1), release: make(chan struct{})}
	p.point(t, first)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(p.target.Load()) }}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.hold.CompareAndSwap(true, false) {
			p.held <- struct{}{}
			select {
			case <-p.release:
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		p.Release()
		p.Close()
	})
	return p
}

// Release lets a held request go on; later calls do nothing.
func (p *switchingProxy) Release() {
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

func (p *switchingProxy) point(t *testing.T, to string) {
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	p.target.Store(u)
}

// remediatedIncident investigates a bland alert over checkout's memory
// series behind the proxy, then approves and executes the one proposed
// remediation (a short wait); before executing it, fix runs.
func remediatedIncident(t *testing.T, e *env, proxy *switchingProxy, fix func()) (incidentID, remediationID, tenantID, token string) {
	t.Helper()
	token, tenantID, key := e.tenantWithKey(t, "verified")
	e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": proxy.URL})
	e.createRunbook(t, token, "restart checkout", map[string]any{"type": "wait", "description": "let the new pods settle", "params": map[string]any{"duration": "10ms"}})
	incidentID = e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	if res := e.awaitSourced(t, token, incidentID); res.Status != "completed" || res.Category != analyzer.CategoryMemoryExhaustion {
		t.Fatalf("pass: %s %s", res.Status, res.Category)
	}
	rems := e.awaitRemediations(t, token, incidentID, 1)
	remediationID = rems[0].RemediationID
	if st := e.call(t, "POST", "/v1/remediation/"+remediationID+"/approve", token, nil, nil); st != http.StatusOK {
		t.Fatalf("approve: %d", st)
	}
	fix()
	if st := e.call(t, "POST", "/v1/remediation/"+remediationID+"/execute", token, nil, nil); st != http.StatusOK {
		t.Fatalf("execute: %d", st)
	}
	return incidentID, remediationID, tenantID, token
}

// awaitVerification waits for the remediation's recorded outcome.
func awaitVerification(t *testing.T, e *env, tenantID, remediationID string) *models.RemediationVerification {
	t.Helper()
	var v *models.RemediationVerification
	eventually(t, 90*time.Second, "the verification of "+remediationID, func() bool {
		var err error
		v, err = e.Store.Verification(context.Background(), tenantID, remediationID)
		return err == nil
	})
	return v
}

func verifiedEvents(t *testing.T, e *env, tenantID string) int64 {
	t.Helper()
	var n int64
	if err := e.Store.DB().Model(&models.OutboxEvent{}).Where("tenant_id = ? AND type = ?", tenantID, models.EventRemediationVerified).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVerificationFindsRecovery: after the fix the series are back under the
// limits (the proxy now fronts a healthy Prometheus); the durable timer
// fires, the evidencing queries run again, and the outcome is recovered,
// with its readings, a timeline entry and one remediation.verified event.
func TestVerificationFindsRecovery(t *testing.T) {
	cfg := testConfig(t)
	cfg.RemediationVerifyAfter = 2 * time.Second
	e := newEnvWith(t, cfg)
	sick := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	healthy := testenv.Prometheus(t, promlab.Healthy(scenarioTarget))
	proxy := newSwitchingProxy(t, sick.URL)
	incID, remID, inc, token := remediatedIncident(t, e, proxy, func() { proxy.point(t, healthy.URL) })

	v := awaitVerification(t, e, inc, remID)
	if v.Outcome != models.OutcomeRecovered || len(v.Readings) == 0 || v.VerifiedAt.IsZero() {
		t.Fatalf("verification %+v", v)
	}
	if n := verifiedEvents(t, e, inc); n != 1 {
		t.Fatalf("%d remediation.verified events, want 1", n)
	}
	// The outcome and its readings are on the remediation.
	var listed struct {
		Remediations []struct {
			RemediationID string `json:"remediationId"`
			Verification  *struct {
				Outcome  string   `json:"outcome"`
				Readings []string `json:"readings"`
			} `json:"verification"`
		} `json:"remediations"`
	}
	if st := e.call(t, "GET", "/v1/remediation/"+incID, token, nil, &listed); st != http.StatusOK || len(listed.Remediations) != 1 ||
		listed.Remediations[0].Verification == nil || listed.Remediations[0].Verification.Outcome != "recovered" ||
		strings.Join(listed.Remediations[0].Verification.Readings, "\n") != strings.Join(v.Readings, "\n") {
		t.Fatalf("listed remediation: %d %+v", st, listed.Remediations)
	}
	var payload string
	if err := e.Store.DB().Model(&models.OutboxEvent{}).Where("tenant_id = ? AND type = ?", inc, models.EventRemediationVerified).Pluck("payload", &payload).Error; err != nil ||
		!strings.Contains(payload, `"outcome":"recovered"`) || !strings.Contains(payload, `"remediationId":"`+remID+`"`) {
		t.Fatalf("event data %s (%v)", payload, err)
	}
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, remediation.WorkflowID(remID), "remediation-verified.json")
	}
	if pass := latestPass(t, e, inc, incID); pass.Pass != 1 {
		t.Fatalf("a recovered incident was investigated again (pass %d)", pass.Pass)
	}
	// The one answer, ungraded, counts as recovered after its remediation.
	var acc struct {
		Total struct {
			Answers   int `json:"answers"`
			Graded    int `json:"graded"`
			Recovered int `json:"recoveredAfterRemediation"`
		} `json:"total"`
	}
	if st := e.call(t, "GET", "/v1/analytics/accuracy", token, nil, &acc); st != http.StatusOK || acc.Total.Answers != 1 || acc.Total.Graded != 0 || acc.Total.Recovered != 1 {
		t.Fatalf("accuracy: %d %+v", st, acc.Total)
	}
}

// TestVerificationNotRecoveredReinvestigates: the series still show memory
// exhaustion after the fix, so the outcome is not_recovered and a second pass
// starts with that outcome in its context.
func TestVerificationNotRecoveredReinvestigates(t *testing.T) {
	cfg := testConfig(t)
	cfg.RemediationVerifyAfter = 2 * time.Second
	e := newEnvWith(t, cfg)
	sick := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	proxy := newSwitchingProxy(t, sick.URL)
	incID, remID, inc, _ := remediatedIncident(t, e, proxy, func() {})

	v := awaitVerification(t, e, inc, remID)
	if v.Outcome != models.OutcomeNotRecovered || len(v.Readings) == 0 {
		t.Fatalf("verification %+v", v)
	}
	var second *models.Investigation
	eventually(t, 90*time.Second, "a second pass", func() bool {
		second = latestPass(t, e, inc, incID)
		return second.Pass == 2
	})
	found := false
	for _, c := range second.Context {
		found = found || (strings.Contains(c, remID) && strings.Contains(c, "not recovered"))
	}
	if !found {
		t.Fatalf("the second pass's context %q does not carry the outcome", second.Context)
	}
	if n := verifiedEvents(t, e, inc); n != 1 {
		t.Fatalf("%d remediation.verified events, want 1", n)
	}
}

func latestPass(t *testing.T, e *env, tenantID, incidentID string) *models.Investigation {
	t.Helper()
	inv, err := e.Store.LatestInvestigation(context.Background(), tenantID, incidentID)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
