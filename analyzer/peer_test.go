package analyzer

import "testing"

// TestPeerCulprit: a failing client's line names the peer it failed
// against, in that client's words; the culprit is the peer, as a database,
// an in-cluster Service or an outside dependency.
func TestPeerCulprit(t *testing.T) {
	cases := []struct {
		cat, line string
		want      *Culprit
	}{
		// pgx
		{CategoryDBConnectionExhaustion, "failed to connect to `host=pg-ledger user=ledger_sync database=ledger`: server error (FATAL: sorry, too many clients already (SQLSTATE 53300))",
			&Culprit{Kind: KindDatabase, Name: "pg-ledger"}},
		// libpq, through psycopg
		{CategoryDBConnectionExhaustion, `psycopg.OperationalError: connection failed: connection to server at "orders-db.internal" (10.3.2.10), port 5432 failed: FATAL:  remaining connection slots are reserved`,
			&Culprit{Kind: KindDatabase, Name: "orders-db.internal"}},
		// go-redis behind a logfmt logger
		{CategoryCacheFailure, `level=error msg="session write failed" addr=redis-sessions:6379 err="dial tcp 10.2.3.4:6379: connect: connection refused"`,
			&Culprit{Kind: KindService, Name: "redis-sessions"}},
		// a Service's cluster DNS name in the URL called
		{CategoryUpstreamDependency, `msg="rank request failed" url=http://ranking-svc.search.svc.cluster.local:8080/v1/rank status=503`,
			&Culprit{Kind: KindService, Name: "ranking-svc"}},
		// Go's net/http against an outside API
		{CategoryUpstreamDependency, `Post "https://api.stripe.com/v1/charges": dial tcp: lookup api.stripe.com: i/o timeout`,
			&Culprit{Kind: KindDependency, Name: "api.stripe.com"}},
		// an address alone names nothing an SRE can change
		{CategoryUpstreamDependency, `dial tcp 10.0.0.7:8080: connect: connection refused`, nil},
		// a fault of the service itself has no peer
		{CategoryMemoryExhaustion, `addr=redis-sessions:6379 java.lang.OutOfMemoryError: Java heap space`, nil},
	}
	for _, tc := range cases {
		got := peerCulprit(tc.cat, tc.line)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s %q: got %v, want %v", tc.cat, tc.line, got, tc.want)
		}
	}
}

// TestDependencyFailuresBlameTheDependency runs the analyzer on what a
// failing caller logs: the cache it could not reach is the culprit, a
// go-redis pool timeout is the cache's and not a database's, and an alert
// titled with status-page words is the tenant's own symptom, not a
// provider's report.
func TestDependencyFailuresBlameTheDependency(t *testing.T) {
	in := Input{Title: "Elevated error rate on sessions", Service: "sessions", Severity: "critical",
		Context: []string{
			`2026-03-18T07:34:02.962Z level=error caller=store.go:57 msg="session write failed" addr=redis-sessions:6379 err="dial tcp 10.2.3.4:6379: connect: connection refused"`,
			`2026-03-18T07:34:07.561Z level=error caller=store.go:57 msg="session write failed" addr=redis-sessions:6379 err="redis: connection pool timeout"`,
		}}
	res := runAll(in)
	if res.Category != CategoryCacheFailure || res.Culprit == nil || *res.Culprit != (Culprit{Kind: KindService, Name: "redis-sessions"}) {
		t.Fatalf("got %s %v, want cache_failure blaming service redis-sessions", res.Category, res.Culprit)
	}
	for _, r := range Roles {
		for _, f := range Investigate(r, in).Findings {
			if f.Category == CategoryDBConnectionExhaustion && f.Stance == StanceSupports {
				t.Errorf("%s reads a go-redis pool timeout as a database's: %s", r, f.Citation)
			}
			if f.Category == CategoryUpstreamDependency && f.Stance == StanceSupports && f.Citation == in.Title {
				t.Errorf("%s reads the alert's title as a provider's status: %s", r, f.Summary)
			}
		}
	}
}
