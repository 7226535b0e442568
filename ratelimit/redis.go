package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// keyPrefix namespaces Causeway's buckets inside redis_rate's own "rate:"
// prefix so they cannot collide with other users of the same Redis.
const keyPrefix = "causeway:"

// Redis is the shared GCRA limiter used when the API runs as several
// replicas: the bucket state lives in Redis and is updated atomically by a
// Lua script, so every replica enforces one budget per key.
type Redis struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
}

var _ Limiter = (*Redis)(nil)

// NewRedis returns a limiter storing its buckets through client. The client
// is not closed by the limiter; its owner controls its lifetime.
func NewRedis(client *redis.Client) *Redis {
	return &Redis{client: client, limiter: redis_rate.NewLimiter(client)}
}

// Allow implements Limiter using redis_rate.PerMinute(perMinute), i.e. a
// burst equal to the per-minute limit.
func (r *Redis) Allow(ctx context.Context, key string, perMinute int) (Result, error) {
	if perMinute <= 0 {
		return unlimited(), nil
	}
	res, err := r.limiter.Allow(ctx, keyPrefix+key, redis_rate.PerMinute(perMinute))
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	out := Result{
		Allowed:    res.Allowed > 0,
		Limit:      perMinute,
		ResetAfter: redisDuration(res.ResetAfter),
	}
	if out.Allowed {
		out.Remaining = remainingFromReset(out.ResetAfter, perMinute)
	} else {
		out.RetryAfter = redisDuration(res.RetryAfter)
	}
	return out, nil
}

// redisDuration strips float noise from a duration computed by the Lua
// script. The script works in float seconds since 2017, whose precision is
// tens of nanoseconds, while Redis TIME only has microsecond resolution, so
// rounding to the microsecond recovers the intended value.
func redisDuration(d time.Duration) time.Duration {
	return max(d.Round(time.Microsecond), 0)
}

// remainingFromReset recomputes Remaining from ResetAfter. redis_rate
// truncates a float quotient, which turns an exact 99 into 98.999… and
// reports 98; deriving it here, with a microsecond of tolerance, gives the
// same value as the memory backend.
func remainingFromReset(resetAfter time.Duration, perMinute int) int {
	free := time.Minute - resetAfter + time.Microsecond
	if free <= 0 {
		return 0
	}
	n := int(float64(free) / float64(time.Minute) * float64(perMinute))
	return min(n, perMinute)
}

// Backend implements Limiter.
func (r *Redis) Backend() string { return "redis" }

// Ping implements Limiter by round-tripping a PING to the server.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ratelimit: redis: %w", err)
	}
	return nil
}
