package remediation

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/internal/testdb"
)

// TestSQLStepErrorsDoNotQuoteData shows a failed statement reports only its
// number, the error class and its code: a database's own message can quote the
// data a statement read (a failed cast prints the value), which would let a
// runbook read a database through its step errors.
func TestSQLStepErrorsDoNotQuoteData(t *testing.T) {
	dsn := testdb.URL(t)
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(t.TempDir(), "target.db")
	}
	a := &Activities{SQLTargets: SQLTargets{DSNs: map[string]string{"main": dsn}, Tenants: map[string][]string{"main": {"ten_1"}}}}
	leak := "SELECT CAST('secret-token-42' AS integer) + (SELECT 1 FROM secret_table_name)"
	if strings.HasPrefix(dsn, "sqlite:") {
		leak = "INSERT INTO secret_table_name VALUES ('secret-token-42')"
	}
	params := map[string]any{"target": "main", "statements": []any{"SELECT 1", leak}}
	err := (sqlStep{}).run(context.Background(), a, stepCall{Params: params, Key: "remediation/rem_leak/step/0", TenantID: "ten_1"})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Fatalf("error %v, want a non-retryable step failure", err)
	}
	if msg := app.Error(); strings.Contains(msg, "secret") || !strings.Contains(msg, "statement 2") {
		t.Fatalf("step error %q quotes the database's message", msg)
	}
	if app.Unwrap() != nil && strings.Contains(app.Unwrap().Error(), "secret") {
		t.Fatalf("step error's cause %q quotes the database's message", app.Unwrap())
	}
}

// TestSQLStepRechecksTenantBeforeRunning shows the target list is checked
// again when the step runs, with the remediation's tenant: a remediation
// proposed while a tenant could use a target does not run after the operator
// took the target away, nor for another tenant.
func TestSQLStepRechecksTenantBeforeRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.db")
	a := &Activities{SQLTargets: SQLTargets{DSNs: map[string]string{"main": "sqlite:" + path}, Tenants: map[string][]string{"main": {"ten_1"}}}}
	params := map[string]any{"target": "main", "statements": []any{"CREATE TABLE t (n INTEGER)"}}
	for _, tenant := range []string{"ten_2", ""} {
		err := (sqlStep{}).run(context.Background(), a, stepCall{Params: params, Key: "remediation/rem_x/step/0", TenantID: tenant})
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeStepBadParams {
			t.Errorf("tenant %q: %v, want a refusal", tenant, err)
		}
	}
	a.SQLTargets.Tenants = nil
	if err := (sqlStep{}).run(context.Background(), a, stepCall{Params: params, Key: "remediation/rem_x/step/0", TenantID: "ten_1"}); err == nil {
		t.Error("ran after the operator removed the tenant's entry")
	}
}
