package ui

import (
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/service"
)

// accuracyView is the accuracy page: the figures of one period, one table per
// grouping.
type accuracyView struct {
	Period  string
	Periods []string
	Stats   *service.AccuracyAnalytics
	Tables  []accuracyTable
}

// accuracyTable is one grouping of the answers (by category, agent, model).
type accuracyTable struct {
	Title, Key string
	Rows       []accuracyRow
}

// accuracyRow is one group's figures, its median already worded.
type accuracyRow struct {
	Key    string
	F      *service.AccuracyFigures
	Median string
}

func (d *Dashboard) accuracy(c *gin.Context) {
	st, err := d.o.Analytics.Accuracy(c.Request.Context(), principal(c), c.DefaultQuery("period", service.DefaultAnalyticsPeriod))
	if err != nil {
		d.fail(c, err)
		return
	}
	tables := []accuracyTable{
		{Title: "By category answered", Key: "Category", Rows: accuracyRows(st.ByCategory)},
		{Title: "By agent", Key: "Agent", Rows: accuracyRows(st.ByAgent)},
		{Title: "By model", Key: "Model", Rows: accuracyRows(st.ByModel)},
	}
	d.render(c, http.StatusOK, "accuracy", d.page(c, "Accuracy", "analytics",
		accuracyView{Period: st.Period, Periods: analyticsPeriods, Stats: st, Tables: tables}))
}

// accuracyRows orders a grouping by its key, so the page reads the same on
// every load.
func accuracyRows(m map[string]*service.AccuracyFigures) []accuracyRow {
	out := make([]accuracyRow, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, accuracyRow{Key: k, F: m[k], Median: fmt.Sprintf("%.1f s", m[k].MedianTimeToAnswer)})
	}
	return out
}
