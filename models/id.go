package models

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns prefix + "_" + a 26-character ULID: 48 bits of milliseconds then 80
// random bits, in Crockford base32. IDs sort by creation time as plain strings on
// every database, which is what keyset pagination orders by.
func NewID(prefix string) string {
	return prefix + "_" + ulid(time.Now())
}

func ulid(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
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
