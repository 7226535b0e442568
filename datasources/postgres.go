package datasources

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/causeway/causeway/analyzer"
)

// maskedPassword stands for the password in a stored postgres URL; the real
// one is sealed with the source's auth.
const maskedPassword = "****"

func init() {
	register(kind{
		name:        TypePostgres,
		urlRequired: true,
		prepare:     preparePostgres,
		plan:        planPostgres,
		open: func(c *reach, cfg Config) (Client, error) {
			return &postgres{c: c, cfg: cfg}, nil
		},
	})
}

// sslModes are the sslmode values a postgres URL may carry; every other
// parameter is refused, since some (host, hostaddr, port, service) would
// connect somewhere the address check never saw.
var sslModes = map[string]bool{"disable": true, "allow": true, "prefer": true, "require": true, "verify-ca": true, "verify-full": true}

func preparePostgres(c *reach, s *Spec) error {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Hostname() == "" {
		return fieldErr("url", "must be a postgres://user:password@host:port/database URL")
	}
	if strings.Contains(u.Host, ",") {
		return fieldErr("url", "must name one host")
	}
	for k, v := range u.Query() {
		if k != "sslmode" || len(v) != 1 || !sslModes[v[0]] {
			return fieldErr("url", "may carry only sslmode (disable, allow, prefer, require, verify-ca, verify-full) as a parameter, not %q", k)
		}
	}
	if u.Fragment != "" {
		return fieldErr("url", "must not carry a fragment")
	}
	if err := onlySettings(s.Settings); err != nil {
		return err
	}
	pw, hasPW := u.User.Password()
	if s.Auth != nil {
		if s.Auth.BearerToken != "" || len(s.Auth.Headers) > 0 {
			return fieldErr("auth", "of a postgres source is a username and password, or the password inside url")
		}
		if hasPW {
			return fieldErr("auth", "give the password either inside url or in auth, not both")
		}
	}
	if u.User == nil || u.User.Username() == "" {
		if s.Auth == nil {
			return fieldErr("url", "must name the user to connect as (postgres://user:password@host/database)")
		}
	}
	if hasPW {
		if pw == "" {
			return fieldErr("url", "has an empty password")
		}
		s.Auth = &Auth{Username: u.User.Username(), Password: pw}
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	if err := c.checkHost(context.Background(), "url", u.Hostname(), port); err != nil {
		return err
	}
	s.URL = u.String()
	if s.Auth != nil {
		// url.UserPassword would percent-encode the mask; the placeholder has
		// nothing to encode and is replaced after.
		const placeholder = "causewaymaskedpassword"
		u.User = url.UserPassword(firstNonEmpty(s.Auth.Username, u.User.Username()), placeholder)
		s.URL = strings.Replace(u.String(), ":"+placeholder+"@", ":"+maskedPassword+"@", 1)
	}
	return nil
}

func planPostgres(s Source, sc Scope, roles []string) ([]Query, []string) {
	var qs []Query
	for _, e := range entriesFor(TypePostgres, roles) {
		qs = append(qs, Query{Key: queryKey(s.ID, e.ID, ""), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
			Text: e.Query, Roles: e.roles, Start: sc.Start, End: sc.End})
	}
	return qs, nil
}

// The SQL of the postgres plan entries. Each reads statistics views only and
// runs in a read-only session with a statement timeout.
const (
	sqlConnections = `SELECT count(*)::float8 AS connections, current_setting('max_connections')::float8 AS max_connections
FROM pg_stat_activity WHERE backend_type = 'client backend'`

	sqlConnectionLimits = `SELECT 'role' AS kind, r.rolname AS name, r.rolconnlimit::float8 AS connection_limit,
  (SELECT count(*) FROM pg_stat_activity a WHERE a.usename = r.rolname)::float8 AS connections
FROM pg_roles r WHERE r.rolconnlimit >= 0
UNION ALL
SELECT 'database', d.datname, d.datconnlimit::float8,
  (SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname)::float8
FROM pg_database d WHERE d.datconnlimit >= 0
ORDER BY 4 DESC LIMIT 50`

	sqlLockWaits = `SELECT w.pid, coalesce(w.usename, '') AS usename, coalesce(w.datname, '') AS datname,
  coalesce(w.wait_event, '') AS wait_event,
  extract(epoch FROM now() - coalesce(w.query_start, w.state_change, now()))::float8 AS waiting_seconds,
  array_to_string(pg_blocking_pids(w.pid), ',') AS blocked_by,
  coalesce(b.state, '') AS blocker_state,
  coalesce(extract(epoch FROM now() - b.xact_start)::float8, 0) AS blocker_xact_seconds,
  left(coalesce(w.query, ''), 200) AS query, left(coalesce(b.query, ''), 200) AS blocker_query
FROM pg_stat_activity w
LEFT JOIN pg_stat_activity b ON b.pid = (pg_blocking_pids(w.pid))[1]
WHERE cardinality(pg_blocking_pids(w.pid)) > 0
ORDER BY waiting_seconds DESC LIMIT 50`

	sqlLongRunning = `SELECT pid, coalesce(usename, '') AS usename, coalesce(datname, '') AS datname,
  extract(epoch FROM now() - query_start)::float8 AS running_seconds,
  coalesce(wait_event_type, '') AS wait_event_type, coalesce(wait_event, '') AS wait_event,
  left(coalesce(query, ''), 200) AS query
FROM pg_stat_activity
WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()
  AND coalesce(wait_event_type, '') <> 'Lock' AND now() - query_start > interval '1 second'
ORDER BY running_seconds DESC LIMIT 50`

	sqlStatementStats = `SELECT left(query, 200) AS query, calls::float8 AS calls,
  (mean_exec_time / 1000)::float8 AS mean_seconds, (total_exec_time / 1000)::float8 AS total_seconds
FROM pg_stat_statements WHERE calls > 0 ORDER BY mean_exec_time DESC LIMIT 20`
)

// postgres queries PostgreSQL's statistics views over a read-only session.
type postgres struct {
	c   *reach
	cfg Config
}

// connect opens one read-only session with the statement timeout set,
// through the guarded dialer.
func (p *postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	u, err := url.Parse(p.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: stored url unreadable", ErrBadQuery)
	}
	user := u.User.Username()
	if p.cfg.Auth.Username != "" {
		user = p.cfg.Auth.Username
	}
	if p.cfg.Auth.Password != "" {
		u.User = url.UserPassword(user, p.cfg.Auth.Password)
	} else {
		u.User = url.User(user)
	}
	cc, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	timeout := p.c.opts.QueryTimeout
	cc.ConnectTimeout = timeout
	cc.DialFunc = p.c.dialer.DialContext
	cc.RuntimeParams["application_name"] = "causeway"
	cc.RuntimeParams["default_transaction_read_only"] = "on"
	cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	cc.RuntimeParams["lock_timeout"] = "1000"
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, pgError(err)
	}
	return conn, nil
}

