package egress

import (
	"testing"
	"time"
)

// TestRetryAfter reads both forms RFC 9110 allows (delay seconds and an HTTP
// date) and ignores what is absent, malformed or already past.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{"Sat, 28 Nov 2026 12:01:30 GMT", 90 * time.Second},
		{"Sat, 28 Nov 2026 11:59:00 GMT", 0},
	} {
		if got := RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
