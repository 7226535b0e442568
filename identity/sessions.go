package identity

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
)

// SessionRecheck is how long one process trusts its last answer about a
// session. An ended session's access tokens stop within this time on every
// process, inside the contract's 60 seconds (DESIGN §4), while a busy client
// costs the database one lookup per half minute, not one per request.
const SessionRecheck = 30 * time.Second

// maxCachedSessions bounds the cache: past it the cache starts over, which
// costs a lookup per session and never lets an ended one through.
const maxCachedSessions = 50_000

// sessionCache remembers, per session, whether it was live and when that was
// looked up.
type sessionCache struct {
	mu      sync.Mutex
	entries map[string]sessionEntry
}

type sessionEntry struct {
	live    bool
	checked time.Time
}

func newSessionCache() *sessionCache {
	return &sessionCache{entries: map[string]sessionEntry{}}
}

func sessionKey(userID, session string) string { return userID + "/" + session }

func (c *sessionCache) get(key string, now time.Time) (live, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.Sub(e.checked) >= SessionRecheck || now.Before(e.checked) {
		return false, false
	}
	return e.live, true
}

func (c *sessionCache) put(key string, live bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCachedSessions {
		c.entries = map[string]sessionEntry{}
	}
	c.entries[key] = sessionEntry{live: live, checked: now}
}

// forgetUser drops what this process knows of a user's sessions, so a change
// made here takes effect here at once; other processes follow within
// SessionRecheck.
func (c *sessionCache) forgetUser(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if strings.HasPrefix(k, userID+"/") {
			delete(c.entries, k)
		}
	}
}

// forgetAll drops everything this process knows, for a change that ends the
// sessions of many users at once.
func (c *sessionCache) forgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[string]sessionEntry{}
}

// Authenticate verifies an access token and that the sign-in it was issued
// in has not been ended (removal, a role or password change, SSO
// enforcement, sign-out). Every signed-in request, API or dashboard, comes
// through here.
func (a *Accounts) Authenticate(ctx context.Context, raw string) (auth.Principal, error) {
	p, err := a.tokens.Verify(raw)
	if err != nil {
		return auth.Principal{}, errcode.New(errcode.Unauthorized, "a valid Bearer access token is required")
	}
	key, now := sessionKey(p.UserID, p.SessionID), a.now()
	live, ok := a.sessions.get(key, now)
	if !ok {
		live, err = a.store.SessionLive(ctx, p.UserID, p.SessionID)
		if err != nil {
			return auth.Principal{}, errcode.Down("the database", err)
		}
		a.sessions.put(key, live, now)
	}
	if !live {
		return auth.Principal{}, errcode.New(errcode.Unauthorized, "this sign-in has ended; sign in again")
	}
	return p, nil
}