// pgError classifies a PostgreSQL failure: refused credentials and missing
// privileges are ErrDenied, a bad statement ErrBadQuery, the rest retryable.
// A login failure is said in Causeway's words with its SQLSTATE: the
// server's own text names users, databases and client addresses, and is
// not repeated to the tenant.
func pgError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		r := &pgRefusal{code: pe.Code, text: pe.Message}
		switch {
		case pe.Code == "28P01" || pe.Code == "28000" || pe.Code == "42501" || pe.Code == "3D000":
			r.class, r.text = ErrDenied, ""
		case strings.HasPrefix(pe.Code, "42"):
			r.class = ErrBadQuery
		}
		return r
	}
	return describeNetError(err)
}

// pgRefusal is an error PostgreSQL answered, by its SQLSTATE. text is the
// server's message where it explains one of our statements, and empty where
// the code says all (sqlStates).
type pgRefusal struct {
	class error
	code  string
	text  string
}

// sqlStates says, in a fixed sentence, what the SQLSTATEs a connection or a
// test meets mean to the operator.
var sqlStates = map[string]string{
	"28P01": "the server refused the credentials",
	"28000": "the server does not let this user connect (no such role, or pg_hba.conf refuses it)",
	"3D000": "the database does not exist",
	"42501": "the user lacks a privilege the queries need",
	"53300": "the server has no connection slot free",
	"57P03": "the server is not accepting connections now",
}

func (e *pgRefusal) Error() string {
	what := e.text
	if what == "" {
		what = firstNonEmpty(sqlStates[e.code], "the server answered with an error")
	}
	s := fmt.Sprintf("%s (PostgreSQL %s)", what, e.code)
	if e.class != nil {
		s = e.class.Error() + ": " + s
	}
	return s
}

func (e *pgRefusal) Unwrap() error { return e.class }

