package remediation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	// database/sql driver "pgx" for PostgreSQL targets; SQLite targets use the
	// pure-Go "sqlite" driver the store already registers.
	_ "github.com/jackc/pgx/v5/stdlib"
	"go.temporal.io/sdk/temporal"
)

// LedgerTable is created in every SQL target: one row per applied step, keyed by
// the step's idempotency key, written in the same transaction as the statements.
const LedgerTable = "causeway_remediation_ledger"

// maxStatements bounds one migration step.
const maxStatements = 50

// sqlParams are the params of a sql_migration step. Target names a database from
// CAUSEWAY_SQL_TARGETS; runbooks never carry connection strings. Args holds the
// bind parameters the templates of each statement became (see RenderParams);
// a runbook cannot set it.
type sqlParams struct {
	Target     string     `json:"target"`
	Statements []string   `json:"statements"`
	Args       [][]string `json:"args,omitempty"`
}

// SQLTargets are the databases sql_migration steps may change and who may use
// each: DSNs by name (CAUSEWAY_SQL_TARGETS) and, by name, the tenant ids allowed
// to use it or "*" for every tenant (CAUSEWAY_SQL_TARGET_TENANTS). A target
// without an entry is usable by nobody.
type SQLTargets struct {
	DSNs    map[string]string
	Tenants map[string][]string
}

// usable says why tenantID may not use the target name, or nil when it may.
// An unknown target and a forbidden one get the same answer, so a tenant
// cannot learn which targets exist.
func (t SQLTargets) usable(name, tenantID string) error {
	if _, ok := t.DSNs[name]; ok {
		for _, id := range t.Tenants[name] {
			if id == "*" || (id == tenantID && tenantID != "") {
				return nil
			}
		}
	}
	return fmt.Errorf("params.target %q is not a SQL target this tenant may use (the operator lists them in CAUSEWAY_SQL_TARGETS and CAUSEWAY_SQL_TARGET_TENANTS)", name)
}

// sqlStep runs its statements in one transaction on a named target database,
// exactly once: the ledger row is inserted first in that transaction, so a retry
// (or a concurrent duplicate) finds it and applies nothing.
type sqlStep struct{}

func (sqlStep) parse(p map[string]any, rendered bool, env checkEnv) (sqlParams, error) {
	var sp sqlParams
	if err := decodeParams(p, &sp); err != nil {
		return sp, err
	}
	if templated(sp.Target) {
		return sp, fmt.Errorf("params.target must name a target, not hold a template")
	}
	if err := env.targets.usable(sp.Target, env.tenantID); err != nil {
		return sp, err
	}
	if len(sp.Statements) == 0 || len(sp.Statements) > maxStatements {
		return sp, fmt.Errorf("params.statements must hold 1 to %d statements", maxStatements)
	}
	for i, s := range sp.Statements {
		if strings.TrimSpace(s) == "" {
			return sp, fmt.Errorf("params.statements[%d] is empty", i)
		}
		if !rendered {
			if _, err := checkSQLTemplate(i, s); err != nil {
				return sp, err
			}
		}
	}
	switch {
	case !rendered && sp.Args != nil:
		return sp, fmt.Errorf("params.args is filled in from the statements' templates; write templates in the statements instead")
	case sp.Args != nil && len(sp.Args) != len(sp.Statements):
		return sp, fmt.Errorf("params.args must hold one list per statement")
	}
	return sp, nil
}

func (s sqlStep) check(p map[string]any, rendered bool, env checkEnv) error {
	_, err := s.parse(p, rendered, env)
	return err
}

// run checks again, with the remediation's tenant, that the target may be used:
// the operator may have narrowed the list since the runbook was written.
func (s sqlStep) run(ctx context.Context, a *Activities, c stepCall) error {
	sp, err := s.parse(c.Params, true, checkEnv{targets: a.SQLTargets, tenantID: c.TenantID})
	if err != nil {
		return badParams(err)
	}
	driver, dsn := SQLDriver(a.SQLTargets.DSNs[sp.Target])
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return badParams(fmt.Errorf("target %q cannot be opened", sp.Target))
	}
	defer db.Close()
	return applyOnce(ctx, db, driver, sp, c.Key)
}

// SQLDriver maps a target DSN to its database/sql driver: postgres:// URLs use
// pgx, sqlite:<path> a SQLite file.
func SQLDriver(dsn string) (driver, source string) {
	if rest, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		return "sqlite", rest + "?_pragma=busy_timeout(10000)&_txlock=immediate"
	}
	return "pgx", dsn
}

// ensureLedger creates the ledger table if it is missing. On PostgreSQL two
// concurrent CREATE TABLE IF NOT EXISTS can both miss the table and one then
// fails with a unique violation on pg_type (23505) or 42P07, which would fail
// a step for good on the first use of a target; a transaction-scoped advisory
// lock on the table name serialises the creators instead. SQLite's
// immediate transactions already serialise writers.
func ensureLedger(ctx context.Context, db *sql.DB, driver string) error {
	create := "CREATE TABLE IF NOT EXISTS " + LedgerTable +
		" (idempotency_key VARCHAR(300) PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"
	if driver != "pgx" {
		_, err := db.ExecContext(ctx, create)
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('"+LedgerTable+"'))"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return err
	}
	return tx.Commit()
}

