package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Marks remembers short-lived facts that every API replica must agree on, such
// as "this signed delivery was already accepted" or "this key is unknown". The
// memory backend serves one process; the Redis backend shares marks across
// replicas, like the limiter's buckets.
type Marks interface {
	// Mark sets key for ttl and reports whether it was unset before, so of
	// concurrent callers exactly one is first.
	Mark(ctx context.Context, key string, ttl time.Duration) (first bool, err error)
	// Marked reports whether key is set.
	Marked(ctx context.Context, key string) (bool, error)
	// Forget unsets key.
	Forget(ctx context.Context, key string) error
}

var (
	_ Marks = (*Memory)(nil)
	_ Marks = (*Redis)(nil)
)

// markPrefix keeps marks apart from the limiter's buckets.
const markPrefix = "causeway:mark:"

// Mark implements Marks. A full table drops expired marks first and then
// arbitrary ones: forgetting a mark early at worst lets one replay or one
// lookup through, while unbounded growth would take the process down.
func (m *Memory) Mark(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if exp, ok := m.marks[key]; ok && now.Before(exp) {
		return false, nil
	}
	if len(m.marks) >= m.maxKeys {
		for k, exp := range m.marks {
			if !now.Before(exp) || len(m.marks) >= m.maxKeys {
				delete(m.marks, k)
			}
		}
	}
	m.marks[key] = now.Add(ttl)
	return true, nil
}

// Marked implements Marks.
func (m *Memory) Marked(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.marks[key]
	return ok && m.now().Before(exp), nil
}

// Forget implements Marks.
func (m *Memory) Forget(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.marks, key)
	return nil
}

// Mark implements Marks with SET NX PX, atomic in Redis.
func (r *Redis) Mark(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	ok, err := r.client.SetNX(ctx, markPrefix+key, 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("ratelimit: redis: %w", err)
	}
	return ok, nil
}

// Marked implements Marks.
func (r *Redis) Marked(ctx context.Context, key string) (bool, error) {
	n, err := r.client.Exists(ctx, markPrefix+key).Result()
	if err != nil {
		return false, fmt.Errorf("ratelimit: redis: %w", err)
	}
	return n > 0, nil
}

// Forget implements Marks.
func (r *Redis) Forget(ctx context.Context, key string) error {
	if err := r.client.Del(ctx, markPrefix+key).Err(); err != nil {
		return fmt.Errorf("ratelimit: redis: %w", err)
	}
	return nil
}
