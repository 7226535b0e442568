package service

import (
	"sync"
	"time"
)

// Verified API keys are remembered for keyCacheTTL so a busy monitoring tool's
// deliveries skip the key lookup and the secret's decryption. The price is
// revocation latency: a revoked key keeps authenticating in a process that
// verified it less than keyCacheTTL ago (the revoking process forgets it at
// once). Only keys that passed the lookup are cached: an unknown or revoked key
// is looked up every time, while a valid key presented for the wrong tenant is
// served from the cache like any other and refused by the tenant check after it.
const (
	keyCacheTTL = 30 * time.Second
	// keyCacheMax bounds the memory a flood of distinct valid keys can take;
	// reaching it simply empties the cache.
	keyCacheMax = 10000
)

// verifiedKeys is the process's one cache: a revoked key reaches it however the
// services are wired (ForgetVerifiedKey), and a key hash is unique, so entries
// never collide.
var verifiedKeys = newKeyCache()

// ForgetVerifiedKey drops a revoked key from this process's cache of verified
// webhook keys, so it stops authenticating here at once; other processes drop
// it within keyCacheTTL.
func ForgetVerifiedKey(keyID string) { verifiedKeys.forget(keyID) }

// keyCache maps the SHA-256 of a plaintext API key to the verified key.
type keyCache struct {
	mu       sync.Mutex
	entries  map[string]keyCacheEntry
	inflight map[string]*keyLookup
	// gen counts revocations; a lookup that overlapped one is not cached, since
	// it may have read the key before it was revoked.
	gen uint64
}

type keyCacheEntry struct {
	key     *WebhookKey
	expires time.Time
}

// keyLookup is one lookup that concurrent requests for the same key wait on.
type keyLookup struct {
	done chan struct{}
	key  *WebhookKey
	err  error
}

func newKeyCache() *keyCache {
	return &keyCache{entries: map[string]keyCacheEntry{}, inflight: map[string]*keyLookup{}}
}

// load returns the verified key for hash: from the cache if it was verified
// less than keyCacheTTL before now, else from verify, run once for all the
// concurrent callers of the same hash. Only successes are cached.
func (c *keyCache) load(hash string, now time.Time, verify func() (*WebhookKey, error)) (*WebhookKey, error) {
	c.mu.Lock()
	if e, ok := c.entries[hash]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		return e.key, nil
	}
	if l, ok := c.inflight[hash]; ok {
		c.mu.Unlock()
		<-l.done
		return l.key, l.err
	}
	l := &keyLookup{done: make(chan struct{})}
	c.inflight[hash] = l
	gen := c.gen
	c.mu.Unlock()

	l.key, l.err = verify()

	c.mu.Lock()
	delete(c.inflight, hash)
	if l.err == nil && gen == c.gen {
		if len(c.entries) >= keyCacheMax {
			clear(c.entries)
		}
		c.entries[hash] = keyCacheEntry{key: l.key, expires: now.Add(keyCacheTTL)}
	}
	c.mu.Unlock()
	close(l.done)
	return l.key, l.err
}

// forget drops the key with the given id, so a revocation is immediate in the
// process that performed it.
func (c *keyCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, e := range c.entries {
		if e.key.ID == id {
			delete(c.entries, h)
		}
	}
}
