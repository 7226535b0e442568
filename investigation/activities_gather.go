package investigation

import (
	"context"
	"errors"
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/datasources"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Registered names of the gathering activities.
const (
	NamePlanGathering      = "PlanGathering"
	NameRunDataSourceQuery = "RunDataSourceQuery"
)

// Error types of a data-source query. A refusal (credentials, permissions,
// a bad query, an address outside the allowlist) will not change on retry; an
// outage may.
const (
	ErrTypeDataSourceDenied      = "DataSourceDenied"
	ErrTypeDataSourceUnavailable = "DataSourceUnavailable"
	ErrTypeDataSourceMissing     = "DataSourceMissing"
)

// Gathering holds the limits of a pass's gathering (CAUSEWAY_DATASOURCE_*).
type Gathering struct {
	Budget     time.Duration
	MaxQueries int
	Lookback   time.Duration
}

// GatherPlanInput asks for the data-source queries of a pass's agents;
// At is the pass's start, the end of the queried window.
type GatherPlanInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Agents          []string
	At              time.Time
}

// GatherPlan is the pass's queries and the limits the workflow runs them
// under; Notes say what could not be planned. It holds no credential.
type GatherPlan struct {
	Queries      []datasources.Query
	Notes        []string
	QueryTimeout time.Duration
	Budget       time.Duration
}

// PlanGathering reads the tenant's data sources and the incident's alert and
// plans the queries of the pass's agents (datasources.Plan): scoped to the
// service, the alert's labels and the window around the onset. A tenant
// without sources gets an empty plan.
func (a *Activities) PlanGathering(ctx context.Context, in GatherPlanInput) (GatherPlan, error) {
	if a.DataSources == nil {
		return GatherPlan{}, nil
	}
	_, srcs, err := a.tenantSources(ctx, in.TenantID)
	if err != nil || len(srcs) == 0 {
		return GatherPlan{}, err
	}
	inc, err := a.Store.GetIncident(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return GatherPlan{}, temporalx.Classify(err)
	}
	sc := datasources.ScopeOf(alertOf(inc), in.At, a.Gathering.Lookback)
	p := datasources.Plan(srcs, sc, in.Agents, a.Gathering.MaxQueries)
	budget := a.Gathering.Budget
	if budget <= 0 {
		budget = config.ProductionDefaults().DataSourcePassBudget
	}
	return GatherPlan{Queries: p.Queries, Notes: p.Notes, QueryTimeout: a.DataSources.Options().QueryTimeout, Budget: budget}, nil
}

// tenantSources are the tenant's stored data sources and the same as the
// clients and plans see them.
func (a *Activities) tenantSources(ctx context.Context, tenantID string) ([]models.DataSource, []datasources.Source, error) {
	rows, err := a.Store.ListDataSources(ctx, tenantID)
	if err != nil {
		return nil, nil, err
	}
	srcs := make([]datasources.Source, len(rows))
	for i, r := range rows {
		srcs[i] = datasources.Source{ID: r.ID, Name: r.Name, Type: r.Type, URL: r.URL, Settings: r.Settings}
	}
	return rows, srcs, nil
}

// alertOf is what the scope of the incident's queries is drawn from.
func alertOf(inc *models.Incident) datasources.Alert {
	provider := inc.Source
	if provider == models.SourceManual {
		provider = ""
	}
	return datasources.Alert{Provider: provider, Service: inc.Service, Tags: inc.Tags, Metadata: inc.Metadata,
		Description: inc.Description, CreatedAt: inc.CreatedAt}
}

// QueryInput is one planned query of a pass; the activity loads the source
// and opens its credential itself, so no secret enters workflow history.
type QueryInput struct {
	TenantID        string
	InvestigationID string
	Query           datasources.Query
}

// QueryOutput is the short account of an answer kept in history: the
// answer's lines, cut to the result cap, and how many readings it holds.
type QueryOutput struct {
	Readings int
	Note     string
	Text     string
	// Values are the measured readings themselves (at most the source's
	// series cap), so an exported scenario can serve the same answer back
	// through the source's own protocol without asking the source again.
	Values []analyzer.Reading `json:",omitempty"`
}

