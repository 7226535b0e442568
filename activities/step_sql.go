package activities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
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
// CAUSEWAY_SQL_TARGETS; runbooks never carry connection strings.
type sqlParams struct {
	Target     string   `json:"target"`
	Statements []string `json:"statements"`
}

// sqlStep runs its statements in one transaction on a named target database,
// exactly once: the ledger row is inserted first in that transaction, so a retry
// (or a concurrent duplicate) finds it and applies nothing.
type sqlStep struct{}

func (sqlStep) parse(p map[string]any, targets map[string]string) (sqlParams, error) {
	var sp sqlParams
	if err := decodeParams(p, &sp); err != nil {
		return sp, err
	}
	if _, ok := targets[sp.Target]; !ok {
		return sp, fmt.Errorf("params.target %q is not a configured SQL target (CAUSEWAY_SQL_TARGETS)", sp.Target)
	}
	if len(sp.Statements) == 0 || len(sp.Statements) > maxStatements {
		return sp, fmt.Errorf("params.statements must hold 1 to %d statements", maxStatements)
	}
	for i, s := range sp.Statements {
		if strings.TrimSpace(s) == "" {
			return sp, fmt.Errorf("params.statements[%d] is empty", i)
		}
	}
	return sp, nil
}

func (s sqlStep) check(p map[string]any, _ bool, targets map[string]string) error {
	_, err := s.parse(p, targets)
	return err
}

func (s sqlStep) run(ctx context.Context, a *Activities, p map[string]any, key string) error {
	sp, err := s.parse(p, a.SQLTargets)
	if err != nil {
		return badParams(err)
	}
	driver, dsn := SQLDriver(a.SQLTargets[sp.Target])
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return badParams(err)
	}
	defer db.Close()
	return applyOnce(ctx, db, driver, sp.Statements, key)
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

func applyOnce(ctx context.Context, db *sql.DB, driver string, statements []string, key string) error {
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
	for i, stmt := range statements {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return classifySQL(fmt.Errorf("statement %d: %w", i+1, err))
		}
	}
	return classifySQL(tx.Commit())
}

// classifySQL retries what a retry can fix (connection loss, serialization
// failures, deadlocks, a busy SQLite file) and fails the step on anything the
// database itself refused (syntax, constraints, permissions).
func classifySQL(err error) error {
	if err == nil {
		return nil
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		if pg.Code == "40001" || pg.Code == "40P01" || strings.HasPrefix(pg.Code, "08") || strings.HasPrefix(pg.Code, "57") {
			return temporal.NewApplicationErrorWithCause(shorten(err.Error()), ErrTypeStepUnavailable, err)
		}
		return temporal.NewNonRetryableApplicationError(shorten(err.Error()), ErrTypeStepRejected, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "SQL logic error") || strings.Contains(msg, "constraint failed") || strings.Contains(msg, "syntax error") {
		return temporal.NewNonRetryableApplicationError(shorten(msg), ErrTypeStepRejected, err)
	}
	return temporal.NewApplicationErrorWithCause(shorten(msg), ErrTypeStepUnavailable, err)
}
