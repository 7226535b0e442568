package investigation

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/llm"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// OfflineModel is the model name recorded when the offline analyzer answered.
const OfflineModel = "offline-analyzer"

// storeUnavailable is a database failure of an agent run, in words fit for
// coverage: the driver's message names hosts and users, which the tenant who
// reads the coverage has no business seeing, so it goes to the worker's log.
func storeUnavailable(ctx context.Context, in AgentInput, err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return temporalx.Classify(err)
	}
	activity.GetLogger(ctx).Warn("agent could not reach the database", "tenant_id", in.TenantID,
		"investigation_id", in.InvestigationID, "agent", in.AgentRole, "error", err)
	return temporal.NewApplicationError("the database is unavailable", ErrTypeStoreUnavailable)
}

// AgentInput names one agent of one pass; the activity loads the input itself,
// so the incident's text never passes through workflow history.
type AgentInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	AgentRole       string
	// Facts are the keys of the data-source answers the pass gathered for
	// this agent; the activity loads them (GatheredFact).
	Facts []string
	// Changes are the recorded changes this agent weighs (ReadChanges).
	Changes []analyzer.Change
}

// AgentSummary is the short account of an agent's report kept in history.
type AgentSummary struct {
	AgentRole string
	Findings  int
	Model     string
	Summary   string
	// Budget is the agent's tool use, when it was offered tools.
	Budget *models.Budget `json:",omitempty"`
	// Facts are the keys of the answers its tool calls read, which its
	// findings may quote.
	Facts []string `json:",omitempty"`
}

// agentInput is what an agent reads in a pass: the incident, its context,
// the facts gathered for it and the recorded changes. The one-call path and
// the tool-use steps read it the same way.
func (a *Activities) agentInput(ctx context.Context, in AgentInput) (analyzer.Input, *models.Investigation, *models.Incident, error) {
	inv, err := a.Store.GetInvestigation(ctx, in.TenantID, in.InvestigationID)
	if err != nil {
		return analyzer.Input{}, nil, nil, storeUnavailable(ctx, in, err)
	}
	inc, err := a.Store.GetIncident(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return analyzer.Input{}, nil, nil, storeUnavailable(ctx, in, err)
	}
	input := incidentInput(inc, inv.Context)
	input.At = inv.StartedAt.UTC()
	if input.Gathered, err = a.gatheredExcerpts(ctx, in.TenantID, in.InvestigationID, in.Facts); err != nil {
		return analyzer.Input{}, nil, nil, err
	}
	return input.WithChanges(in.Changes), inv, inc, nil
}

