package service

import (
	"context"
	"math"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// AnalyticsPeriods are the allowed values of ?period=, in days.
var AnalyticsPeriods = map[string]int{"7d": 7, "30d": 30, "90d": 90}

// DefaultAnalyticsPeriod applies when ?period= is absent.
const DefaultAnalyticsPeriod = "30d"

// Analytics serves GET /v1/analytics/incidents.
type Analytics struct {
	store *models.Store
	now   func() time.Time
}

// NewAnalytics wires the analytics service.
func NewAnalytics(store *models.Store) *Analytics { return &Analytics{store: store, now: time.Now} }

// IncidentAnalytics is the body of GET /v1/analytics/incidents.
type IncidentAnalytics struct {
	Period            string         `json:"period"`
	TotalIncidents    int64          `json:"totalIncidents"`
	ResolvedIncidents int64          `json:"resolvedIncidents"`
	MTTR              int64          `json:"mttr"`
	ResolutionRate    float64        `json:"resolutionRate"`
	BySeverity        map[string]int `json:"bySeverity"`
}

// Incidents computes the figures for incidents created in the last period.
// resolvedIncidents counts those of them resolved since; mttr is their mean
// time to resolution in whole seconds (0 when none); resolutionRate is 0 when
// there were no incidents.
func (a *Analytics) Incidents(ctx context.Context, p auth.Principal, period string) (*IncidentAnalytics, error) {
	period, since, err := a.since(period)
	if err != nil {
		return nil, err
	}
	st, err := a.store.IncidentStatsSince(ctx, p.TenantID, since)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	out := &IncidentAnalytics{Period: period, TotalIncidents: st.Total, ResolvedIncidents: st.Resolved,
		MTTR: int64(math.Round(st.MTTRSeconds)),
		BySeverity: map[string]int{models.SeverityCritical: int(st.Critical), models.SeverityHigh: int(st.High),
			models.SeverityMedium: int(st.Medium), models.SeverityLow: int(st.Low)}}
	if st.Total > 0 {
		out.ResolutionRate = float64(st.Resolved) / float64(st.Total)
	}
	return out, nil
}

// since resolves ?period= (empty means the default) to its name and the
// start of its window.
func (a *Analytics) since(period string) (string, time.Time, error) {
	if period == "" {
		period = DefaultAnalyticsPeriod
	}
	days, ok := AnalyticsPeriods[period]
	if !ok {
		return "", time.Time{}, errcode.Invalid("period must be one of 7d, 30d, 90d")
	}
	return period, a.now().UTC().AddDate(0, 0, -days), nil
}
