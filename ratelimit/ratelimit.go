// Package ratelimit limits request rates per tenant (API) and per API key
// (webhooks) using GCRA, the generic cell rate algorithm: each key may burst
// up to its per-minute limit and then refills steadily at limit/60 requests
// per second. The Redis backend shares state across API replicas; the memory
// backend serves single-process deployments and tests with the same
// semantics.
package ratelimit

import (
	"context"
	"time"
)

// Result is the outcome of one Allow call, carrying everything the HTTP layer
// needs for the rate_limited error and the X-RateLimit-* / Retry-After
// headers. Durations are exact; headers round them up to whole seconds.
type Result struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the per-minute limit that was applied; 0 means no limit
	// applies and callers should omit rate-limit headers.
	Limit int
	// Remaining is how many more requests would be allowed right now.
	Remaining int
	// ResetAfter is the time until the bucket is full again.
	ResetAfter time.Duration
	// RetryAfter is 0 when allowed, otherwise the time until the next
	// request would be allowed.
	RetryAfter time.Duration
}

// Limiter is implemented by both backends so the API can pick one at startup
// (Redis when configured, memory otherwise) without changing call sites.
type Limiter interface {
	// Allow records one request for key and reports whether it fits within
	// perMinute. perMinute <= 0 means unlimited: the request is allowed
	// without touching the backend. An error means the decision could not
	// be made (backend unavailable); the caller chooses to fail open or
	// closed.
	Allow(ctx context.Context, key string, perMinute int) (Result, error)
	// Backend names the implementation ("redis" or "memory"); it doubles as
	// the key under which the health endpoint reports the limiter.
	Backend() string
	// Ping checks that the backend can serve Allow, for health checks.
	Ping(ctx context.Context) error
}

// unlimited is the Result for perMinute <= 0.
func unlimited() Result {
	return Result{Allowed: true}
}

// emissionInterval is the GCRA spacing between requests at the steady rate.
func emissionInterval(perMinute int) time.Duration {
	t := time.Minute / time.Duration(perMinute)
	if t <= 0 {
		t = 1
	}
	return t
}
