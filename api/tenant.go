package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/service"
)

// tenantJSON is the body of GET /v1/tenant.
type tenantJSON struct {
	TenantID    string              `json:"tenantId"`
	Name        string              `json:"name"`
	Plan        string              `json:"plan"`
	Quotas      tenantQuotasJSON    `json:"quotas"`
	PeriodStart time.Time           `json:"periodStart"`
	PeriodEnd   time.Time           `json:"periodEnd"`
	SSO         *service.SSOSummary `json:"sso"`
}

type tenantQuotasJSON struct {
	Events         service.QuotaUse `json:"events"`
	Investigations service.QuotaUse `json:"investigations"`
}

func (h *handlers) getTenant(c *gin.Context) {
	o, err := h.Plans.Overview(c.Request.Context(), caller(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, tenantJSON{
		TenantID: o.Tenant.ID, Name: o.Tenant.Name, Plan: o.Tenant.Plan,
		Quotas:      tenantQuotasJSON{Events: o.Events, Investigations: o.Inv},
		PeriodStart: o.PeriodStart, PeriodEnd: o.PeriodEnd, SSO: o.SSO,
	})
}
