package api

import (
	"net/http"
	"time"

	"github.com/causeway/causeway/identity"
	"github.com/gin-gonic/gin"
)

// tenantJSON is the body of GET /v1/tenant.
type tenantJSON struct {
	TenantID    string               `json:"tenantId"`
	Name        string               `json:"name"`
	Plan        string               `json:"plan"`
	Quotas      tenantQuotasJSON     `json:"quotas"`
	PeriodStart time.Time            `json:"periodStart"`
	PeriodEnd   time.Time            `json:"periodEnd"`
	SSO         *identity.SSOSummary `json:"sso"`
}

type tenantQuotasJSON struct {
	Events         identity.QuotaUse `json:"events"`
	Investigations identity.QuotaUse `json:"investigations"`
	Users          identity.QuotaUse `json:"users"`
}

func (h *handlers) getTenant(c *gin.Context) {
	o, err := h.Plans.Overview(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, tenantJSON{
		TenantID: o.Tenant.ID, Name: o.Tenant.Name, Plan: o.Tenant.Plan,
		Quotas:      tenantQuotasJSON{Events: o.Events, Investigations: o.Inv, Users: o.Users},
		PeriodStart: o.PeriodStart, PeriodEnd: o.PeriodEnd, SSO: o.SSO,
	})
}
