// Package testenv gives tests the real components they need and decides what
// happens when one is missing: a skip on a developer's machine, a failure
// when CAUSEWAY_REQUIRE_ALL is set (CI sets it, so nothing skips there).
package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/promlab"
)

// Require stops t when a component is missing: it fails under
// CAUSEWAY_REQUIRE_ALL and skips otherwise, saying why either way.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CAUSEWAY_REQUIRE_ALL") != "" {
		t.Fatalf("%s is required (CAUSEWAY_REQUIRE_ALL is set): %v", what, err)
	}
	t.Skipf("%s not available: %v", what, err)
}

// Prometheus starts a real Prometheus holding series and stops it by its
// process id when t ends, also when t fails.
func Prometheus(t testing.TB, series []promlab.Series) *promlab.Server {
	t.Helper()
	_, _, err := promlab.Binaries()
	Require(t, "Prometheus", err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := promlab.Start(ctx, t.TempDir(), series, promlab.Options{})
	if err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// PostgresURL is the server tests use (CAUSEWAY_TEST_DATABASE_URL), or a
// skip (a failure under CAUSEWAY_REQUIRE_ALL) when none is configured.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("CAUSEWAY_TEST_DATABASE_URL")
	if u == "" {
		Require(t, "PostgreSQL", errNoPostgres)
	}
	return u
}

// missing is a component that is not there, said in one sentence.
type missing string

// Error is the sentence.
func (m missing) Error() string { return string(m) }

const errNoPostgres = missing("CAUSEWAY_TEST_DATABASE_URL is not set")
