package models

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix + "_" + a 26-character ULID: 48 bits of milliseconds then 80
// random bits, in Crockford base32. IDs sort by creation time as plain strings on
// every database, which is what keyset pagination orders by. Within one
// process they are strictly increasing, also within a millisecond (see next),
// so rows recorded one after another list in that order.
func NewID(prefix string) string {
	return prefix + "_" + ulid(next(time.Now()))
}

// idClock is the last ULID handed out, so the next one can be made larger.
var idClock struct {
	sync.Mutex
	ms   uint64
	rand [10]byte
}

// next returns the millisecond and random part of the next ULID. A fresh
// millisecond draws new random bits; within the same millisecond (or when
// the clock steps back) the previous random part is incremented, as the ULID
// specification's monotonic mode does, so order survives a burst.
func next(t time.Time) (uint64, [10]byte) {
	ms := uint64(t.UnixMilli())
	idClock.Lock()
	defer idClock.Unlock()
	if ms > idClock.ms {
		idClock.ms = ms
		if _, err := rand.Read(idClock.rand[:]); err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		return idClock.ms, idClock.rand
	}
	for i := len(idClock.rand) - 1; i >= 0; i-- {
		idClock.rand[i]++
		if idClock.rand[i] != 0 {
			return idClock.ms, idClock.rand
		}
	}
	// 80 bits wrapped around: move to the next millisecond.
	idClock.ms++
	return idClock.ms, idClock.rand
}

func ulid(ms uint64, random [10]byte) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], ms<<16)
	copy(b[6:], random[:])
	// 128 bits → 26 base32 digits (the first digit carries the top 3 bits).
	var out [26]byte
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
