package identity

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Plans moves tenants between plans and reports what a tenant has used of its
// plan this month. The quotas come from config; each tenant row carries its
// plan's, so the quota checks on the hot paths read no config.
type Plans struct {
	store  *models.Store
	quotas map[string]config.PlanQuota
	now    func() time.Time
	// sso reports the tenant's single sign-on in the overview; nil leaves
	// it out.
	sso *SSO
}

// NewPlans wires the plans service with every plan's quotas (config.PlanQuotas).
func NewPlans(store *models.Store, quotas map[string]config.PlanQuota) *Plans {
	return &Plans{store: store, quotas: quotas, now: time.Now}
}

// WithSSO makes the overview report the tenant's single sign-on.
func (p *Plans) WithSSO(s *SSO) *Plans {
	p.sso = s
	return p
}

// planQuota is the named plan's quotas, or a validation error naming the
// plans.
func planQuota(quotas map[string]config.PlanQuota, plan string) (config.PlanQuota, error) {
	q, ok := quotas[plan]
	if !ok || !models.ValidPlan(plan) {
		return q, errcode.Invalid("plan must be one of free, team, enterprise")
	}
	return q, nil
}

// Change moves a tenant to plan. What the tenant used this month stays used;
// the new limits apply to the next event or investigation, so a downgrade
// below the month's usage stops new ones at once and an upgrade lets them
// through at once.
func (p *Plans) Change(ctx context.Context, tenantID, plan string) (*models.Tenant, error) {
	q, err := planQuota(p.quotas, plan)
	if err != nil {
		return nil, err
	}
	switch err := p.store.SetPlan(ctx, tenantID, plan, q.EventsPerMonth, q.InvestigationsPerMonth); {
	case errors.Is(err, models.ErrNotFound):
		return nil, errcode.New(errcode.NotFound, "no tenant %s", tenantID)
	case err != nil:
		return nil, errcode.Down("the database", err)
	}
	t, err := p.store.TenantByID(ctx, tenantID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	return t, nil
}

// Apply gives every tenant its plan's configured quotas, so a changed plan
// setting reaches the tenants already on that plan. The migrate command runs
// it: configuration changes ship with a release.
func (p *Plans) Apply(ctx context.Context) (int64, error) {
	names := make([]string, 0, len(p.quotas))
	for name := range p.quotas {
		names = append(names, name)
	}
	sort.Strings(names)
	var changed int64
	for _, name := range names {
		q := p.quotas[name]
		n, err := p.store.ApplyPlanQuotas(ctx, name, q.EventsPerMonth, q.InvestigationsPerMonth)
		if err != nil {
			return changed, errcode.Down("the database", err)
		}
		changed += n
	}
	return changed, nil
}

// QuotaUse is one quota of the current period. Limit 0 means unlimited, and
// then Remaining is -1, as in the incident answers.
type QuotaUse struct {
	Limit     int `json:"limit"`
	Used      int `json:"used"`
	Remaining int `json:"remaining"`
}

func quotaUse(limit, used int) QuotaUse {
	if limit == 0 {
		return QuotaUse{Limit: 0, Used: used, Remaining: models.Unlimited}
	}
	return QuotaUse{Limit: limit, Used: used, Remaining: max(limit-used, 0)}
}

// TenantOverview is what GET /v1/tenant answers: the tenant's plan, what it
// used of each quota in the current period, and its single sign-on.
type TenantOverview struct {
	Tenant *models.Tenant
	Events QuotaUse
	Inv    QuotaUse
	// Users is the plan's cap on users (not monthly) and how many there are.
	Users       QuotaUse
	PeriodStart time.Time
	PeriodEnd   time.Time
	SSO         *SSOSummary
}

// SSOSummary says whether and how a tenant signs in through its identity
// provider.
type SSOSummary struct {
	Type     string `json:"type"`
	Enforced bool   `json:"enforced"`
}

// Overview reports the caller's tenant: plan, usage, period and SSO.
func (p *Plans) Overview(ctx context.Context, who auth.Principal) (TenantOverview, error) {
	now := p.now().UTC()
	t, u, err := p.store.TenantUsage(ctx, who.TenantID, now)
	if errors.Is(err, models.ErrNotFound) {
		return TenantOverview{}, errcode.New(errcode.NotFound, "tenant not found")
	}
	if err != nil {
		return TenantOverview{}, errcode.Down("the database", err)
	}
	users, err := p.store.CountUsers(ctx, t.ID)
	if err != nil {
		return TenantOverview{}, errcode.Down("the database", err)
	}
	start, end := models.PeriodBounds(now)
	out := TenantOverview{Tenant: t, Events: quotaUse(t.QuotaEvents, u.Events), Inv: quotaUse(t.QuotaInvestigations, u.Investigations),
		Users: quotaUse(p.quotas[t.Plan].Users, users), PeriodStart: start, PeriodEnd: end}
	if p.sso != nil {
		if out.SSO, err = p.sso.Summary(ctx, t.ID); err != nil {
			return TenantOverview{}, err
		}
	}
	return out, nil
}
