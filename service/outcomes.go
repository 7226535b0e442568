package service

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/replay"
)

// Limits of a grade's free text.
const (
	MaxCulpritLength      = 200
	MaxFeedbackNoteLength = 2000
)

// Outcomes records how people grade investigations, reads the grades back
// and exports incidents as replayable scenarios.
type Outcomes struct {
	store    *models.Store
	temporal client.Client
	now      func() time.Time
}

// NewOutcomes wires the outcomes service; tc reads the passes' histories.
func NewOutcomes(store *models.Store, tc client.Client) *Outcomes {
	return &Outcomes{store: store, temporal: tc, now: time.Now}
}

// FeedbackInput is the body of POST /v1/investigation/{incidentId}/feedback.
type FeedbackInput struct {
	Verdict        string `json:"verdict"`
	ActualCategory string `json:"actualCategory"`
	ActualCulprit  string `json:"actualCulprit"`
	Note           string `json:"note"`
}

// FeedbackView is one person's grade as the API shows it.
type FeedbackView struct {
	IncidentID      string    `json:"incidentId"`
	InvestigationID string    `json:"investigationId"`
	UserID          string    `json:"userId"`
	Actor           string    `json:"actor"`
	Verdict         string    `json:"verdict"`
	ActualCategory  string    `json:"actualCategory,omitempty"`
	ActualCulprit   string    `json:"actualCulprit,omitempty"`
	Note            string    `json:"note,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
}

func viewFeedback(f models.Feedback) FeedbackView {
	return FeedbackView{IncidentID: f.IncidentID, InvestigationID: f.InvestigationID, UserID: f.UserID, Actor: f.Actor,
		Verdict: f.Verdict, ActualCategory: f.ActualCategory, ActualCulprit: f.ActualCulprit, Note: f.Note, CreatedAt: f.CreatedAt}
}

func (in *FeedbackInput) validate() error {
	in.ActualCategory = strings.TrimSpace(in.ActualCategory)
	in.ActualCulprit = strings.TrimSpace(in.ActualCulprit)
	in.Note = strings.TrimSpace(in.Note)
	switch {
	case in.Verdict != models.VerdictCorrect && in.Verdict != models.VerdictPartly && in.Verdict != models.VerdictWrong:
		return errcode.Invalid("verdict must be one of correct, partly, wrong")
	case in.ActualCategory != "" && !analyzer.ValidCategory(in.ActualCategory):
		return errcode.Invalid("actualCategory must be one of %s", strings.Join(analyzer.Categories, ", "))
	case utf8.RuneCountInString(in.ActualCulprit) > MaxCulpritLength:
		return errcode.Invalid("actualCulprit must be at most %d characters", MaxCulpritLength)
	case utf8.RuneCountInString(in.Note) > MaxFeedbackNoteLength:
		return errcode.Invalid("note must be at most %d characters", MaxFeedbackNoteLength)
	}
	return nil
}

// Grade records p's grade of the incident's latest completed pass, replacing
// their earlier grade of it. An incident of another tenant, or one with no
// answer yet, is not found.
func (o *Outcomes) Grade(ctx context.Context, p auth.Principal, incidentID string, in FeedbackInput) (*FeedbackView, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	inv, err := o.store.LatestCompletedInvestigation(ctx, p.TenantID, incidentID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.IncidentNotFound, "no incident with id %q has a completed investigation to grade", incidentID)
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	f := models.Feedback{InvestigationID: inv.ID, UserID: p.UserID, TenantID: p.TenantID, IncidentID: incidentID,
		Verdict: in.Verdict, ActualCategory: in.ActualCategory, ActualCulprit: in.ActualCulprit, Note: in.Note,
		Actor: p.Email, CreatedAt: o.now().UTC()}
	if err := o.store.SaveFeedback(ctx, &f); err != nil {
		return nil, errcode.Down("the database", err)
	}
	v := viewFeedback(f)
	return &v, nil
}

// Export is the incident's latest answered pass as a replayable scenario:
// its alert and context, the data-source answers and changes read from the
// pass's workflow history (no source is asked again), and the cause a person
// confirmed when the pass was graded. Source URLs and credentials never enter
// it, nor do credentials found in its log lines, context or alert text
// (models.RedactSecrets). Another tenant's incident is not found.
func (o *Outcomes) Export(ctx context.Context, p auth.Principal, incidentID string) (*replay.Scenario, error) {
	inc, err := investigation.FindIncident(ctx, o.store, p.TenantID, incidentID)
	if err != nil {
		return nil, err
	}
	inv, err := o.store.LatestCompletedInvestigation(ctx, p.TenantID, incidentID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errcode.New(errcode.IncidentNotFound, "incident %q has no completed investigation to export", incidentID)
	}
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	rec, err := replay.FromHistory(o.temporal.GetWorkflowHistory(ctx, investigation.InvestigationWorkflowID(incidentID, inv.Pass), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT))
	if err != nil {
		return nil, errcode.Down("Temporal", err)
	}
	srcs, answers := rec.Answers(func(id string) map[string]any {
		if row, err := o.store.GetDataSource(ctx, p.TenantID, id); err == nil {
			return row.Settings
		}
		return nil
	})
	grades, err := o.store.IncidentFeedback(ctx, p.TenantID, incidentID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	s := &replay.Scenario{AlertSource: inc.Source, Sources: srcs, Answers: answers}
	s.ID, s.Changes = "incident-"+inc.ID, rec.Changes
	// Pasted context and the alert's text are as free as the logs.
	for _, c := range inv.Context {
		s.Context = append(s.Context, models.RedactSecrets(c))
	}
	s.Alert = analyzer.ScenarioAlert{Title: models.RedactSecrets(inc.Title), Description: models.RedactSecrets(inc.Description), Severity: inc.Severity, Service: inc.Service,
		Environment: inc.Environment, Tags: inc.Tags, Metadata: inc.Metadata}
	s.Expected = analyzer.Expected{Category: inv.Category, Agents: inv.Agents, Rationale: "the answer of pass " + strconv.Itoa(inv.Pass) + ", not graded"}
	for _, g := range grades {
		if g.InvestigationID != inv.ID {
			continue
		}
		// The newest grade that names a cause decides the label.
		if g.Verdict == models.VerdictCorrect || g.ActualCategory != "" {
			if g.ActualCategory != "" && g.Verdict != models.VerdictCorrect {
				s.Expected.Category = g.ActualCategory
			}
			s.Graded, s.Culprit = true, g.ActualCulprit
			// The grader is not named: the file may travel beyond the tenant.
			s.Expected.Rationale = "graded " + g.Verdict + noteSuffix(g.Note)
			break
		}
	}
	return s, nil
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}

// Feedback lists every grade of the incident's passes, newest first.
func (o *Outcomes) Feedback(ctx context.Context, p auth.Principal, incidentID string) ([]FeedbackView, error) {
	rows, err := o.store.IncidentFeedback(ctx, p.TenantID, incidentID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	out := make([]FeedbackView, len(rows))
	for i, r := range rows {
		out[i] = viewFeedback(r)
	}
	return out, nil
}

// AccuracyFigures are the figures of one group of answers. Correct, Partly
// and Wrong count grades (each person's latest grade of a pass), Graded the
// answers with at least one grade.
type AccuracyFigures struct {
	Answers   int `json:"answers"`
	Graded    int `json:"graded"`
	Correct   int `json:"correct"`
	Partly    int `json:"partly"`
	Wrong     int `json:"wrong"`
	Recovered int `json:"recoveredAfterRemediation"`
	// MedianTimeToAnswer is the median seconds from a pass's start to its
	// answer, 0 when there were no answers.
	MedianTimeToAnswer float64 `json:"medianTimeToAnswer"`
	durations          []float64
}

// AccuracyAnalytics is the body of GET /v1/analytics/accuracy.
type AccuracyAnalytics struct {
	Period     string                      `json:"period"`
	Total      *AccuracyFigures            `json:"total"`
	ByCategory map[string]*AccuracyFigures `json:"byCategory"`
	ByAgent    map[string]*AccuracyFigures `json:"byAgent"`
	ByModel    map[string]*AccuracyFigures `json:"byModel"`
}

// ModelOffline names the offline analyzer among the models.
const ModelOffline = "offline"

// Accuracy computes the figures of the answers given in the last period: per
// answered category, per agent that took part, and per model (offline for the
// analyzer).
func (a *Analytics) Accuracy(ctx context.Context, p auth.Principal, period string) (*AccuracyAnalytics, error) {
	period, since, err := a.since(period)
	if err != nil {
		return nil, err
	}
	answers, err := a.store.AnswersSince(ctx, p.TenantID, since)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	out := &AccuracyAnalytics{Period: period, Total: &AccuracyFigures{}, ByCategory: map[string]*AccuracyFigures{},
		ByAgent: map[string]*AccuracyFigures{}, ByModel: map[string]*AccuracyFigures{}}
	for _, r := range answers {
		model := r.Model
		if model == "" {
			model = ModelOffline
		}
		groups := []*AccuracyFigures{out.Total, figuresOf(out.ByCategory, r.Category), figuresOf(out.ByModel, model)}
		for _, agent := range r.Agents {
			groups = append(groups, figuresOf(out.ByAgent, agent))
		}
		for _, g := range groups {
			g.add(r)
		}
	}
	for _, m := range []map[string]*AccuracyFigures{{"": out.Total}, out.ByCategory, out.ByAgent, out.ByModel} {
		for _, g := range m {
			g.MedianTimeToAnswer = median(g.durations)
		}
	}
	return out, nil
}

func figuresOf(m map[string]*AccuracyFigures, key string) *AccuracyFigures {
	if m[key] == nil {
		m[key] = &AccuracyFigures{}
	}
	return m[key]
}

func (g *AccuracyFigures) add(r models.AnswerRecord) {
	g.Answers++
	if len(r.Verdicts) > 0 {
		g.Graded++
	}
	for _, v := range r.Verdicts {
		switch v {
		case models.VerdictCorrect:
			g.Correct++
		case models.VerdictPartly:
			g.Partly++
		case models.VerdictWrong:
			g.Wrong++
		}
	}
	if r.Recovered {
		g.Recovered++
	}
	g.durations = append(g.durations, r.CompletedAt.Sub(r.StartedAt).Seconds())
}

// median is the middle value, or the mean of the two middle ones.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
