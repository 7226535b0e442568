package testenv

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that remembers how a helper ended the test instead of
// ending the real one.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = true
	r.msg = args[0].(string)
}
func (r *recorder) Fatalf(format string, args ...any) { r.failed = true }

func TestMissingSkipsOnlyWithoutRequireAll(t *testing.T) {
	for _, tc := range []struct {
		env                 string
		wantSkip, wantFatal bool
	}{
		{"", true, false},
		{"0", true, false},
		{"false", true, false},
		{"1", false, true},
		{"true", false, true},
	} {
		t.Run("CAUSEWAY_REQUIRE_ALL="+tc.env, func(t *testing.T) {
			t.Setenv(RequireAllVar, tc.env)
			r := &recorder{TB: t}
			Missing(r, "prometheus is not installed")
			if r.skipped != tc.wantSkip || r.failed != tc.wantFatal {
				t.Fatalf("skipped %v, failed %v; want skipped %v, failed %v", r.skipped, r.failed, tc.wantSkip, tc.wantFatal)
			}
			if r.skipped && r.msg != "prometheus is not installed" {
				t.Fatalf("skip message %q", r.msg)
			}
		})
	}
}

func TestProgramAndDir(t *testing.T) {
	t.Setenv(RequireAllVar, "1")
	r := &recorder{TB: t}
	Program(r, "causeway-no-such-program")
	if !r.failed {
		t.Fatal("a missing program did not fail under CAUSEWAY_REQUIRE_ALL")
	}
	r = &recorder{TB: t}
	Dir(r, filepath.Join(t.TempDir(), "absent"), "scenarios")
	if !r.failed {
		t.Fatal("a missing directory did not fail under CAUSEWAY_REQUIRE_ALL")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	r = &recorder{TB: t}
	if got := Program(r, "sh"); got != sh || r.failed || r.skipped {
		t.Fatalf("Program(sh) = %q, failed %v, skipped %v", got, r.failed, r.skipped)
	}
	dir := t.TempDir()
	if got := Dir(r, dir, "tmp"); got != dir || r.failed || r.skipped {
		t.Fatalf("Dir = %q, failed %v", got, r.failed)
	}
}

func TestDatabaseURL(t *testing.T) {
	t.Setenv(RequireAllVar, "1")
	t.Setenv("CAUSEWAY_TEST_DATABASE_URL", "")
	r := &recorder{TB: t}
	DatabaseURL(r)
	if !r.failed {
		t.Fatal("an unset database URL did not fail under CAUSEWAY_REQUIRE_ALL")
	}
}
