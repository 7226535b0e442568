package ui

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
)

// signInForm is what the sign-in and sign-up pages show and keep on failure
// (never the password).
type signInForm struct {
	Next       string
	Token      string
	Email      string
	Name       string
	TenantName string
	Signup     bool
	Problem    *problem
	// Hop is set on the page that only sends the browser on to itself; see
	// loginPage.
	Hop string
}

// loginPage shows the sign-in form, or skips it when the session is valid.
//
// A SameSite=Strict cookie is not sent with a navigation that starts on another
// site (a link in a chat message), so such a visit looks signed out. The first
// sign-in page of such a visit therefore sends the browser on to itself once;
// that second request starts here and carries the cookie, and a signed-in user
// lands on the page the link named.
func (d *Dashboard) loginPage(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if _, ok := d.readSession(c); ok {
		// The session middleware of the next page refreshes or ends it.
		c.Redirect(http.StatusSeeOther, next)
		return
	}
	if c.Query("hop") == "" {
		d.render(c, http.StatusOK, "hop", &view{Title: "Sign in", Data: signInForm{Hop: loginURL(next) + "&hop=1"}})
		return
	}
	d.render(c, http.StatusOK, "login", &view{Title: "Sign in", Notice: notices[c.Query("notice")], Data: signInForm{Next: next, Token: d.preSessionToken(c), Signup: d.o.SignupEnabled}})
}

func (d *Dashboard) login(c *gin.Context) {
	form := signInForm{Next: safeNext(c.PostForm("next")), Email: c.PostForm("email"), Token: d.preSessionToken(c), Signup: d.o.SignupEnabled}
	pair, err := d.o.Accounts.Login(c.Request.Context(), identity.LoginInput{Email: form.Email, Password: c.PostForm("password")})
	if err != nil {
		d.formProblem(c, "login", "Sign in", &form, err)
		return
	}
	d.startSession(c, pair, form.Next)
}

func (d *Dashboard) signupPage(c *gin.Context) {
	if !d.o.SignupEnabled {
		d.fail(c, errcode.New(errcode.SignupDisabled, "self-service sign-up is disabled on this server; ask an admin of your organisation for an account"))
		return
	}
	d.render(c, http.StatusOK, "signup", &view{Title: "Create an account", Data: signInForm{Token: d.preSessionToken(c), Next: Prefix + "/incidents"}})
}

func (d *Dashboard) signup(c *gin.Context) {
	form := signInForm{Email: c.PostForm("email"), Name: c.PostForm("name"), TenantName: c.PostForm("tenantName"),
		Token: d.preSessionToken(c), Next: Prefix + "/incidents"}
	out, err := d.o.Accounts.Signup(c.Request.Context(), identity.SignupInput{
		TenantName: form.TenantName, Email: form.Email, Password: c.PostForm("password"), Name: form.Name,
	})
	if err != nil {
		d.formProblem(c, "signup", "Create an account", &form, err)
		return
	}
	d.startSession(c, out.TokenPair, Prefix+"/settings/api-keys?notice=welcome")
}

// formProblem shows a sign-in form again with what went wrong, with the
// status the API gives for the same failure.
func (d *Dashboard) formProblem(c *gin.Context, page, title string, form *signInForm, err error) {
	form.Problem = problemOf(c, err)
	d.render(c, form.Problem.Status, page, &view{Title: title, Data: form})
}

// startSession stores a fresh token pair with a new CSRF token: a sign-in never
// inherits the token of an earlier session in the same browser.
func (d *Dashboard) startSession(c *gin.Context, pair identity.TokenPair, next string) {
	d.writeSession(c, newSession(pair, auth.RandomToken(32), time.Now()))
	d.setCookie(c, preCookie, "", -1)
	c.Redirect(http.StatusSeeOther, next)
}

// logout revokes the session's refresh chain, then forgets the cookie.
func (d *Dashboard) logout(c *gin.Context) {
	refresh := currentSession(c).Refresh
	if err := d.o.Accounts.SignOut(c.Request.Context(), refresh); err != nil {
		d.fail(c, err)
		return
	}
	d.refresher.forget(refresh)
	d.setCookie(c, sessionCookie, "", -1)
	c.Redirect(http.StatusSeeOther, Prefix+"/login?hop=1&notice=signedout")
}