// RunDataSourceQuery runs one query against the tenant's source and stores
// the answer as a gathered fact of the pass (once, keyed by the pass and the
// query). A refusal is a non-retryable DataSourceDenied error; an outage or a
// timeout a retryable DataSourceUnavailable; either becomes a coverage reason
// of the agents that wanted the answer, never a failed pass.
func (a *Activities) RunDataSourceQuery(ctx context.Context, in QueryInput) (QueryOutput, error) {
	q := in.Query
	id := models.GatheredFactID(in.InvestigationID, q.Key)
	row, err := a.Store.GetDataSource(ctx, in.TenantID, q.DataSourceID)
	if errors.Is(err, models.ErrNotFound) {
		return QueryOutput{}, temporal.NewNonRetryableApplicationError("the data source was deleted", ErrTypeDataSourceMissing, nil)
	}
	if err != nil {
		return QueryOutput{}, err
	}
	cfg, err := datasources.Unseal(row, a.Sealer)
	if err != nil {
		return QueryOutput{}, temporal.NewNonRetryableApplicationError("the stored credential cannot be opened with this server's secrets key", ErrTypeDataSourceDenied, nil)
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go temporalx.Heartbeat(hctx)
	res, err := a.DataSources.Run(ctx, cfg, q)
	if err != nil {
		// The message may quote what the system answered; it must not quote
		// our credential, and the cause is left out so nothing unscrubbed is
		// serialized into history.
		msg := shorten(cfg.Auth.Scrub(err.Error()))
		if datasources.Permanent(err) {
			return QueryOutput{}, temporal.NewNonRetryableApplicationError(msg, ErrTypeDataSourceDenied, nil)
		}
		return QueryOutput{}, temporal.NewApplicationError(msg, ErrTypeDataSourceUnavailable)
	}
	text := analyzer.ReadingsText(res.Readings)
	measured := res.Text == ""
	if !measured {
		text = res.Text
	}
	if text == "" && res.Note != "" {
		text = "(" + res.Note + ")"
	}
	fact := &models.GatheredFact{ID: id, TenantID: in.TenantID, InvestigationID: in.InvestigationID, DataSourceID: q.DataSourceID,
		Type: q.Type, Query: q.Text, Roles: q.Roles, Text: cfg.Auth.Scrub(text), Readings: res.Readings, Note: res.Note,
		Measured: measured, CreatedAt: time.Now().UTC()}
	// A retry after a stored answer keeps the first one, which agents may
	// already have read, and reports it.
	stored, err := a.Store.SaveGatheredFact(ctx, fact)
	if err != nil {
		return QueryOutput{}, err
	}
	out := queryOutput(stored.Text, len(stored.Readings), stored.Note, a.resultCap())
	if stored.Measured {
		out.Values = stored.Readings
	}
	return out, nil
}

func (a *Activities) resultCap() int {
	if a.DataSources == nil {
		return config.ProductionDefaults().DataSourceResultCap
	}
	return a.DataSources.Options().ResultCap
}

func queryOutput(text string, readings int, note string, limit int) QueryOutput {
	if len(text) > limit {
		text = shortenTo(text, limit)
	}
	return QueryOutput{Readings: readings, Note: note, Text: text}
}

// gatheredExcerpts loads the answers the pass accepted (keys) as excerpts
// the agents read next to the alert and pasted context.
func (a *Activities) gatheredExcerpts(ctx context.Context, tenantID, investigationID string, keys []string) ([]analyzer.Excerpt, error) {
	facts, err := a.Store.GatheredFacts(ctx, tenantID, investigationID, keys)
	if err != nil {
		return nil, err
	}
	out := make([]analyzer.Excerpt, 0, len(facts))
	for _, f := range facts {
		roles := append([]string(nil), f.Roles...)
		sort.Strings(roles)
		out = append(out, analyzer.Excerpt{
			Source: analyzer.Source{Kind: analyzer.SourceDataSource, DataSourceID: f.DataSourceID, Type: f.Type, Query: f.Query},
			Text:   f.Text, Roles: roles, Readings: f.Readings, Measured: f.Measured,
		})
	}
	return out, nil
}

// sourceAgents lists the agents that read the tenant's connected sources, so
// a bland alert still gets the agents that can query something about it.
func (a *Activities) sourceAgents(ctx context.Context, tenantID string) []string {
	if a.DataSources == nil {
		return nil
	}
	rows, err := a.Store.ListDataSources(ctx, tenantID)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range rows {
		out = union(out, datasources.AgentsOf(r.Type))
	}
	return out
}
