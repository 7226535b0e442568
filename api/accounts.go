package api

import (
	"net/http"

	"github.com/causeway/causeway/identity"
	"github.com/gin-gonic/gin"
)

const oauthCookie = "causeway_oauth_nonce"

func (h *handlers) signup(c *gin.Context) {
	var in identity.SignupInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Accounts.Signup(c.Request.Context(), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, out)
}

func (h *handlers) login(c *gin.Context) {
	var in identity.LoginInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Accounts.Login(c.Request.Context(), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) refresh(c *gin.Context) {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Accounts.Refresh(c.Request.Context(), in.RefreshToken)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// logout ends the session of a refresh token: 204 whether or not there was
// one to end, so the answer reveals nothing about the token.
func (h *handlers) logout(c *gin.Context) {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	if err := h.Accounts.SignOut(c.Request.Context(), in.RefreshToken); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) resetPassword(c *gin.Context) {
	var in identity.ResetPasswordInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Accounts.ResetPassword(c.Request.Context(), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// oauthLogin redirects the browser to the identity provider and pins the flow to
// this browser with a short-lived cookie.
func (h *handlers) oauthLogin(c *gin.Context) {
	provider := c.Param("provider")
	to, nonce, err := h.OAuth.LoginURL(provider)
	if err != nil {
		fail(c, err)
		return
	}
	c.SetSameSite(http.SameSiteLaxMode)
	c.SetCookie(oauthCookie, nonce, 600, "/auth/"+provider, "", h.https(c), true)
	c.Redirect(http.StatusFound, to)
}

// oauthLink starts linking an identity to the caller's account. The nonce
// cookie is set for the callback's path, so the link completes only in the
// browser that asked for it.
func (h *handlers) oauthLink(c *gin.Context) {
	provider := c.Param("provider")
	to, nonce, err := h.OAuth.LinkURL(provider, caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.SetSameSite(http.SameSiteLaxMode)
	c.SetCookie(oauthCookie, nonce, 600, "/auth/"+provider, "", h.https(c), true)
	c.JSON(http.StatusOK, gin.H{"provider": provider, "authorizationUrl": to})
}

func (h *handlers) oauthCallback(c *gin.Context) {
	provider := c.Param("provider")
	nonce, _ := c.Cookie(oauthCookie)
	out, err := h.OAuth.Callback(c.Request.Context(), provider, c.Query("code"), c.Query("state"), nonce)
	if err != nil {
		fail(c, err)
		return
	}
	c.SetCookie(oauthCookie, "", -1, "/auth/"+provider, "", h.https(c), true)
	c.JSON(http.StatusOK, out)
}

func (h *handlers) createUser(c *gin.Context) {
	var in identity.CreateUserInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	u, err := h.Accounts.CreateUser(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, toUser(u))
}

func (h *handlers) listUsers(c *gin.Context) {
	users, err := h.Accounts.ListUsers(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]userJSON, len(users))
	for i := range users {
		out[i] = toUser(&users[i])
	}
	c.JSON(http.StatusOK, gin.H{"users": out})
}

func (h *handlers) setUserRole(c *gin.Context) {
	var in identity.SetRoleInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	u, err := h.Accounts.SetRole(c.Request.Context(), caller(c), c.Param("userId"), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"userId": u.ID, "role": u.Role})
}

func (h *handlers) removeUser(c *gin.Context) {
	id := c.Param("userId")
	if err := h.Accounts.RemoveUser(c.Request.Context(), caller(c), id); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"userId": id, "status": "removed"})
}

func (h *handlers) forcePasswordReset(c *gin.Context) {
	out, err := h.Accounts.ForcePasswordReset(c.Request.Context(), caller(c), c.Param("userId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) changePassword(c *gin.Context) {
	var in identity.ChangePasswordInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.Accounts.ChangePassword(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
