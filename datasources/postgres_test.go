package datasources

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/internal/testenv"
)

// pgConfig is a postgres source on the test server, as Prepare stores it.
func pgConfig(t *testing.T, c *Connector) (Config, string) {
	t.Helper()
	base := testenv.DatabaseURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = "sslmode=disable"
	cfg, err := c.Prepare(context.Background(), Spec{Name: "db", Type: TypePostgres, URL: u.String()})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	cfg.ID = "ds_pg"
	return cfg, base
}

// investigateDatabase runs the database agent over a query's readings and
// synthesizes its answer.
func investigateDatabase(res Result, q Query) analyzer.Result {
	in := analyzer.Input{Title: "checkout degraded", Service: "checkout", Gathered: []analyzer.Excerpt{{
		Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: q.DataSourceID, Type: q.Type, Query: q.Text},
		Text:   analyzer.ReadingsText(res.Readings), Readings: res.Readings, Measured: true, Roles: q.Roles,
	}}}
	return analyzer.Synthesize(in, []analyzer.AgentReport{analyzer.Investigate(analyzer.RoleDatabase, in)})
}

func pgQuery(t *testing.T, cfg Config, entry string) Query {
	t.Helper()
	for _, q := range Plan([]Source{{ID: cfg.ID, Type: cfg.Type, URL: cfg.URL}}, Scope{}, []string{analyzer.RoleDatabase}, 20).Queries {
		if q.Entry == entry {
			return q
		}
	}
	t.Fatalf("no %s query planned", entry)
	return Query{}
}

func TestPostgresFindsLockWaitsAndSlowStatements(t *testing.T) {
	c := testConnector()
	cfg, base := pgConfig(t, c)
	holder, waiter, sleeper := testenv.PgConn(t, base), testenv.PgConn(t, base), testenv.PgConn(t, base)
	ctx := context.Background()
	tbl := "cw_locks_" + strings.ToLower(strings.NewReplacer("-", "x", "_", "y").Replace(auth.RandomToken(6)))
	if _, err := holder.Exec(ctx, "CREATE TABLE public."+tbl+" (id int primary key, v int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), base); err == nil {
			_, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS public."+tbl)
			c.Close(context.Background())
		}
	})
	if _, err := holder.Exec(ctx, "INSERT INTO public."+tbl+" VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	// One session holds a row lock in an open transaction; another waits for it.
	if _, err := holder.Exec(ctx, "BEGIN; UPDATE public."+tbl+" SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	waitDone := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "UPDATE public."+tbl+" SET v = 2 WHERE id = 1")
		waitDone <- err
	}()
	sleepCtx, stopSleep := context.WithCancel(ctx)
	defer stopSleep()
	go func() { _, _ = sleeper.Exec(sleepCtx, "SELECT pg_sleep(60) /* cw slow report */") }()
	t.Cleanup(func() {
		stopSleep()
		_, _ = holder.Exec(context.Background(), "ROLLBACK")
		<-waitDone
	})
	time.Sleep(5500 * time.Millisecond)

	lq := pgQuery(t, cfg, "lock_waits")
	res, err := c.Run(ctx, cfg, lq)
	if err != nil {
		t.Fatal(err)
	}
	var mine *analyzer.Reading
	for i, r := range res.Readings {
		if r.Signal == analyzer.SignalLockWait && strings.Contains(r.Labels["query"], tbl) {
			mine = &res.Readings[i]
		}
	}
	if mine == nil {
		t.Fatalf("the waiting UPDATE is not among the lock waits: %+v", res.Readings)
	}
	if mine.Labels["blocked_by"] != fmt.Sprint(holder.PgConn().PID()) || mine.Labels["blocker_state"] != "idle in transaction" || mine.Value < 5 {
		t.Errorf("lock wait %+v, want blocked by pid %d (idle in transaction) for ≥ 5 s", mine, holder.PgConn().PID())
	}
	if got := investigateDatabase(res, lq); got.Category != analyzer.CategoryDBLockContention {
		t.Errorf("database agent on lock waits: %s (%s)", got.Category, got.RootCause)
	}

	sq := pgQuery(t, cfg, "long_running_statements")
	res, err = c.Run(ctx, cfg, sq)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range res.Readings {
		if strings.Contains(r.Labels["query"], "cw slow report") {
			found = r.Value >= 5 && r.Labels["wait"] == "Timeout/PgSleep"
		}
		if strings.Contains(r.Labels["query"], tbl) {
			t.Errorf("a session waiting on a lock is not a slow statement: %+v", r)
		}
	}
	if !found {
		t.Fatalf("the running pg_sleep is not among the long statements: %+v", res.Readings)
	}
	// One statement a few seconds in is a finding of the database agent, not
	// yet an answer on its own.
	in := analyzer.Input{Title: "checkout degraded", Gathered: []analyzer.Excerpt{{Text: analyzer.ReadingsText(res.Readings), Readings: res.Readings, Measured: true}}}
	slow := false
	for _, f := range analyzer.Investigate(analyzer.RoleDatabase, in).Findings {
		slow = slow || (f.Category == analyzer.CategoryDBSlowQueries && f.Stance == analyzer.StanceSupports && f.Strength >= 0.7 && strings.Contains(f.Citation, "cw slow report"))
	}
	if !slow {
		t.Errorf("database agent did not find the slow statement: %+v", analyzer.Investigate(analyzer.RoleDatabase, in).Findings)
	}

	st, err := c.Run(ctx, cfg, pgQuery(t, cfg, "statement_stats"))
	if err != nil || len(st.Readings) != 0 || !strings.Contains(st.Note, "pg_stat_statements") {
		t.Errorf("without pg_stat_statements: %+v, %v", st, err)
	}
}

