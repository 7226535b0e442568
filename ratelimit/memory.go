package ratelimit

import (
	"context"
	"sync"
	"time"
)

const (
	// defaultMaxKeys bounds the memory backend's state. An entry costs
	// roughly 100 bytes plus its key, so this stays in the tens of MiB.
	defaultMaxKeys = 100_000
	// sweepInterval is how often idle keys are purged on the request path.
	sweepInterval = time.Minute
)

// Memory is the in-process GCRA limiter for single-instance deployments and
// tests. It is safe for concurrent use. A key is forgotten once its bucket
// has refilled (which is indistinguishable from never having been seen), so
// memory tracks only keys active within the last minute, and a hard cap
// bounds it even under a flood of distinct keys.
type Memory struct {
	mu        sync.Mutex
	tat       map[string]time.Time // theoretical arrival time per key
	marks     map[string]time.Time // expiry per mark (see Marks)
	now       func() time.Time
	maxKeys   int
	lastSweep time.Time
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns an empty in-memory limiter using the wall clock.
func NewMemory() *Memory {
	return &Memory{
		tat:     make(map[string]time.Time),
		marks:   make(map[string]time.Time),
		now:     time.Now,
		maxKeys: defaultMaxKeys,
	}
}

// Allow implements Limiter with the same GCRA arithmetic as the Redis
// backend: burst equal to perMinute, one request refilled every
// minute/perMinute.
func (m *Memory) Allow(_ context.Context, key string, perMinute int) (Result, error) {
	if perMinute <= 0 {
		return unlimited(), nil
	}
	t := emissionInterval(perMinute)
	burstOffset := t * time.Duration(perMinute)

	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.maybeSweep(now)

	tat, ok := m.tat[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	newTat := tat.Add(t)
	diff := now.Sub(newTat.Add(-burstOffset))
	if diff < 0 {
		return Result{
			Allowed:    false,
			Limit:      perMinute,
			Remaining:  0,
			ResetAfter: tat.Sub(now),
			RetryAfter: -diff,
		}, nil
	}
	if !ok {
		m.makeRoom(now)
	}
	m.tat[key] = newTat
	return Result{
		Allowed:    true,
		Limit:      perMinute,
		Remaining:  int(diff / t),
		ResetAfter: newTat.Sub(now),
	}, nil
}

// Backend implements Limiter.
func (m *Memory) Backend() string { return "memory" }

// Ping implements Limiter; process memory is always available.
func (m *Memory) Ping(context.Context) error { return nil }

// maybeSweep drops keys whose buckets are full again, at most once per
// sweepInterval so the O(n) pass is amortised over many requests.
func (m *Memory) maybeSweep(now time.Time) {
	if now.Sub(m.lastSweep) < sweepInterval {
		return
	}
	m.sweep(now)
}

func (m *Memory) sweep(now time.Time) {
	m.lastSweep = now
	for k, tat := range m.tat {
		if !tat.After(now) {
			delete(m.tat, k)
		}
	}
}

// makeRoom keeps the map under maxKeys before a new key is inserted. If no
// idle key can be dropped it evicts an arbitrary active one, which at worst
// resets that key's budget: failing open for one key beats unbounded growth.
func (m *Memory) makeRoom(now time.Time) {
	if len(m.tat) < m.maxKeys {
		return
	}
	if now.Sub(m.lastSweep) >= time.Second {
		m.sweep(now)
	}
	for k := range m.tat {
		if len(m.tat) < m.maxKeys {
			return
		}
		delete(m.tat, k)
	}
}
