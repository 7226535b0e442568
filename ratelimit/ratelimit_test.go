package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/causeway/causeway/internal/testenv"
)

// fakeClock drives the memory backend deterministically.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newFakeMemory() (*Memory, *fakeClock) {
	clk := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := NewMemory()
	m.now = clk.Now
	return m, clk
}

// backend bundles a limiter with how a test lets time pass for it.
type backend struct {
	lim    Limiter
	prefix string
	exact  bool // time is frozen between calls, so results are exact
	wait   func(time.Duration)
}

func (b backend) key(name string) string { return b.prefix + name }

// testRedisClient connects to CAUSEWAY_TEST_REDIS_URL (default
// redis://127.0.0.1:6379/0); when Redis is not reachable the test skips on a
// laptop and fails in CI (testenv).
func testRedisClient(t *testing.T) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// realClockTries is how often a test on the Redis backend (which keeps time by
// the Redis server's clock) starts over on a fresh key when its requests took
// longer than one emission interval, so that a refill may have happened during
// the burst and an exact count would be wrong.
const realClockTries = 3

// withinInterval runs burst on a fresh key until it finishes within one
// emission interval of perMinute, so no token was refilled while it ran. On the
// memory backend time stands still and one run is enough. A machine that stalls
// for a whole interval on every try fails the test: the count could not be
// checked.
func withinInterval(t *testing.T, b backend, name string, perMinute int, burst func(key string)) {
	t.Helper()
	interval := emissionInterval(perMinute)
	for try := 1; ; try++ {
		start := time.Now()
		burst(b.key(fmt.Sprintf("%s-%d", name, try)))
		took := time.Since(start)
		if b.exact || took < interval {
			return
		}
		if try == realClockTries {
			t.Fatalf("%d tries each took longer than one emission interval (%v, last %v): no exact count possible", try, interval, took)
		}
		t.Logf("try %d took %v, longer than the emission interval %v: starting over on a fresh key", try, took, interval)
	}
}

// forEachBackend runs fn against the memory backend (fake clock) and the
// Redis backend (real clock), skipping only the latter when Redis is down.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("memory", func(t *testing.T) {
		m, clk := newFakeMemory()
		fn(t, backend{lim: m, exact: true, wait: clk.Advance})
	})
	t.Run("redis", func(t *testing.T) {
		c := testRedisClient(t)
		prefix := fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
		fn(t, backend{lim: NewRedis(c), prefix: prefix, wait: time.Sleep})
	})
}

func mustAllow(t *testing.T, l Limiter, key string, perMinute int) Result {
	t.Helper()
	r, err := l.Allow(context.Background(), key, perMinute)
	if err != nil {
		t.Fatalf("Allow(%q, %d): %v", key, perMinute, err)
	}
	return r
}

func TestBurstThenDeny(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		// 20 a minute refill one request every 3 s: far longer than 21 round
		// trips take, so the real-clock backend gives exact answers too.
		const limit = 20
		interval := emissionInterval(limit)
		var results []Result
		withinInterval(t, b, "burst", limit, func(key string) {
			results = results[:0]
			for i := 0; i < limit+1; i++ {
				results = append(results, mustAllow(t, b.lim, key, limit))
			}
		})
		denied := 0
		for i, r := range results {
			if r.Limit != limit {
				t.Errorf("request %d: Limit = %d, want %d", i, r.Limit, limit)
			}
			if !r.Allowed {
				denied++
				if i != limit {
					t.Errorf("request %d denied, only request %d should be", i, limit)
				}
			} else if r.RetryAfter != 0 {
				t.Errorf("request %d allowed with RetryAfter %v", i, r.RetryAfter)
			}
		}
		if denied != 1 {
			t.Fatalf("denied %d of %d requests, want exactly 1", denied, limit+1)
		}
		if first := results[0]; first.Remaining != limit-1 || first.ResetAfter <= 0 || first.ResetAfter > interval {
			t.Errorf("first result %+v, want Remaining %d and ResetAfter in (0, %v]", first, limit-1, interval)
		}
		if last := results[limit-1]; !last.Allowed || last.Remaining != 0 {
			t.Errorf("%dth result %+v, want allowed with Remaining 0", limit, last)
		}
		d := results[limit]
		if d.Remaining != 0 || d.RetryAfter <= 0 || d.RetryAfter > interval || d.ResetAfter <= 0 || d.ResetAfter > time.Minute {
			t.Errorf("denied result %+v, want Remaining 0, RetryAfter in (0, %v], ResetAfter in (0, 1m]", d, interval)
		}
		if b.exact && (d.RetryAfter != interval || d.ResetAfter != time.Minute) {
			t.Errorf("denied result %+v, want exactly RetryAfter %v, ResetAfter 1m", d, interval)
		}
		if !b.exact && d.ResetAfter < time.Minute-interval {
			t.Errorf("denied ResetAfter %v, want within one interval of 1m", d.ResetAfter)
		}
	})
}