func applyOnce(ctx context.Context, db *sql.DB, driver string, sp sqlParams, key string) error {
	if err := ensureLedger(ctx, db, driver); err != nil {
		return classifySQL(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return classifySQL(err)
	}
	defer func() { _ = tx.Rollback() }()
	insert := "INSERT INTO " + LedgerTable + " (idempotency_key, applied_at) VALUES ($1, $2) ON CONFLICT (idempotency_key) DO NOTHING"
	if driver == "sqlite" {
		insert = strings.NewReplacer("$1", "?", "$2", "?").Replace(insert)
	}
	res, err := tx.ExecContext(ctx, insert, key, time.Now().UTC())
	if err != nil {
		return classifySQL(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return classifySQL(err)
	} else if n == 0 {
		return nil // applied by an earlier attempt
	}
	for i, stmt := range sp.Statements {
		var args []any
		if sp.Args != nil {
			for _, v := range sp.Args[i] {
				args = append(args, v)
			}
		}
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return classifySQL(&statementError{n: i + 1, err: err})
		}
	}
	return classifySQL(tx.Commit())
}

// classifySQL retries what a retry can fix (connection loss, serialization
// failures, deadlocks, a busy SQLite file) and fails the step on anything the
// database itself refused (syntax, constraints, permissions). The message keeps
// only the statement's number, the error class and its code: a database's own
// error text can quote the data a statement touched (a failed cast prints the
// value), and the step's error is shown to everyone in the tenant, so a
// runbook must not be a way to read a database through its errors.
func classifySQL(err error) error {
	if err == nil {
		return nil
	}
	where := "the target database"
	if n, ok := statementNumber(err); ok {
		where = fmt.Sprintf("statement %d", n)
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		msg := fmt.Sprintf("%s failed: SQLSTATE %s (%s)", where, pg.Code, sqlStateClass(pg.Code))
		if pg.Code == "40001" || pg.Code == "40P01" || strings.HasPrefix(pg.Code, "08") || strings.HasPrefix(pg.Code, "57") {
			return temporal.NewApplicationErrorWithCause(msg, ErrTypeStepUnavailable, nil)
		}
		return temporal.NewNonRetryableApplicationError(msg, ErrTypeStepRejected, nil)
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		code := lite.Code()
		name := sqlite.ErrorCodeString[code]
		if name == "" {
			name = sqlite.ErrorCodeString[code&0xff]
		}
		if name == "" {
			name = "SQLite error " + strconv.Itoa(code)
		}
		msg := fmt.Sprintf("%s failed: %s", where, name)
		if base := code & 0xff; base == sqlite3.SQLITE_BUSY || base == sqlite3.SQLITE_LOCKED || base == sqlite3.SQLITE_IOERR {
			return temporal.NewApplicationErrorWithCause(msg, ErrTypeStepUnavailable, nil)
		}
		return temporal.NewNonRetryableApplicationError(msg, ErrTypeStepRejected, nil)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return temporal.NewApplicationErrorWithCause(where+" did not answer in time", ErrTypeStepUnavailable, nil)
	}
	// Connection failures name hosts and users of the operator's network.
	return temporal.NewApplicationErrorWithCause(where+" could not be reached", ErrTypeStepUnavailable, nil)
}

// statementError carries which statement failed without its text.
type statementError struct {
	n   int
	err error
}

func (e *statementError) Error() string { return fmt.Sprintf("statement %d: %v", e.n, e.err) }
func (e *statementError) Unwrap() error { return e.err }

func statementNumber(err error) (int, bool) {
	var se *statementError
	if errors.As(err, &se) {
		return se.n, true
	}
	return 0, false
}

// sqlStateClass names the class of a SQLSTATE (its first two characters): the
// class says what went wrong without anything the statement touched.
func sqlStateClass(code string) string {
	if len(code) < 2 {
		return "unknown class"
	}
	switch code[:2] {
	case "08":
		return "connection exception"
	case "0A":
		return "feature not supported"
	case "21":
		return "cardinality violation"
	case "22":
		return "data exception"
	case "23":
		return "integrity constraint violation"
	case "25":
		return "invalid transaction state"
	case "28":
		return "invalid authorization specification"
	case "2B", "2D":
		return "transaction error"
	case "3D":
		return "invalid catalog name"
	case "3F":
		return "invalid schema name"
	case "40":
		return "transaction rollback"
	case "42":
		return "syntax error or access rule violation"
	case "53":
		return "insufficient resources"
	case "54":
		return "program limit exceeded"
	case "55":
		return "object not in prerequisite state"
	case "57":
		return "operator intervention"
	case "58":
		return "system error"
	case "P0":
		return "PL/pgSQL error"
	case "XX":
		return "internal error"
	}
	return "class " + code[:2]
}
