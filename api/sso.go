package api

import (
	"net/http"

	"github.com/causeway/causeway/identity"
	"github.com/gin-gonic/gin"
)

const ssoCookie = "causeway_sso"

func ssoPath(tenantID string) string { return "/auth/sso/" + tenantID }

func (h *handlers) putSSO(c *gin.Context) {
	var in identity.SSOInput
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.SSO.Configure(c.Request.Context(), caller(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) getSSO(c *gin.Context) {
	out, err := h.SSO.Get(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) deleteSSO(c *gin.Context) {
	if err := h.SSO.Delete(c.Request.Context(), caller(c)); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "deleted"})
}

// ssoLogin redirects the browser to the tenant's identity provider and binds
// the flow to this browser with a short-lived cookie on the tenant's SSO path.
func (h *handlers) ssoLogin(c *gin.Context) {
	tenantID := c.Param("tenantId")
	out, err := h.SSO.Login(c.Request.Context(), tenantID)
	if err != nil {
		fail(c, err)
		return
	}
	if out.Cookie != "" {
		c.SetSameSite(http.SameSiteLaxMode)
		c.SetCookie(ssoCookie, out.Cookie, 600, ssoPath(tenantID), "", h.https(c), true)
	}
	c.Redirect(http.StatusFound, out.URL)
}

func (h *handlers) ssoCallback(c *gin.Context) {
	tenantID := c.Param("tenantId")
	cookie, _ := c.Cookie(ssoCookie)
	out, err := h.SSO.OIDCCallback(c.Request.Context(), tenantID, c.Query("code"), c.Query("state"), cookie)
	c.SetCookie(ssoCookie, "", -1, ssoPath(tenantID), "", h.https(c), true)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// ssoMetadata serves the tenant's SAML service provider metadata.
func (h *handlers) ssoMetadata(c *gin.Context) {
	out, err := h.SSO.SAMLMetadata(c.Request.Context(), c.Param("tenantId"))
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/samlmetadata+xml", out)
}

// ssoACS receives the identity provider's POSTed SAML response.
func (h *handlers) ssoACS(c *gin.Context) {
	out, err := h.SSO.SAMLACS(c.Request.Context(), c.Param("tenantId"), c.PostForm("SAMLResponse"), c.PostForm("RelayState"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
