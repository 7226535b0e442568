package clip

import (
	"testing"
	"unicode/utf8"
)

func TestToCutsOnARuneBoundary(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"},
		{"日本語", 4, "日…"},
	} {
		if got := To(c.in, c.n); got != c.want || !utf8.ValidString(got) {
			t.Errorf("To(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
