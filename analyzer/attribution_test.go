package analyzer

import (
	"os"
	"strings"
	"testing"
	"time"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// releaseIncident is checkout failing after a release whose version is the
// only one in the failing lines.
func releaseIncident(changeService string) Input {
	return Input{
		Title:       "checkout 5xx above 4%",
		Description: "checkout is answering 5xx on POST /orders since 14:08.",
		Service:     "checkout", Environment: "production",
		Context: []string{
			"2025-06-02T14:08:11Z ERROR pod=checkout-7f9c-abcde version=2.14.0 NullPointerException in OrderMapper.toDto\n" +
				"2025-06-02T14:08:12Z INFO pod=checkout-5b8d-xyz12 version=2.13.4 POST /orders 201 in 88ms",
			"error rate by version 14:00-14:20: 2.14.0 31% errors, 2.13.4 0.1% errors",
		},
	}.WithChanges([]Change{{ID: "chg_01REL", Service: changeService, Kind: "deployment", Version: "2.14.0",
		Description: "Release 2.14.0: order DTO refactor", StartedAt: at("2025-06-02T14:05:00Z")}})
}

func TestAttributionNamesTheRelease(t *testing.T) {
	in := releaseIncident("checkout")
	res := runAll(in)
	if res.Category != CategoryBadDeployment {
		t.Fatalf("got %s (%v), want bad_deployment", res.Category, res.Hypotheses)
	}
	found := false
	for _, e := range res.Evidence {
		if e.Source != nil && e.Source.Kind == SourceChange && e.Source.ChangeID == "chg_01REL" &&
			strings.Contains(e.Content, "2.14.0") && strings.Contains(e.Content, "2025-06-02") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no evidence cites the change by id, version and time: %+v", res.Evidence)
	}
}

func TestAttributionLeavesAnotherServicesReleaseAlone(t *testing.T) {
	in := releaseIncident("search")
	// The failing lines name no search version: a release of another service.
	in.Context = []string{"2025-06-02T14:08:11Z ERROR pod=checkout-7f9c-abcde upstream connect error, payments-db: connection refused"}
	res := runAll(in)
	if res.Category == CategoryBadDeployment {
		t.Fatalf("a release of another service became the root cause: %+v", res.Hypotheses)
	}
	rep := Investigate(RoleDeployments, in)
	refuted := false
	for _, f := range rep.Findings {
		if f.Category == CategoryBadDeployment && f.Stance == StanceRefutes && strings.Contains(f.Summary, "not the failing service") {
			refuted = true
		}
	}
	if !refuted {
		t.Fatalf("the deployments agent did not set the other service's release aside: %+v", rep.Findings)
	}
}

func TestAttributionNamesTheLimitCutOverTheThrottling(t *testing.T) {
	in := Input{
		Title: "partner-api 429s above 5%", Description: "38% of partner-api requests are answered with HTTP 429 since 08:16.",
		Service: "partner-api",
		Context: []string{`{"time":"2025-02-26T08:16:40Z","status":429,"consumer":"fleetco","response_headers":{"ratelimit-limit":"60","ratelimit-remaining":"0"}} rate limit exceeded`},
	}.WithChanges([]Change{{ID: "chg_01CFG", Service: "partner-api", Kind: "config", Version: "gw@881",
		Description: "gateway sync: per-consumer rate limit 600/min -> 60/min", StartedAt: at("2025-02-26T08:15:30Z")}})
	if res := runAll(in); res.Category != CategoryConfigChange {
		t.Fatalf("got %s, want config_change: %+v", res.Category, res.Hypotheses)
	}
	// Without the change, the same input is throttling.
	in.Changes, in.Gathered = nil, nil
	if res := runAll(in); res.Category != CategoryRateLimited {
		t.Fatalf("without the change got %s, want rate_limited", res.Category)
	}
}

func TestAttributionTiming(t *testing.T) {
	old := releaseIncident("checkout")
	old.Changes[0].StartedAt = at("2025-05-28T09:00:00Z")
	old = Input{Title: old.Title, Description: old.Description, Service: old.Service,
		Context: []string{"2025-06-02T14:08:11Z ERROR checkout: payments-db connection refused"}}.WithChanges(old.Changes)
	rep := Investigate(RoleDeployments, old)
	for _, f := range rep.Findings {
		if f.Category == CategoryBadDeployment && f.Stance == StanceSupports && f.Strength >= 0.4 {
			t.Fatalf("a release days before the onset supports bad_deployment: %+v", f)
		}
	}
}

func TestAttributionRollbackThatEndedTheSymptoms(t *testing.T) {
	in := Input{
		Title: "search p99 above 2s", Description: "search latency p99 2.4s since 10:12", Service: "search",
		Context: []string{"10:12 p99 2.4s, errors timeouts on /query\n10:31 p99 back to normal 180ms"},
	}.WithChanges([]Change{
		{ID: "chg_A", Service: "search", Kind: "deployment", Version: "5.2.0", Description: "Release 5.2.0", StartedAt: at("2025-04-01T10:05:00Z")},
		{ID: "chg_B", Service: "search", Kind: "rollback", Version: "5.1.9", RevertOf: "5.2.0", Description: "roll back to 5.1.9", StartedAt: at("2025-04-01T10:25:00Z")},
	})
	rep := Investigate(RoleDeployments, in)
	for _, f := range rep.Findings {
		if f.Category == CategoryBadDeployment && f.Stance == StanceSupports && f.Strength >= strRollbackFixed && strings.Contains(f.Citation, "chg_B") {
			return
		}
	}
	t.Fatalf("the rollback that ended the symptoms was not weighed: %+v", rep.Findings)
}

func TestScenarioChanges(t *testing.T) {
	dir := t.TempDir()
	write := func(name, changes string) string {
		p := dir + "/" + name
		body := `{"id":"s","alert":{"title":"t","description":"d","service":"api"},"context":[],` + changes +
			`"expected":{"category":"bad_deployment","agents":["deployments"],"rationale":"r"}}`
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := LoadScenario(write("ok.json", `"changes":[{"service":"api","kind":"deployment","version":"1.2.0","description":"release","startedAt":"2025-06-02T14:05:00Z","sourceChangeId":"x"}],`))
	if err != nil {
		t.Fatal(err)
	}
	in := s.Input()
	if len(in.Changes) != 1 || in.Changes[0].Version != "1.2.0" || !in.Changes[0].StartedAt.Equal(at("2025-06-02T14:05:00Z")) {
		t.Fatalf("changes: %+v", in.Changes)
	}
	if len(in.Gathered) != 1 || in.Gathered[0].Source.Kind != SourceChange || !CitationValid(in, in.Changes[0].Line()) {
		t.Fatalf("the change is not citable input: %+v", in.Gathered)
	}
	if _, err := LoadScenario(write("bad.json", `"changes":[{"service":"api","kind":"hotfix","description":"x"}],`)); err == nil {
		t.Fatal("an unknown change kind was accepted")
	}
	if _, err := LoadScenario(write("none.json", "")); err != nil {
		t.Fatalf("a scenario without changes: %v", err)
	}
}

// Only the pods of the rollout's new ReplicaSet fail: the release is the
// trigger of the memory exhaustion they show. When the old pods fail too,
// the listing proves nothing about the release.
func TestAttributionNewReplicaSetFails(t *testing.T) {
	listing := func(oldRestarts string) string {
		return "$ kubectl -n shop get pods -l app=cart\n" +
			"NAME                    READY   STATUS      RESTARTS      AGE\n" +
			"cart-5f7c9d7b8-8xkqv    1/1     Running     5 (3m ago)    38m\n" +
			"cart-5f7c9d7b8-d2wlr    0/1     OOMKilled   4 (12s ago)   38m\n" +
			"cart-6b9d4c77f-2hqbn    1/1     Running     " + oldRestarts + "             5d\n" +
			"cart-6b9d4c77f-7tpjx    1/1     Running     0             5d"
	}
	in := func(oldRestarts string) Input {
		return Input{
			Title: "cart pods crash looping", Description: "cart containers OOMKilled repeatedly", Service: "cart",
			Metadata: map[string]any{"startsAt": "2025-05-14T09:50:00Z"},
			Context:  []string{listing(oldRestarts), "Reason: OOMKilled\nExit Code: 137"},
		}.WithChanges([]Change{{ID: "chg_RS", Service: "cart", Kind: "deployment", Version: "7.0.0",
			Description: "Release 7.0.0", StartedAt: at("2025-05-14T09:12:00Z")}})
	}
	if res := runAll(in("0")); res.Category != CategoryBadDeployment {
		t.Fatalf("got %s, want bad_deployment: %+v", res.Category, res.Hypotheses)
	}
	if res := runAll(in("3")); res.Category == CategoryBadDeployment {
		t.Fatalf("old and new pods both fail, yet the release was named: %+v", res.Hypotheses)
	}
}

// TestAttributionReadsWhatTheFailuresSay: a line telling of the release
// itself names its version without showing failures from it; failures of
// what a change touched that began before it clear it; and the outage that
// did begin is what the answer names.
func TestAttributionReadsWhatTheFailuresSay(t *testing.T) {
	cert := Input{
		Title: "api.example.io public health check is failing", Service: "accounts-api",
		Description: "Error: CERT_HAS_EXPIRED - certificate has expired",
		Metadata:    map[string]any{"startsAt": "2026-06-02T00:01:00Z"},
		Context: []string{
			"curl: (60) SSL certificate problem: certificate has expired",
			"accounts-api 12.4.0 rolled out 23:34-23:38 (email template only). Requests kept succeeding until 00:00:11, then TLS handshake failures, not HTTP errors.",
		},
	}.WithChanges([]Change{{ID: "chg_01TPL", Service: "accounts-api", Kind: "deployment", Version: "12.4.0",
		Description: "Release 12.4.0: new password reset email template", StartedAt: at("2026-06-01T23:34:00Z")}})
	if res := runAll(cert); res.Category != CategoryCertificateExpired {
		t.Errorf("a line telling of the rollout blamed it: %s %+v", res.Category, res.Hypotheses)
	}

	hotfix := Input{
		Title: "orders-web: checkout payment failures > 10%", Service: "orders-web",
		Metadata: map[string]any{"startsAt": "2026-02-24T12:22:00Z"},
		Context: []string{
			"[2026-02-24 12:21:41,002] ERROR orders.payments: create_payment_intent failed attempt=1 stripe status=503 message='An unknown error occurred'",
			"[2026-02-24 12:44:02,114] ERROR orders.payments: create_payment_intent failed attempt=2 stripe status=503 (Network error: ReadTimeout: HTTPSConnectionPool(host='api.stripe.com', port=443): Read timed out.)",
		},
	}.WithChanges([]Change{{ID: "chg_01FIX", Service: "orders-web", Kind: "deployment", Version: "3.2.7",
		Description: "Hotfix: retry Stripe PaymentIntent creation once on 5xx", StartedAt: at("2026-02-24T12:37:50Z")}})
	res := runAll(hotfix)
	if res.Category != CategoryUpstreamDependency {
		t.Errorf("a hotfix after the failures it touched began was blamed: %s %+v", res.Category, res.Hypotheses)
	}
	if res.Culprit == nil || *res.Culprit != (Culprit{Kind: KindDependency, Name: "api.stripe.com"}) {
		t.Errorf("culprit %v, want dependency api.stripe.com", res.Culprit)
	}
}

// TestNodeCPUReadings: a node at its allocatable CPU in `kubectl top nodes`
// and node_exporter's load far above the CPUs are CPU saturation.
func TestNodeCPUReadings(t *testing.T) {
	for _, ctx := range []string{
		"$ kubectl top nodes\nNAME                                       CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)\nip-10-20-33-7.eu-west-2.compute.internal   15872m       99%      38114Mi         61%",
		"node_load1 = 41 on 16 vCPUs",
	} {
		in := Input{Title: "quote-engine p95 latency above SLO", Service: "quote-engine", Context: []string{ctx}}
		if res := runAll(in); res.Category != CategoryCPUSaturation {
			t.Errorf("%q: got %s, want cpu_saturation", ctx, res.Category)
		}
	}
	idle := Input{Title: "quote-engine p95 latency above SLO", Service: "quote-engine",
		Context: []string{"NAME   CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)\nip-10-20-41-19   4210m   26%   30120Mi   48%"}}
	if res := runAll(idle); res.Category == CategoryCPUSaturation {
		t.Errorf("a node at 26%% CPU read as saturated")
	}
}
