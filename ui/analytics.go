package ui

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/service"
)

// analyticsView is the analytics page: the figures of one period and the chart
// drawn from them.
type analyticsView struct {
	Period  string
	Periods []string
	Stats   *service.IncidentAnalytics
	Chart   barChart
}

var analyticsPeriods = []string{"7d", "30d", "90d"}

func (d *Dashboard) analytics(c *gin.Context) {
	period := c.DefaultQuery("period", service.DefaultAnalyticsPeriod)
	st, err := d.o.Analytics.Incidents(c.Request.Context(), principal(c), period)
	if err != nil {
		d.fail(c, err)
		return
	}
	rows := make([]barInput, 0, 4)
	for _, sev := range []string{models.SeverityCritical, models.SeverityHigh, models.SeverityMedium, models.SeverityLow} {
		rows = append(rows, barInput{Label: label(sev), Value: int64(st.BySeverity[sev]), Class: "sev-" + sev})
	}
	rows = append(rows,
		barInput{Label: "All incidents", Value: st.TotalIncidents, Class: "total"},
		barInput{Label: "Resolved", Value: st.ResolvedIncidents, Class: "resolved"})
	chart := drawBars(fmt.Sprintf("Incidents created in the last %s, by severity, with how many were resolved", period), rows)
	d.render(c, http.StatusOK, "analytics", d.page(c, "Analytics", "analytics",
		analyticsView{Period: st.Period, Periods: analyticsPeriods, Stats: st, Chart: chart}))
}