func TestPostgresFindsARoleAtItsConnectionLimit(t *testing.T) {
	c := testConnector()
	cfg, base := pgConfig(t, c)
	admin := testenv.PgConn(t, base)
	ctx := context.Background()
	role := "cw_app_" + strings.ToLower(strings.NewReplacer("-", "x", "_", "y").Replace(auth.RandomToken(6)))
	if _, err := admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 3"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), base); err == nil {
			_, _ = c.Exec(context.Background(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '"+role+"'")
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(base)
	u.User = url.User(role)
	for i := 0; i < 3; i++ {
		testenv.PgConn(t, u.String())
	}
	if conn, err := pgx.Connect(ctx, u.String()); err == nil {
		conn.Close(ctx)
		t.Fatal("a fourth connection of a role limited to three was accepted")
	}
	q := pgQuery(t, cfg, "connection_limits")
	res, err := c.Run(ctx, cfg, q)
	if err != nil {
		t.Fatal(err)
	}
	var got *analyzer.Reading
	for i, r := range res.Readings {
		if r.Labels["role"] == role {
			got = &res.Readings[i]
		}
	}
	if got == nil || got.Value != 3 || got.Limit != 3 {
		t.Fatalf("role %s: %+v, want 3 connections of 3", role, got)
	}
	if a := investigateDatabase(res, q); a.Category != analyzer.CategoryDBConnectionExhaustion {
		t.Errorf("database agent on a saturated role: %s (%s)", a.Category, a.RootCause)
	}
}

func TestPostgresSessionIsReadOnlyAndMasksThePassword(t *testing.T) {
	c := testConnector()
	cfg, base := pgConfig(t, c)
	r, err := c.reachFor(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	p := &postgres{c: r, cfg: cfg}
	conn, err := p.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE TEMP TABLE cw_should_fail (x int)"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write in the monitoring session: %v, want a read-only refusal", err)
	}
	msg, err := c.Test(context.Background(), cfg)
	if err != nil || !strings.Contains(msg, "PostgreSQL") {
		t.Fatalf("test: %q, %v", msg, err)
	}

	u, _ := url.Parse(base)
	u.User = url.UserPassword("monitor", "hunter2-secret")
	u.RawQuery = "sslmode=disable"
	got, err := c.Prepare(context.Background(), Spec{Name: "db", Type: TypePostgres, URL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.URL, "hunter2") || !strings.Contains(got.URL, "monitor:****@") || got.Auth.Password != "hunter2-secret" {
		t.Fatalf("stored %q with auth %+v: want the password masked in url and kept in auth", got.URL, got.Auth.Username)
	}

	missing := cfg
	mu, _ := url.Parse(cfg.URL)
	mu.Path = "/cw_no_such_database"
	missing.URL = mu.String()
	if _, err := c.Test(context.Background(), missing); !errors.Is(err, ErrDenied) {
		t.Fatalf("a database that does not exist: %v, want ErrDenied", err)
	}
}
