// Package testdb gives each test its own migrated database: a fresh PostgreSQL
// schema when CAUSEWAY_TEST_DATABASE_URL is set (CI), else a private in-memory
// SQLite. Test packages run in parallel, so sharing tables would make them flaky.
package testdb

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
)

// URL returns a connection URL for a new, empty schema (dropped when t ends), or ""
// when the tests run on SQLite. Under CAUSEWAY_REQUIRE_ALL (CI) PostgreSQL is
// mandatory: a suite that quietly fell back to SQLite would not test the database
// production runs on.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("CAUSEWAY_TEST_DATABASE_URL")
	if base == "" {
		if testenv.RequireAll() {
			t.Fatalf("CAUSEWAY_TEST_DATABASE_URL is not set and %s is: the suite must run on PostgreSQL", testenv.RequireAllVar)
		}
		return ""
	}
	schema := "t_" + strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(auth.RandomToken(9)))
	admin, err := models.Open(context.Background(), base, "")
	if err != nil {
		t.Fatalf("connect to CAUSEWAY_TEST_DATABASE_URL: %v", err)
	}
	defer admin.Close()
	if err := admin.DB().Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if a, err := models.Open(context.Background(), base, ""); err == nil {
			a.DB().Exec("DROP SCHEMA " + schema + " CASCADE")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse CAUSEWAY_TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open returns a migrated store for t.
func Open(t testing.TB) *models.Store {
	t.Helper()
	s, err := models.Open(context.Background(), URL(t), ":memory:")
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

// Describe names the database in use, for test logs.
func Describe() string {
	if os.Getenv("CAUSEWAY_TEST_DATABASE_URL") != "" {
		return "postgres"
	}
	return "sqlite (set CAUSEWAY_TEST_DATABASE_URL for postgres)"
}
