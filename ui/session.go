package ui

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
)

// Where the tokens live (see docs/dashboard.md): the browser holds the API's
// own access and refresh tokens in one session cookie that is HttpOnly (no
// script, so no injected script, can read them), SameSite=Strict (no other site
// can make the browser send it), Secure whenever the dashboard is served over
// HTTPS, scoped to /ui, and encrypted with the server's secrets key so even a
// copy of the cookie in a proxy log shows no token. Each sign-in also draws a
// random CSRF token kept inside the encrypted cookie; every state-changing
// request must echo it in a form field or header. The page's JavaScript never
// sees a token, and a reload or a new tab keeps the session, which tokens kept
// in page memory would not.
const (
	sessionCookie = "causeway_session"
	// preCookie carries the CSRF token of the sign-in and sign-up forms, which
	// are posted before a session exists.
	preCookie = "causeway_signin"
	// csrfField and csrfHeader are where a request echoes the CSRF token.
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
	// refreshAhead refreshes the access token this long before it expires, so a
	// page never sends one that lapses in flight.
	refreshAhead = time.Minute
	// sessionAAD binds the sealed cookie to its purpose.
	sessionAAD = "causeway/ui-session"
)

const (
	ctxPrincipal = "causeway.ui.principal"
	ctxSession   = "causeway.ui.session"
)

// session is the content of the encrypted session cookie.
type session struct {
	CSRF    string `json:"c"`
	Access  string `json:"a"`
	Refresh string `json:"r"`
	Expires int64  `json:"e"` // unix seconds when Access expires
}

func newSession(pair identity.TokenPair, csrf string, now time.Time) *session {
	return &session{CSRF: csrf, Access: pair.AccessToken, Refresh: pair.RefreshToken,
		Expires: now.Add(time.Duration(pair.ExpiresIn) * time.Second).Unix()}
}

// readSession opens the session cookie; false when there is none or it does
// not decrypt (another server's key, tampering).
func (d *Dashboard) readSession(c *gin.Context) (*session, bool) {
	// Read raw: gin's Cookie would query-unescape the base64 ("+" → " ").
	ck, err := c.Request.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, false
	}
	plain, err := d.o.Sealer.Decrypt(ck.Value, []byte(sessionAAD))
	if err != nil {
		return nil, false
	}
	var s session
	if json.Unmarshal(plain, &s) != nil || s.Access == "" || s.CSRF == "" {
		return nil, false
	}
	return &s, true
}

func (d *Dashboard) writeSession(c *gin.Context, s *session) {
	plain, _ := json.Marshal(s)
	d.setCookie(c, sessionCookie, d.o.Sealer.Encrypt(plain, []byte(sessionAAD)), 0)
}

// setCookie writes an HttpOnly, SameSite=Strict cookie scoped to the dashboard;
// maxAge 0 makes it last for the browser session, negative deletes it.
func (d *Dashboard) setCookie(c *gin.Context, name, value string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: name, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure(c), SameSite: http.SameSiteStrictMode,
	})
}

// secure reports whether cookies must be Secure: the request came over TLS, or
// the configured public address is HTTPS (TLS ended at a proxy).
func (d *Dashboard) secure(c *gin.Context) bool {
	return c.Request.TLS != nil || strings.HasPrefix(d.o.PublicURL, "https://")
}

// session is the middleware of every signed-in page: it opens the cookie,
// refreshes the access token when it is about to expire, verifies it, and
// records the principal for the role checks, the tenant limit and the access
// log. Without a valid session a page redirects to sign-in and a live fragment
// answers 401, which the page's script turns into the same redirect.
func (d *Dashboard) session(c *gin.Context) {
	s, ok := d.readSession(c)
	if !ok {
		d.signInAgain(c)
		return
	}
	if time.Now().Add(refreshAhead).Unix() >= s.Expires {
		pair, err := d.refresher.refresh(c.Request.Context(), s.Refresh)
		if err != nil {
			if e, ok := errcode.As(err); ok && e.Code == errcode.Unavailable {
				d.fail(c, err)
				return
			}
			d.signInAgain(c)
			return
		}
		s = newSession(pair, s.CSRF, time.Now())
		d.writeSession(c, s)
	}
	p, err := d.o.Accounts.Authenticate(c.Request.Context(), s.Access)
	if err != nil {
		if e, ok := errcode.As(err); ok && e.Code == errcode.Unavailable {
			d.fail(c, err)
			return
		}
		d.signInAgain(c)
		return
	}
	c.Set(ctxSession, s)
	c.Set(ctxPrincipal, p)
	d.hooks.SetCaller(c, p)
	c.Next()
}

// signInAgain ends a session that cannot continue: the cookie is dropped, a
// page goes to sign-in (coming back here afterwards), anything else gets 401.
func (d *Dashboard) signInAgain(c *gin.Context) {
	d.setCookie(c, sessionCookie, "", -1)
	if c.Request.Method == http.MethodGet && !isFragment(c) {
		c.Redirect(http.StatusSeeOther, loginURL(c.Request.URL.RequestURI()))
		c.Abort()
		return
	}
	d.fail(c, errcode.New(errcode.Unauthorized, "your session has ended; sign in again"))
}

func loginURL(next string) string {
	return Prefix + "/login?next=" + url.QueryEscape(next)
}