func TestKeysIsolated(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		const limit = 3
		a, c := b.key("tenant-a"), b.key("tenant-b")
		for i := 0; i < limit; i++ {
			if r := mustAllow(t, b.lim, a, limit); !r.Allowed {
				t.Fatalf("key a request %d denied", i)
			}
		}
		if r := mustAllow(t, b.lim, a, limit); r.Allowed {
			t.Fatal("key a not limited after its burst")
		}
		for i := 0; i < limit; i++ {
			r := mustAllow(t, b.lim, c, limit)
			if !r.Allowed || r.Remaining != limit-1-i {
				t.Fatalf("key b request %d: %+v, exhausting key a must not affect key b", i, r)
			}
		}
	})
}

func TestRefill(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		// 60/min refills one request a second, short enough for a real wait.
		const limit = 60
		interval := emissionInterval(limit)
		slack := 20 * time.Millisecond
		if b.exact {
			slack = 0
		}
		for try := 1; ; try++ {
			key := b.key(fmt.Sprintf("refill-%d", try))
			burstStart := time.Now()
			allowed := 0
			var denied Result
			for i := 0; i < limit+1; i++ {
				r := mustAllow(t, b.lim, key, limit)
				if !r.Allowed {
					denied = r
					break
				}
				allowed++
			}
			burstTook := time.Since(burstStart)
			// Wait out RetryAfter: exactly one token comes back.
			b.wait(denied.RetryAfter + slack)
			pairStart := time.Now()
			first := mustAllow(t, b.lim, key, limit)
			second := mustAllow(t, b.lim, key, limit)
			pairTook := time.Since(pairStart)
			// On the real clock a burst or pair slower than one interval may
			// have seen an extra refill; start over on a fresh key then.
			if !b.exact && (burstTook >= interval || pairTook+slack >= interval) {
				if try == realClockTries {
					t.Fatalf("%d tries were slower than one emission interval (%v): burst %v, pair %v", try, interval, burstTook, pairTook)
				}
				continue
			}
			if allowed != limit || denied.Allowed || denied.RetryAfter <= 0 || denied.RetryAfter > interval {
				t.Fatalf("allowed %d then %+v, want the burst of %d then a denial with RetryAfter in (0, %v]", allowed, denied, limit, interval)
			}
			if !first.Allowed {
				t.Fatalf("after waiting RetryAfter: %+v, want allowed", first)
			}
			if second.Allowed {
				t.Fatalf("second request right after refill: %+v, want denied (only one token refilled)", second)
			}
			break
		}
		if b.exact {
			// A full minute refills the whole burst.
			key := b.key("refill-full")
			for i := 0; i < limit+1; i++ {
				mustAllow(t, b.lim, key, limit)
			}
			b.wait(time.Minute)
			if r := mustAllow(t, b.lim, key, limit); !r.Allowed || r.Remaining != limit-1 {
				t.Fatalf("after a minute: %+v, want allowed with Remaining %d", r, limit-1)
			}
		}
	})
}

func TestConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		// 50 goroutines race for 20 tokens that refill every 3 s: a limiter that
		// counted without atomicity would let more than 20 through.
		const limit, workers, each = 20, 50, 2
		var allowed, denied atomic.Int32
		withinInterval(t, b, "concurrent", limit, func(key string) {
			allowed.Store(0)
			denied.Store(0)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := 0; i < each; i++ {
						r, err := b.lim.Allow(context.Background(), key, limit)
						if err != nil {
							t.Errorf("Allow: %v", err)
							return
						}
						if r.Allowed {
							allowed.Add(1)
						} else {
							denied.Add(1)
						}
					}
				}()
			}
			close(start)
			wg.Wait()
		})
		if allowed.Load() != limit || denied.Load() != workers*each-limit {
			t.Errorf("allowed %d, denied %d; want exactly %d allowed", allowed.Load(), denied.Load(), limit)
		}
	})
}

func TestUnlimited(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, n := range []int{0, -1} {
			for i := 0; i < 5; i++ {
				r := mustAllow(t, b.lim, b.key("unlimited"), n)
				if !r.Allowed || r.Limit != 0 || r.RetryAfter != 0 {
					t.Fatalf("perMinute %d: %+v, want allowed with Limit 0", n, r)
				}
			}
		}
	})
	// No backend call: an unreachable Redis still answers.
	r, err := NewRedis(unreachableRedis(t)).Allow(context.Background(), "k", 0)
	if err != nil || !r.Allowed {
		t.Errorf("unlimited on unreachable redis: %+v, %v; want allowed without a backend call", r, err)
	}
	m, _ := newFakeMemory()
	_, _ = m.Allow(context.Background(), "k", 0)
	if len(m.tat) != 0 {
		t.Error("unlimited request stored memory state")
	}
}

