package egress

import (
	"net/http"
	"strconv"
	"time"
)

// RetryAfter parses a Retry-After header (delay seconds or an HTTP date), so
// every caller of a remote system waits as long as it asked; zero when absent
// or unparseable.
func RetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}
