//go:build faults

package e2e

import (
	"math"
	"net/http"
	"testing"
	"time"
)

// rdLimit is the per-minute limit of the Redis test: small, so a burst of
// rdLimit+rdOver requests crosses it in well under the 60/rdLimit seconds one
// request takes to refill.
const (
	rdLimit = 12
	rdOver  = 8
)

// limitedBurst sends n GET /v1/incidents as fast as it can and counts the
// answers: allowed (200), limited (429 rate_limited with Retry-After), and how
// many carried the limiter's X-RateLimit-Limit header. Any other answer fails
// the test.
type burstResult struct {
	allowed, limited, withHeaders int
	elapsed                       time.Duration
}

func limitedBurst(t *testing.T, e *env, token string, n int) burstResult {
	t.Helper()
	var r burstResult
	start := time.Now()
	for range n {
		st, raw, h := e.raw(t, "GET", "/v1/incidents", token, nil)
		switch st {
		case http.StatusOK:
			r.allowed++
		case http.StatusTooManyRequests:
			if h.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After: %s", raw)
			}
			r.limited++
		default:
			t.Errorf("GET /v1/incidents: %d %s", st, raw)
		}
		if h.Get("X-RateLimit-Limit") != "" {
			r.withHeaders++
		}
	}
	r.elapsed = time.Since(start)
	return r
}

// refilled is how many requests the limiter may have refilled while a burst
// ran: one per 60/limit seconds, plus one for a refill that fell just inside.
func refilled(limit int, elapsed time.Duration) int {
	return int(math.Floor(elapsed.Seconds()/(60/float64(limit)))) + 1
}

// expectLimited checks a burst against the limit: the first rdLimit allowed,
// then only what refilled meanwhile.
func expectLimited(t *testing.T, phase string, r burstResult, n int) {
	t.Helper()
	if r.allowed < rdLimit || r.allowed > rdLimit+refilled(rdLimit, r.elapsed) || r.allowed+r.limited != n || r.withHeaders != n {
		t.Errorf("%s: %d allowed, %d limited, %d with rate-limit headers of %d in %s; want %d allowed (+%d refilled at most), the rest limited",
			phase, r.allowed, r.limited, r.withHeaders, n, r.elapsed.Round(time.Millisecond), rdLimit, refilled(rdLimit, r.elapsed))
	}
}

// TestFaultRedisDown kills the rate limiter's Redis under a running Causeway:
// requests then fail open (all allowed, none limited, none failing), alerts
// are still ingested and /health/detailed says degraded, not unhealthy. When an
// empty Redis comes back on the same address, limiting resumes by itself.
func TestFaultRedisDown(t *testing.T) {
	rd := startRedis(t)
	cfg := testConfig(t)
	cfg.RedisURL = rd.URL()
	cfg.RateLimitPerMinute = rdLimit
	e := newEnvWith(t, cfg)
	e.awaitHealth(t, 10*time.Second, "healthy", map[string]string{"redis": "healthy"})
	// Each phase uses its own tenant, so no phase inherits another's budget.
	tokenUp, _ := e.signup(t, "redis-up")
	tokenDown, tenantDown := e.signup(t, "redis-down")
	tokenBack, _ := e.signup(t, "redis-back")
	// The key is made while Redis is up, within the tenant's budget.
	key, secret := e.hookKey(t, tokenDown)
	n := rdLimit + rdOver

	up := limitedBurst(t, e, tokenUp, n)
	expectLimited(t, "Redis up", up, n)
	t.Logf("Redis up: %d allowed, %d limited of %d in %s", up.allowed, up.limited, n, up.elapsed.Round(time.Millisecond))

	rd.Kill()
	downAt := time.Now()
	h := e.awaitHealth(t, 10*time.Second, "degraded", map[string]string{"redis": "unhealthy", "postgres": "healthy", "temporal": "healthy"})
	t.Logf("health while Redis is down: %+v", h)
	down := limitedBurst(t, e, tokenDown, n)
	if down.allowed != n || down.limited != 0 || down.withHeaders != 0 {
		t.Errorf("Redis down: %d allowed, %d limited, %d with rate-limit headers of %d; want all allowed without headers (fail open)",
			down.allowed, down.limited, down.withHeaders, n)
	}
	// Failing open must not cost a reconnection loop per request: the pool's
	// default of five dials 100 ms apart added 400 ms to every request. The
	// bound is far above a request's own cost (milliseconds) and far below
	// that loop.
	if per := down.elapsed / time.Duration(n); per > 150*time.Millisecond {
		t.Errorf("Redis down: %s per request, want the limiter to give up at once", per.Round(time.Millisecond))
	}
	st, out := e.alert(t, tenantDown, key, secret, firing("redis-down-1"))
	if st != http.StatusAccepted {
		t.Errorf("alert while Redis is down: %d %v, want 202", st, out)
	}
	t.Logf("Redis down: %d of %d allowed in %s, alert %d", down.allowed, n, down.elapsed.Round(time.Millisecond), st)

	e.endOutage(t, "redis", downAt, 0, rd.Restart)
	back := limitedBurst(t, e, tokenBack, n)
	expectLimited(t, "Redis back", back, n)
	t.Logf("Redis back: %d allowed, %d limited of %d in %s", back.allowed, back.limited, n, back.elapsed.Round(time.Millisecond))
}