func TestBackendAndPing(t *testing.T) {
	m := NewMemory()
	if m.Backend() != "memory" {
		t.Errorf("memory Backend() = %q", m.Backend())
	}
	if err := m.Ping(context.Background()); err != nil {
		t.Errorf("memory Ping: %v", err)
	}
	t.Run("redis", func(t *testing.T) {
		r := NewRedis(testRedisClient(t))
		if r.Backend() != "redis" {
			t.Errorf("redis Backend() = %q", r.Backend())
		}
		if err := r.Ping(context.Background()); err != nil {
			t.Errorf("redis Ping: %v", err)
		}
	})
}

func unreachableRedis(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:          "127.0.0.1:1",
		DialTimeout:   200 * time.Millisecond,
		MaxRetries:    -1,
		DialerRetries: 1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisUnreachable(t *testing.T) {
	r := NewRedis(unreachableRedis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := r.Allow(ctx, "k", 10); err == nil {
		t.Error("Allow on unreachable redis returned no error")
	}
	if err := r.Ping(ctx); err == nil {
		t.Error("Ping on unreachable redis returned no error")
	}
}

func TestMemoryEvictsIdleKeys(t *testing.T) {
	m, clk := newFakeMemory()
	ctx := context.Background()
	for i := 0; i < 1000; i++ {
		if _, err := m.Allow(ctx, fmt.Sprintf("k%d", i), 10); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.tat) != 1000 {
		t.Fatalf("tracked %d keys, want 1000", len(m.tat))
	}
	clk.Advance(sweepInterval + time.Second)
	_, _ = m.Allow(ctx, "fresh", 10)
	if len(m.tat) != 1 {
		t.Errorf("after all buckets refilled, tracked %d keys, want only the fresh one", len(m.tat))
	}

	// Under a flood of distinct active keys the hard cap still holds.
	m, _ = newFakeMemory()
	m.maxKeys = 50
	for i := 0; i < 500; i++ {
		if r, _ := m.Allow(ctx, fmt.Sprintf("flood%d", i), 10); !r.Allowed {
			t.Fatalf("new key %d denied", i)
		}
	}
	if len(m.tat) > 50 {
		t.Errorf("tracked %d keys, cap is 50", len(m.tat))
	}
}

// TestFirstRequestRemaining pins the cross-backend agreement on Remaining,
// including limits that do not divide a minute evenly.
func TestFirstRequestRemaining(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, n := range []int{1, 7, 100, 1200, 100000} {
			r := mustAllow(t, b.lim, b.key(fmt.Sprintf("first-%d", n)), n)
			want := time.Minute / time.Duration(n)
			if !r.Allowed || r.Remaining != n-1 || r.ResetAfter < want-time.Millisecond || r.ResetAfter > want+time.Millisecond {
				t.Errorf("limit %d: first result %+v, want Remaining %d and ResetAfter about %v", n, r, n-1, want)
			}
		}
	})
}

// TestMarks shows both backends set a mark once, report it while it lives,
// forget it on request, and let it expire.
func TestMarks(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, m Marks, key string, wait func(time.Duration)) {
		first, err := m.Mark(ctx, key, time.Second)
		if err != nil || !first {
			t.Fatalf("first mark: %v %v", first, err)
		}
		if again, err := m.Mark(ctx, key, time.Second); err != nil || again {
			t.Fatalf("second mark: %v %v", again, err)
		}
		if on, err := m.Marked(ctx, key); err != nil || !on {
			t.Fatalf("marked: %v %v", on, err)
		}
		if err := m.Forget(ctx, key); err != nil {
			t.Fatal(err)
		}
		if on, _ := m.Marked(ctx, key); on {
			t.Fatal("forgotten mark still set")
		}
		if first, _ := m.Mark(ctx, key, 50*time.Millisecond); !first {
			t.Fatal("mark after forget")
		}
		wait(200 * time.Millisecond)
		if on, _ := m.Marked(ctx, key); on {
			t.Fatal("expired mark still set")
		}
	}
	t.Run("memory", func(t *testing.T) {
		m, clk := newFakeMemory()
		check(t, m, "k", clk.Advance)
	})
	t.Run("redis", func(t *testing.T) {
		check(t, NewRedis(testRedisClient(t)), fmt.Sprintf("test:%s:%d", t.Name(), time.Now().UnixNano()), time.Sleep)
	})
}
