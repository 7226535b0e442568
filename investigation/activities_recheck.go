package investigation

import (
	"context"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/temporalx"
)

const maxRecheckLines = 20

// Recheck runs again the data-source queries whose answers the pass's
// evidence cites, over the window from since (the remediation's end) to now,
// and lets the offline analyzer judge the new readings alone, without the
// alert's words: if an agent still finds the pass's category in them, the
// cause is still there. A query that fails now is counted as asked and not
// answered.
func (a *Activities) Recheck(ctx context.Context, tenantID, investigationID string, since time.Time) (remediation.Recheck, error) {
	inv, err := a.Store.GetInvestigation(ctx, tenantID, investigationID)
	if err != nil {
		return remediation.Recheck{}, temporalx.Classify(err)
	}
	inc, err := a.Store.GetIncident(ctx, tenantID, inv.IncidentID)
	if err != nil {
		return remediation.Recheck{}, temporalx.Classify(err)
	}
	out := remediation.Recheck{AlertResolved: inc.Status == models.StatusResolved}
	cited := map[[2]string]bool{}
	for _, e := range inv.Evidence {
		if s := e.Source; s != nil && s.Kind == analyzer.SourceDataSource {
			cited[[2]string{s.DataSourceID, s.Query}] = true
		}
	}
	if len(cited) == 0 || a.DataSources == nil {
		return out, nil
	}
	rows, srcs, err := a.tenantSources(ctx, tenantID)
	if err != nil {
		return remediation.Recheck{}, err
	}
	byID := map[string]*models.DataSource{}
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	// The queries share the pass's gathering budget: a source that is down
	// costs the verification an answer, never its end.
	budget := a.Gathering.Budget
	if budget <= 0 {
		budget = config.ProductionDefaults().DataSourcePassBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	now := time.Now().UTC()
	plan := datasources.Plan(srcs, datasources.ScopeOf(alertOf(inc), now, a.Gathering.Lookback), inv.Agents, len(cited)+a.Gathering.MaxQueries)
	var excerpts []analyzer.Excerpt
	for _, q := range plan.Queries {
		if !cited[[2]string{q.DataSourceID, q.Text}] {
			continue
		}
		out.Asked++
		if since.After(q.Start) && since.Before(now) {
			q.Start, q.Step = since, 0
		}
		cfg, err := datasources.Unseal(byID[q.DataSourceID], a.Sealer)
		if err != nil {
			continue
		}
		res, err := a.DataSources.Run(ctx, cfg, q)
		if err != nil {
			continue
		}
		out.Answered++
		for _, r := range res.Readings {
			if len(out.Lines) < maxRecheckLines {
				out.Lines = append(out.Lines, clip.To(cfg.Auth.Scrub(r.Line), 300))
			}
		}
		excerpts = append(excerpts, analyzer.Excerpt{
			Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: q.DataSourceID, Type: q.Type, Query: q.Text},
			Text:   analyzer.ReadingsText(res.Readings), Readings: res.Readings, Measured: res.Text == "",
		})
	}
	in := analyzer.Input{Service: inc.Service, Environment: inc.Environment, Gathered: excerpts}
	for _, role := range inv.Agents {
		for _, f := range analyzer.Investigate(role, in).Findings {
			out.StillShows = out.StillShows || (f.Category == inv.Category && f.Stance == analyzer.StanceSupports)
		}
	}
	return out, nil
}