// Test connects and reads the server's version and connection limit.
func (p *postgres) Test(ctx context.Context) (string, error) {
	conn, err := p.connect(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var version, maxConn string
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('max_connections')`).Scan(&version, &maxConn); err != nil {
		return "", pgError(err)
	}
	return fmt.Sprintf("PostgreSQL %s answered on a read-only session (max_connections %s)", version, maxConn), nil
}

// Run runs one plan entry's statement and turns its rows into readings.
func (p *postgres) Run(ctx context.Context, q Query) (Result, error) {
	e, ok := entry(TypePostgres, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no postgres plan entry %q", ErrBadQuery, q.Entry)
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return Result{}, err
	}
	defer conn.Close(context.Background())
	host := ""
	if u, err := url.Parse(p.cfg.URL); err == nil {
		host = u.Host + u.Path
	}
	at := time.Now().UTC()
	switch e.ID {
	case "statement_stats":
		return p.statementStats(ctx, conn, e, q, at)
	}
	rows, err := conn.Query(ctx, q.Text)
	if err != nil {
		return Result{}, pgError(err)
	}
	vals, err := pgx.CollectRows(rows, pgx.RowToMap)
	if err != nil {
		return Result{}, pgError(err)
	}
	var rs []analyzer.Reading
	add := func(r analyzer.Reading, what string) {
		r.Unit, r.At = firstNonEmpty(r.Unit, e.Unit), at
		r.Render(what)
		rs = append(rs, r)
	}
	switch e.ID {
	case "connections":
		for _, v := range vals {
			add(analyzer.Reading{Signal: e.Signal, Value: num(v["connections"]), Limit: num(v["max_connections"]),
				Labels: map[string]string{"server": host}}, e.What+" against max_connections")
		}
	case "connection_limits":
		for _, v := range vals {
			kind, name := str(v["kind"]), str(v["name"])
			add(analyzer.Reading{Signal: e.Signal, Value: num(v["connections"]), Limit: num(v["connection_limit"]),
				Labels: map[string]string{kind: name, "server": host}}, fmt.Sprintf("connections of %s %s against its CONNECTION LIMIT", kind, name))
		}
	case "lock_waits":
		for _, v := range vals {
			add(analyzer.Reading{Signal: analyzer.SignalLockWait, Value: num(v["waiting_seconds"]), Labels: map[string]string{
				"pid": str(v["pid"]), "user": str(v["usename"]), "database": str(v["datname"]), "wait_event": str(v["wait_event"]),
				"query": redactSQL(str(v["query"])), "blocked_by": str(v["blocked_by"]), "blocker_state": str(v["blocker_state"]),
				"blocker_transaction_age": fmt.Sprintf("%.0fs", num(v["blocker_xact_seconds"])), "blocker_query": redactSQL(str(v["blocker_query"])),
			}}, "session waiting on a lock held by pid "+str(v["blocked_by"]))
		}
		add(analyzer.Reading{Signal: analyzer.SignalLockWaits, Value: float64(len(vals)), Unit: analyzer.UnitCount,
			Labels: map[string]string{"server": host}}, "sessions waiting on locks")
	case "long_running_statements":
		for _, v := range vals {
			add(analyzer.Reading{Signal: e.Signal, Value: num(v["running_seconds"]), Labels: map[string]string{
				"pid": str(v["pid"]), "user": str(v["usename"]), "database": str(v["datname"]),
				"wait": strings.Trim(str(v["wait_event_type"])+"/"+str(v["wait_event"]), "/"), "query": redactSQL(str(v["query"])),
			}}, "statement running")
		}
	}
	res := Result{Readings: rs}
	if len(rs) == 0 {
		res.Note = "no rows"
	}
	return res, nil
}

// statementStats reads pg_stat_statements when the extension is installed
// and loaded; without it, the note says so and the long-running statements of
// pg_stat_activity stand in.
func (p *postgres) statementStats(ctx context.Context, conn *pgx.Conn, e PlanEntry, q Query, at time.Time) (Result, error) {
	var version string
	err := conn.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'pg_stat_statements'`).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{Note: "pg_stat_statements is not installed; slow statements come from pg_stat_activity only"}, nil
	}
	if err != nil {
		return Result{}, pgError(err)
	}
	text := q.Text
	if older(version, "1.8") {
		text = strings.NewReplacer("mean_exec_time", "mean_time", "total_exec_time", "total_time").Replace(text)
	}
	rows, err := conn.Query(ctx, text)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55000" {
			return Result{Note: "pg_stat_statements is installed but not loaded (shared_preload_libraries)"}, nil
		}
		return Result{}, pgError(err)
	}
	vals, err := pgx.CollectRows(rows, pgx.RowToMap)
	if err != nil {
		return Result{}, pgError(err)
	}
	var rs []analyzer.Reading
	for _, v := range vals {
		r := analyzer.Reading{Signal: e.Signal, Value: num(v["mean_seconds"]), Unit: e.Unit, At: at, Labels: map[string]string{
			"query": redactSQL(str(v["query"])), "calls": fmt.Sprintf("%.0f", num(v["calls"])),
		}}
		r.Render(e.What)
		rs = append(rs, r)
	}
	return Result{Readings: rs}, nil
}

// older reports whether version a is below b (dotted numbers).
func older(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// sqlSecret finds a quoted literal after a word that marks a secret, so a
// statement another session runs (ALTER ROLE … PASSWORD '…') is shown
// without it.
var sqlSecret = regexp.MustCompile(`(?i)\b(password|secret|token|key)(\s*(=|:)?\s*)'[^']*'`)

func redactSQL(q string) string {
	return sqlSecret.ReplaceAllString(strings.Join(strings.Fields(q), " "), "$1$2'"+maskedPassword+"'")
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}
