package investigation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Registered names of the investigation activities.
const (
	NameTriageIncident          = "TriageIncident"
	NameBeginInvestigation      = "BeginInvestigation"
	NameRunAgent                = "RunAgent"
	NameSynthesizeInvestigation = "SynthesizeInvestigation"
	NameFinishInvestigation     = "FinishInvestigation"
)

// Error types of the investigation activities. The LLM types let the Temporal UI
// and the coverage reasons tell a refusal from an outage.
const (
	ErrTypeLLMRefused     = "LLMRefused"
	ErrTypeLLMMalformed   = "LLMMalformedOutput"
	ErrTypeLLMConfig      = "LLMInvalidConfig"
	ErrTypeLLMRejected    = "LLMRequestRejected"
	ErrTypeLLMUnavailable = "LLMUnavailable" // retryable
	// ErrTypeStoreUnavailable is an agent that could not read or write the
	// database. The agent's workflow waits for the database and asks again
	// rather than letting an outage use up the retries meant for the LLM.
	ErrTypeStoreUnavailable = "StoreUnavailable" // retryable
)

// TriageInput asks for an incident's triage; DedupKey keys its timeline entry.
type TriageInput struct {
	TenantID   string
	IncidentID string
	At         time.Time
	DedupKey   string
}

// TriageOutput is triage's decision: the normalized severity, the agents to
// dispatch (sorted) and why, in words.
type TriageOutput struct {
	Severity string
	Agents   []string
	Reason   string
}

// TriageIncident normalizes the incident's severity, selects the specialist agents
// and records both with the reason in the timeline.
func (a *Activities) TriageIncident(ctx context.Context, in TriageInput) (TriageOutput, error) {
	inc, err := a.Store.GetIncident(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return TriageOutput{}, temporalx.Classify(err)
	}
	fallback := inc.Severity
	if fallback == "" {
		fallback = models.SeverityMedium
	}
	sev := analyzer.NormalizeSeverity(inc.Severity, fallback)
	input := incidentInput(inc, nil)
	input.Severity = sev
	readers := union(a.sourceAgents(ctx, in.TenantID), a.changeReaders(ctx, in.TenantID))
	agents := union(analyzer.SelectAgents(input), readers)
	out := TriageOutput{Severity: sev, Agents: agents, Reason: triageReason(sev, agents, readers)}
	msg := fmt.Sprintf("Triage: severity %s; agents %s (%s)", sev, strings.Join(agents, ", "), out.Reason)
	err = a.Passes.SetIncidentSeverity(ctx, in.TenantID, in.IncidentID, sev, models.TimelineEntry{
		At: in.At.UTC(), Kind: "triaged", Message: msg, Actor: "causeway", DedupKey: in.DedupKey,
	})
	return out, temporalx.Classify(err)
}

func triageReason(severity string, agents, readers []string) string {
	if severity == models.SeverityCritical {
		return "critical alerts get every agent"
	}
	var extra, sourced []string
	for _, r := range agents {
		switch {
		case r == analyzer.RoleLogs || r == analyzer.RoleMetrics:
		case slices.Contains(readers, r):
			sourced = append(sourced, r)
		default:
			extra = append(extra, r)
		}
	}
	reason := "logs and metrics always run; "
	if len(extra) == 0 {
		reason += "no specialist's keywords appear in the alert"
	} else {
		reason += strings.Join(extra, ", ") + " matched keywords in the alert"
	}
	if len(sourced) > 0 {
		reason += "; " + strings.Join(sourced, ", ") + " read the connected data sources or recorded changes"
	}
	return reason
}

// incidentInput is what every agent sees: the alert fields and the context
// entries, cut to what an agent reads (analyzer.BoundInput), for the offline
// analyzer, the LLM and synthesis alike.
func incidentInput(inc *models.Incident, contextEntries []string) analyzer.Input {
	return analyzer.BoundInput(analyzer.Input{
		Title: inc.Title, Description: inc.Description, Severity: inc.Severity, Service: inc.Service,
		Environment: inc.Environment, Tags: inc.Tags, Metadata: inc.Metadata, Context: analyzer.Excerpts(contextEntries),
	})
}

