package temporalx

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestForEachConcurrentlyIsBounded shows a sweep page runs in parallel but
// never more than SweepConcurrency at once, and that failures are counted
// apart from successes.
func TestForEachConcurrentlyIsBounded(t *testing.T) {
	items := make([]int, 5*SweepConcurrency)
	for i := range items {
		items[i] = i
	}
	var running, peak atomic.Int32
	n, err := ForEachConcurrently(items, func(i *int) error {
		cur := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		if *i%10 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	if want := len(items) - len(items)/10; n != want || err == nil {
		t.Fatalf("succeeded %d (%v), want %d and an error", n, err, want)
	}
	if p := peak.Load(); p < 2 || p > SweepConcurrency {
		t.Fatalf("peak concurrency %d, want 2..%d", p, SweepConcurrency)
	}
}