// RunAgent runs one specialist agent: the configured LLM, or the offline analyzer
// when none is configured. The full report is stored as the pass's AgentRun; an
// agent that already completed is not run again. LLM failures are classified:
// rate limits, 5xx and network errors are retryable (honouring Retry-After);
// refusals, malformed output and bad requests are not.
func (a *Activities) RunAgent(ctx context.Context, in AgentInput) (AgentSummary, error) {
	runID := in.InvestigationID + "/" + in.AgentRole
	prev, err := a.agentRun(ctx, runID)
	if err != nil {
		return AgentSummary{}, storeUnavailable(ctx, in, err)
	}
	if prev != nil && prev.Status == models.CoverageCompleted {
		return summarize(prev)
	}
	input, _, _, err := a.agentInput(ctx, in)
	if err != nil {
		return AgentSummary{}, err
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go temporalx.Heartbeat(hctx)
	run := &models.AgentRun{ID: runID, TenantID: in.TenantID, InvestigationID: in.InvestigationID,
		AgentRole: in.AgentRole, Model: OfflineModel, UpdatedAt: time.Now().UTC()}
	if prev != nil {
		run.PromptTokens, run.CompletionTokens = prev.PromptTokens, prev.CompletionTokens
	}
	var rep analyzer.AgentReport
	if a.LLM == nil {
		if rep, err = analyzer.InvestigateContext(ctx, in.AgentRole, input); err != nil {
			return AgentSummary{}, err // cancelled: the pass no longer waits for this agent
		}
	} else {
		var usage llm.Usage
		run.Model = a.LLM.Model()
		rep, usage, err = a.LLM.Investigate(ctx, in.AgentRole, input)
		run.PromptTokens += usage.PromptTokens
		run.CompletionTokens += usage.CompletionTokens
		metrics.AddLLMTokens(usage.PromptTokens, usage.CompletionTokens)
		if err != nil {
			run.Status, run.Reason = models.CoverageFailed, shorten(err.Error())
			if serr := a.Passes.SaveAgentRun(ctx, run); serr != nil {
				return AgentSummary{}, storeUnavailable(ctx, in, serr)
			}
			return AgentSummary{}, classifyLLM(err)
		}
	}
	return a.saveReport(ctx, in, run, rep)
}

func (a *Activities) agentRun(ctx context.Context, runID string) (*models.AgentRun, error) {
	run, err := a.Store.AgentRun(ctx, runID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	return run, err
}

func summarize(run *models.AgentRun) (AgentSummary, error) {
	var rep analyzer.AgentReport
	if err := json.Unmarshal([]byte(run.Report), &rep); err != nil {
		return AgentSummary{}, temporal.NewNonRetryableApplicationError("stored agent report is unreadable", ErrTypeLLMMalformed, err)
	}
	s := AgentSummary{AgentRole: run.AgentRole, Findings: len(rep.Findings), Model: run.Model, Summary: "no findings"}
	if len(rep.Findings) > 0 {
		best := rep.Findings[0]
		for _, f := range rep.Findings[1:] {
			if f.Strength > best.Strength {
				best = f
			}
		}
		s.Summary = shorten(best.Summary)
	}
	return s, nil
}

// classifyLLM maps an LLM failure onto Temporal's retry decision: bad input,
// refusals and auth failures are non-retryable, rate limits, 5xx and network
// errors are retried by Temporal (the client's own retries are off).
func classifyLLM(err error) error {
	msg := shorten(err.Error())
	if llm.Retryable(err) {
		var delay time.Duration
		var ae *llm.APIError
		if errors.As(err, &ae) {
			delay = ae.RetryAfter
		}
		return temporal.NewApplicationErrorWithOptions(msg, ErrTypeLLMUnavailable, temporal.ApplicationErrorOptions{
			Cause: err, NextRetryDelay: delay,
		})
	}
	typ := ErrTypeLLMRejected
	switch {
	case errors.Is(err, llm.ErrRefused):
		typ = ErrTypeLLMRefused
	case errors.Is(err, llm.ErrMalformedOutput):
		typ = ErrTypeLLMMalformed
	case errors.Is(err, llm.ErrInvalidConfig):
		typ = ErrTypeLLMConfig
	}
	return temporal.NewNonRetryableApplicationError(msg, typ, err)
}

// shorten is temporalx.Reason: reasons kept readable wherever they are recorded.
func shorten(s string) string { return temporalx.Reason(s) }

// shortenTo cuts s to about limit bytes on a rune boundary, marking the cut.
func shortenTo(s string, limit int) string { return clip.To(s, limit) }

// saveReport stores an agent's final report as its completed run.
func (a *Activities) saveReport(ctx context.Context, in AgentInput, run *models.AgentRun, rep analyzer.AgentReport) (AgentSummary, error) {
	body, err := json.Marshal(rep)
	if err != nil {
		return AgentSummary{}, temporal.NewNonRetryableApplicationError("encode agent report", ErrTypeLLMMalformed, err)
	}
	run.Status, run.Report = models.CoverageCompleted, string(body)
	if err := a.Passes.SaveAgentRun(ctx, run); err != nil {
		return AgentSummary{}, storeUnavailable(ctx, in, err)
	}
	return summarize(run)
}