// safeNext keeps a post-sign-in redirect inside the dashboard, so the sign-in
// page cannot be used to send someone elsewhere.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err == nil && path.Clean(u.Path) != u.Path && path.Clean(u.Path)+"/" != u.Path {
		err = errors.New("not a clean path")
	}
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, Prefix+"/") ||
		strings.HasPrefix(next, "//") || strings.Contains(next, "\\") || strings.HasPrefix(u.Path, Prefix+"/login") ||
		strings.HasPrefix(u.Path, Prefix+"/signup") || strings.HasPrefix(u.Path, Prefix+"/static/") {
		return Prefix + "/incidents"
	}
	return u.RequestURI()
}

// csrf refuses any state-changing request that does not echo the session's
// CSRF token. SameSite=Strict already keeps other sites from sending the
// cookie; the token also covers browsers and proxies that do not honour it.
func (d *Dashboard) csrf(c *gin.Context) {
	if c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead {
		c.Next()
		return
	}
	got := c.GetHeader(csrfHeader)
	if got == "" {
		got = c.PostForm(csrfField)
	}
	if !sameToken(got, currentSession(c).CSRF) {
		d.fail(c, errcode.New(errcode.Forbidden, "the form has expired or did not come from this dashboard; reload the page and try again"))
		return
	}
	c.Next()
}

// preSessionCSRF protects the sign-in and sign-up forms, which are posted
// before a session exists, with a token in a cookie that the form must repeat:
// another site can neither read the cookie nor make the browser send it.
func (d *Dashboard) preSessionCSRF(c *gin.Context) {
	want, err := c.Cookie(preCookie)
	if err != nil || !sameToken(c.PostForm(csrfField), want) {
		d.fail(c, errcode.New(errcode.Forbidden, "the sign-in form has expired; reload the page and try again"))
		return
	}
	c.Next()
}

// preSessionToken returns the sign-in form's token, issuing the cookie first
// when the browser has none.
func (d *Dashboard) preSessionToken(c *gin.Context) string {
	if t, err := c.Cookie(preCookie); err == nil && len(t) >= 32 {
		return t
	}
	t := auth.RandomToken(32)
	d.setCookie(c, preCookie, t, 3600)
	return t
}

func sameToken(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func principal(c *gin.Context) auth.Principal {
	p, _ := c.Get(ctxPrincipal)
	out, _ := p.(auth.Principal)
	return out
}

func currentSession(c *gin.Context) *session {
	s, _ := c.Get(ctxSession)
	out, _ := s.(*session)
	if out == nil {
		return &session{}
	}
	return out
}

// isFragment tells the live-update requests of the page's script from page
// loads: they name themselves in a header.
func isFragment(c *gin.Context) bool { return c.GetHeader("X-Requested-With") == "causeway-live" }

// refresher rotates refresh tokens for the dashboard's sessions. A page makes
// requests in parallel (a poll and a click), each carrying the same cookie; if
// each rotated the token, the second would present a token already used, and
// the rotation rules would revoke the whole session as stolen. So within this
// process one rotation per token runs, and for a short while after it the
// requests that still carry the old cookie get the same new pair.
type refresher struct {
	accounts *identity.Accounts
	mu       sync.Mutex
	calls    map[string]*refreshCall
	now      func() time.Time
}

type refreshCall struct {
	done chan struct{}
	pair identity.TokenPair
	err  error
	at   time.Time
}

// refreshGrace is how long a rotated token's new pair is handed to late
// requests: longer than a request takes to return its Set-Cookie.
const refreshGrace = 30 * time.Second

func newRefresher(a *identity.Accounts) *refresher {
	return &refresher{accounts: a, calls: map[string]*refreshCall{}, now: time.Now}
}

// forget drops every remembered rotation that leads to token, directly or
// through later rotations, so a signed-out session cannot be revived by
// presenting one of its older cookies during the grace period.
func (r *refresher) forget(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gone := map[string]bool{auth.SHA256Hex(token): true}
	for changed := true; changed; {
		changed = false
		for k, call := range r.calls {
			if !call.at.IsZero() && gone[auth.SHA256Hex(call.pair.RefreshToken)] {
				gone[k] = true
				delete(r.calls, k)
				changed = true
			}
		}
	}
	delete(r.calls, auth.SHA256Hex(token))
}

func (r *refresher) refresh(ctx context.Context, token string) (identity.TokenPair, error) {
	key := auth.SHA256Hex(token)
	r.mu.Lock()
	now := r.now()
	for k, call := range r.calls {
		if !call.at.IsZero() && now.Sub(call.at) > refreshGrace {
			delete(r.calls, k)
		}
	}
	call, ok := r.calls[key]
	if !ok {
		call = &refreshCall{done: make(chan struct{})}
		r.calls[key] = call
	}
	r.mu.Unlock()
	if !ok {
		// The rotation must finish even if this request is abandoned: the
		// requests waiting on it depend on its answer.
		call.pair, call.err = r.accounts.Refresh(context.WithoutCancel(ctx), token)
		r.mu.Lock()
		call.at = r.now()
		if call.err != nil {
			// A failure is not remembered: a later request may try again.
			delete(r.calls, key)
		}
		r.mu.Unlock()
		close(call.done)
	}
	select {
	case <-call.done:
		return call.pair, call.err
	case <-ctx.Done():
		return identity.TokenPair{}, errors.Join(errcode.New(errcode.Unavailable, "signing in again took too long"), ctx.Err())
	}
}