// union merges two agent lists into one sorted list without repeats.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// BeginInput starts one investigation pass. Agents may be empty (the previous
// pass's agents, else triage's choice); Context is new supplemental text.
type BeginInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Pass            int
	Agents          []string
	Context         string
	Actor           string
	At              time.Time
	DedupKey        string
}

// BeginOutput names the agents the pass dispatches.
type BeginOutput struct {
	Agents []string
}

// BeginInvestigation spends one unit of investigation quota and records the
// running pass, its context and the incident's move to investigating, all in one
// transaction keyed by the investigation id, so a retry never spends twice.
// A spent quota is a non-retryable QuotaExceeded error.
func (a *Activities) BeginInvestigation(ctx context.Context, in BeginInput) (BeginOutput, error) {
	readers := union(a.sourceAgents(ctx, in.TenantID), a.changeReaders(ctx, in.TenantID))
	inv, err := a.Passes.BeginInvestigation(ctx, BeginSpec{
		TenantID: in.TenantID, IncidentID: in.IncidentID, InvestigationID: in.InvestigationID, Pass: in.Pass,
		NewContext: strings.TrimSpace(in.Context), Actor: in.Actor, At: in.At.UTC(), Agents: in.Agents,
		ChooseAgents: func(inc *models.Incident, entries []string, prev *models.Investigation) []string {
			// A new pass keeps the previous pass's agents and adds any specialist
			// the context gathered since then calls for.
			chosen := union(analyzer.SelectAgents(incidentInput(inc, entries)), readers)
			if prev != nil {
				chosen = union(prev.Agents, chosen)
			}
			return chosen
		},
		Entry: models.TimelineEntry{At: in.At.UTC(), Kind: "investigation_started", Actor: in.Actor, DedupKey: in.DedupKey,
			Message: fmt.Sprintf("Investigation pass %d started (%s)", in.Pass, in.InvestigationID)},
	})
	if errors.Is(err, models.ErrQuotaExceeded) {
		return BeginOutput{}, temporal.NewNonRetryableApplicationError(
			"the monthly investigation quota of this tenant is used up", ErrTypeQuotaExceeded, err)
	}
	if err != nil {
		return BeginOutput{}, temporalx.Classify(err)
	}
	return BeginOutput{Agents: inv.Agents}, nil
}

// SynthesisInput names the pass and the agents whose reports finished in time;
// only those are read, so a late report never sneaks into the answer.
type SynthesisInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Completed       []string
	// Facts are the keys of every data-source answer the pass accepted, so
	// evidence quoting one is valid and names its query.
	Facts []string
	// Changes are the recorded changes the pass read, so evidence citing one
	// is valid and names it.
	Changes []analyzer.Change
}

// SynthesisSummary is the short account of the answer kept in history.
type SynthesisSummary struct {
	Category   string
	Confidence float64
	Evidence   int
	Dropped    int
	// Culprit names the object blamed ("deployment shop/checkout"), empty
	// with unknown.
	Culprit string `json:",omitempty"`
}

