// Package testenv decides what a test does when something it needs from the
// machine is missing: a program (prometheus, chromium), a service (PostgreSQL,
// Redis) or a data set. On a developer's laptop such a test skips and says what
// to install; in CI, where .ci/run sets everything up and exports
// CAUSEWAY_REQUIRE_ALL=1, the same test fails, because a skip there would hide a
// test that never ran behind a green build.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/causeway/causeway/internal/promlab"
)

// RequireAllVar is the environment variable that turns every environmental skip
// into a failure.
const RequireAllVar = "CAUSEWAY_REQUIRE_ALL"

// RequireAll reports whether CAUSEWAY_REQUIRE_ALL asks for every test to run.
func RequireAll() bool {
	v, err := strconv.ParseBool(os.Getenv(RequireAllVar))
	return err == nil && v
}

// Missing ends the test because something it needs from the environment is
// absent: a skip normally, a failure under CAUSEWAY_REQUIRE_ALL. Use it for
// environmental reasons only; a test that skips because of what the code under
// test returned is a test that cannot fail.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireAll() {
		t.Fatalf("%s (%s is set, so a missing dependency fails the test instead of skipping it)", msg, RequireAllVar)
		return
	}
	t.Skip(msg)
}

// Program returns the path of the named executable, or ends the test as Missing.
// A path with a slash is checked as given; a bare name is looked up on PATH.
func Program(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed: %v", name, err)
	}
	return p
}

// Dir returns dir when it is an existing directory (a data set that lives
// outside the repository), or ends the test as Missing.
func Dir(t testing.TB, dir, what string) string {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		Missing(t, "%s not found at %s: %v", what, dir, err)
	}
	return dir
}

// DatabaseURL returns CAUSEWAY_TEST_DATABASE_URL, or ends the test as Missing
// when a test can only run on PostgreSQL and it is not set.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("CAUSEWAY_TEST_DATABASE_URL")
	if u == "" {
		Missing(t, "this test needs PostgreSQL: set CAUSEWAY_TEST_DATABASE_URL")
	}
	return u
}

var (
	redisOnce sync.Once
	redisErr  error
)

// RedisURL returns CAUSEWAY_TEST_REDIS_URL (default redis://127.0.0.1:6379/0)
// once a PING has answered, or ends the test as Missing. The server is probed
// once per test binary.
func RedisURL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv("CAUSEWAY_TEST_REDIS_URL")
	if raw == "" {
		raw = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("CAUSEWAY_TEST_REDIS_URL %q: %v", raw, err)
	}
	redisOnce.Do(func() {
		probe := *opts
		probe.MaxRetries = -1
		probe.DialerRetries = 1
		c := redis.NewClient(&probe)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		redisErr = c.Ping(ctx).Err()
	})
	if redisErr != nil {
		Missing(t, "redis is not reachable at %s (%v): start one or set CAUSEWAY_TEST_REDIS_URL", opts.Addr, redisErr)
	}
	return raw
}

// ScenariosDir returns the directory of the public example scenarios, one per
// root-cause category: CAUSEWAY_SCENARIOS_DIR when set, else the copy kept in
// the repository (analyzer/testdata/public), so a clean clone has it.
func ScenariosDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("CAUSEWAY_SCENARIOS_DIR"); d != "" {
		return Dir(t, d, "public scenarios (CAUSEWAY_SCENARIOS_DIR)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("find the repository root: %v", err)
	}
	return Dir(t, filepath.Join(root, "analyzer", "testdata", "public"), "public scenarios (set CAUSEWAY_SCENARIOS_DIR)")
}

// moduleRoot walks up from the working directory (a test's package directory)
// to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Require ends the test as Missing when err says a component is not available.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		Missing(t, "%s not available: %v", what, err)
	}
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
