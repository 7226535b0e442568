package models

import (
	"strings"
	"testing"
	"time"
)

// TestNewIDIncreasesWithinAMillisecond shows IDs made one after another sort
// in the order they were made, also when many share a millisecond and when
// the clock steps back, so "newest first" lists are stable.
func TestNewIDIncreasesWithinAMillisecond(t *testing.T) {
	prev := NewID("chg")
	for i := 0; i < 5000; i++ {
		id := NewID("chg")
		if id <= prev {
			t.Fatalf("id %d: %s after %s", i, id, prev)
		}
		prev = id
	}
	// A clock that steps back one second still hands out a larger id.
	back := "chg_" + ulid(next(time.Now().Add(-time.Second)))
	if back <= prev {
		t.Fatalf("after the clock stepped back: %s after %s", back, prev)
	}
	if !strings.HasPrefix(prev, "chg_") || len(prev) != len("chg_")+26 {
		t.Fatalf("shape: %s", prev)
	}
}