// SynthesizeInvestigation combines the stored reports with analyzer.Synthesize,
// the same evidence rules for the offline and the LLM path (uncited findings
// dropped, confidence from evidence, unknown when thin), and stores the answer on
// the running pass. Synthesis is deterministic, so retries store the same answer.
func (a *Activities) SynthesizeInvestigation(ctx context.Context, in SynthesisInput) (SynthesisSummary, error) {
	inv, err := a.Store.GetInvestigation(ctx, in.TenantID, in.InvestigationID)
	if err != nil {
		return SynthesisSummary{}, temporalx.Classify(err)
	}
	inc, err := a.Store.GetIncident(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return SynthesisSummary{}, temporalx.Classify(err)
	}
	runs, err := a.Store.AgentRuns(ctx, in.InvestigationID)
	if err != nil {
		return SynthesisSummary{}, err
	}
	want := map[string]bool{}
	for _, r := range in.Completed {
		want[r] = true
	}
	var reports []analyzer.AgentReport
	model := OfflineModel
	for _, run := range runs {
		if !want[run.AgentRole] || run.Status != models.CoverageCompleted {
			continue
		}
		var rep analyzer.AgentReport
		if err := json.Unmarshal([]byte(run.Report), &rep); err != nil {
			continue
		}
		reports = append(reports, rep)
		model = run.Model
	}
	input := incidentInput(inc, inv.Context)
	if input.Gathered, err = a.gatheredExcerpts(ctx, in.TenantID, in.InvestigationID, in.Facts); err != nil {
		return SynthesisSummary{}, err
	}
	input = input.WithChanges(in.Changes)
	res := analyzer.Synthesize(input, reports)
	syn := Synthesis{Category: res.Category, Confidence: res.Confidence, RootCause: res.RootCause,
		Culprit: res.Culprit, Mechanism: res.Mechanism, Candidates: res.Candidates, RecommendedActions: res.RecommendedActions, Model: model}
	for _, e := range res.Evidence {
		syn.Evidence = append(syn.Evidence, models.Evidence{AgentRole: e.AgentRole, AgentRoles: e.AgentRoles, Content: e.Content, Source: e.Source})
	}
	for _, h := range res.Hypotheses {
		syn.Hypotheses = append(syn.Hypotheses, models.Hypothesis{Category: h.Category, Summary: h.Summary, Score: h.Score, RuledOut: h.RuledOut})
	}
	if err := a.Passes.SaveSynthesis(ctx, in.InvestigationID, syn); err != nil {
		return SynthesisSummary{}, err
	}
	sum := SynthesisSummary{Category: res.Category, Confidence: res.Confidence, Evidence: len(res.Evidence), Dropped: res.Dropped}
	if res.Culprit != nil {
		sum.Culprit = shortenTo(res.Culprit.String(), 200)
	}
	return sum, nil
}

// FinishInput ends a pass as completed or failed, with the coverage of every
// dispatched agent; Message is the timeline entry, keyed by DedupKey.
type FinishInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Status          string
	Coverage        []models.Coverage
	Reason          string
	Message         string
	At              time.Time
	DedupKey        string
}

// FinishOutput is the incident's status after the pass ended.
type FinishOutput struct {
	IncidentStatus string
}

// FinishInvestigation records the end of a pass, its investigation.completed
// outbox event, the token totals and the incident's new status in one
// transaction; a pass already finished is left untouched.
func (a *Activities) FinishInvestigation(ctx context.Context, in FinishInput) (FinishOutput, error) {
	before, err := a.Store.GetInvestigation(ctx, in.TenantID, in.InvestigationID)
	if err != nil {
		return FinishOutput{}, temporalx.Classify(err)
	}
	status, err := a.Passes.FinishInvestigation(ctx, FinishSpec{
		TenantID: in.TenantID, InvestigationID: in.InvestigationID, Status: in.Status,
		Coverage: in.Coverage, FailureReason: in.Reason, At: in.At.UTC(),
		Entry: models.TimelineEntry{At: in.At.UTC(), Kind: "investigation_" + in.Status, Message: in.Message,
			Actor: "causeway", DedupKey: in.DedupKey},
	})
	if err != nil {
		return FinishOutput{}, temporalx.Classify(err)
	}
	if before.Status == models.InvestigationRunning { // count a pass once, not per retry
		metrics.ObserveInvestigation(in.Status, in.At.Sub(before.StartedAt))
	}
	a.released()
	return FinishOutput{IncidentStatus: status}, nil
}
