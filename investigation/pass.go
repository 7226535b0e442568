package investigation

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/temporalx"
)

// InvestigationWorkflow is one investigation pass: it dispatches one AgentWorkflow
// per selected agent in parallel, waits for all of them or the deadline,
// synthesizes an answer from whatever finished and records the result. Agents
// that failed or ran out of time are reported in coverage, not as a failure of
// the pass; only when no agent finished does the pass fail. The pass's start was
// recorded by the incident workflow (with the quota) before this one began.
// Synthesis, finish and proposals are short idempotent writes run as local
// activities (withLocalStoreOptions), so the answer follows the last agent
// within one workflow task.
func InvestigationWorkflow(ctx workflow.Context, in InvestigationInput) (InvestigationOutcome, error) {
	w := &investigation{in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID,
		log: log.With(workflow.GetLogger(ctx), "tenant_id", in.TenantID, "incident_id", in.IncidentID, "investigation_id", in.InvestigationID)}
	w.setup()
	return w.run(ctx)
}

type investigation struct {
	in       InvestigationInput
	id       string
	log      log.Logger // bound to the tenant, the incident and the pass
	roles    []string
	results  []agentResult
	gathered gathering
	// changes are the recorded changes the pass read (readChanges).
	changes []analyzer.Change
}

// agentResult is what became of one dispatched agent.
type agentResult struct {
	done    bool
	summary AgentSummary
	err     error
}

func (w *investigation) setup() {
	if w.in.AgentTimeout <= 0 {
		w.in.AgentTimeout = DefaultAgentTimeout
	}
	w.roles = slices.Clone(w.in.Agents)
	slices.Sort(w.roles)
	w.roles = slices.Compact(w.roles)
	w.results = make([]agentResult, len(w.roles))
}

func (w *investigation) run(ctx workflow.Context) (InvestigationOutcome, error) {
	// Query the tenant's data sources first, so the agents reason over the
	// same facts whichever path (offline or LLM) answers.
	w.gather(ctx)

	// Read the changes recorded before the onset, so the deployments agent can
	// weigh each as the trigger.
	w.readChanges(ctx)

	// Ask every agent at once and stop waiting at the deadline.
	w.fanOut(ctx)
	coverage, completed := w.coverage()

	// With no report at all there is nothing to synthesize: the pass fails, and
	// says why, so the incident returns to a state a person can act on.
	if len(completed) == 0 {
		reason := "no agent produced a report: " + describeFailures(coverage)
		if len(w.roles) == 0 {
			reason = "no agents were selected"
		}
		return w.finish(ctx, models.InvestigationFailed, coverage, reason,
			fmt.Sprintf("Investigation pass %d failed: %s", w.in.Pass, reason), SynthesisSummary{})
	}

	// Combine the finished reports under the shared evidence rules.
	var syn SynthesisSummary
	err := workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), NameSynthesizeInvestigation, SynthesisInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: w.in.InvestigationID, Completed: completed,
		Facts: w.factKeys(), Changes: w.changes,
	}).Get(ctx, &syn)
	if err != nil {
		return InvestigationOutcome{}, err
	}
	answer := syn.Category
	if syn.Culprit != "" {
		answer = syn.Culprit + " — " + syn.Category
	}
	msg := fmt.Sprintf("Investigation pass %d completed: %s (confidence %.2f), %d of %d agents reported",
		w.in.Pass, answer, syn.Confidence, len(completed), len(w.roles))
	out, err := w.finish(ctx, models.InvestigationCompleted, coverage, "", msg, syn)
	if err != nil {
		return out, err
	}

	// Offer the tenant's matching runbooks as remediations awaiting approval.
	w.propose(ctx, syn.Category)
	return out, nil
}

// propose records one remediation per matching runbook and starts each one's
// RemediationWorkflow as an abandoned child (it outlives the pass), waiting
// until every start is durable so none is lost when this workflow ends. A
// failure here is logged, not fatal: the pass's answer stands either way.
func (w *investigation) propose(ctx workflow.Context, category string) {
	var out remediation.ProposeOutput
	err := workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), remediation.NameProposeRemediations, remediation.ProposeInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: w.in.InvestigationID,
		Category: category, At: workflow.Now(ctx),
	}).Get(ctx, &out)
	if err != nil {
		w.log.Error("could not propose remediations", "error", err)
		return
	}
	starts := make([]workflow.ChildWorkflowFuture, len(out.Remediations))
	for i, r := range out.Remediations {
		starts[i] = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            remediation.WorkflowID(r.RemediationID),
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			StaticSummary:         fmt.Sprintf("remediation of %s · %d steps", w.in.IncidentID, len(r.Steps)),
		}), remediation.WorkflowName, remediation.Input{
			TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, RemediationID: r.RemediationID, PlanHash: r.PlanHash, Steps: r.Steps,
		})
	}
	for i, f := range starts {
		var started *temporal.ChildWorkflowExecutionAlreadyStartedError
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil && !errors.As(err, &started) {
			w.log.Error("could not start remediation workflow", "remediation_id", out.Remediations[i].RemediationID, "error", err)
		}
	}
}

// fanOut starts one child per agent, ranging the sorted roles and keeping the
// futures in a slice, then collects results until all are in or the deadline
// fires. Agents still running at the deadline are cancelled.
func (w *investigation) fanOut(ctx workflow.Context) {
	agentsCtx, cancelAgents := workflow.WithCancel(ctx)
	futures := make([]workflow.ChildWorkflowFuture, len(w.roles))
	for i, role := range w.roles {
		opts := workflow.ChildWorkflowOptions{
			WorkflowID:            AgentWorkflowID(w.in.IncidentID, w.in.Pass, role),
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			// The agent's own deadline, a backstop should the cancellation below
			// never reach it.
			WorkflowExecutionTimeout: w.in.AgentTimeout + time.Minute,
			WorkflowTaskTimeout:      workflowTaskTimeout,
			StaticSummary:            "agent " + role,
		}
		futures[i] = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(agentsCtx, opts), AgentWorkflowName, AgentInput{
			TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: w.in.InvestigationID, AgentRole: role,
			Facts: w.gathered.facts[i], Changes: w.changesFor(role),
		})
	}

	pending, expired := len(futures), false
	sel := workflow.NewSelector(ctx)
	for i := range futures {
		sel.AddFuture(futures[i], func(f workflow.Future) {
			w.results[i].err = f.Get(ctx, &w.results[i].summary)
			w.results[i].done = true
			pending--
		})
	}
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	sel.AddFuture(workflow.NewTimer(timerCtx, w.in.AgentTimeout), func(workflow.Future) { expired = true })
	for pending > 0 && !expired {
		sel.Select(ctx)
	}
	cancelTimer()
	if pending > 0 {
		cancelAgents()
	}
}

// coverage reports every dispatched agent in role order, and the roles whose
// reports count.
func (w *investigation) coverage() ([]models.Coverage, []string) {
	cov := make([]models.Coverage, len(w.roles))
	var completed []string
	for i, role := range w.roles {
		r := w.results[i]
		switch {
		case !r.done:
			cov[i] = models.Coverage{AgentRole: role, Status: models.CoverageTimedOut,
				Reason: fmt.Sprintf("no report within %s", w.in.AgentTimeout)}
		case r.err != nil && temporalx.IsTimeout(r.err):
			cov[i] = models.Coverage{AgentRole: role, Status: models.CoverageTimedOut, Reason: failureReason(r.err)}
		case r.err != nil:
			cov[i] = models.Coverage{AgentRole: role, Status: models.CoverageFailed, Reason: failureReason(r.err)}
		default:
			cov[i] = models.Coverage{AgentRole: role, Status: models.CoverageCompleted,
				Reason: fmt.Sprintf("%d findings; %s", r.summary.Findings, r.summary.Summary) + budgetCoverage(r.summary.Budget),
				Budget: r.summary.Budget}
			completed = append(completed, role)
		}
		// The reason is stored, shown and kept in history: bounded.
		cov[i].Reason = clip.To(cov[i].Reason+w.gatherCoverage(i), 1000)
	}
	return cov, completed
}

// finish records the end of the pass, its event and the incident's new status in
// one local activity, and reports the outcome to the incident workflow.
func (w *investigation) finish(ctx workflow.Context, status string, cov []models.Coverage, reason, msg string, syn SynthesisSummary) (InvestigationOutcome, error) {
	var out FinishOutput
	err := workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), NameFinishInvestigation, FinishInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: w.in.InvestigationID,
		Status: status, Coverage: cov, Reason: reason, Message: msg,
		At: workflow.Now(ctx), DedupKey: temporalx.TimelineKey(w.id, "finished"),
	}).Get(ctx, &out)
	if err != nil {
		return InvestigationOutcome{}, err
	}
	// Label the pass for the Temporal UI with its answer.
	if searchAttributesOn(ctx, w.in.SearchAttributes) {
		category := syn.Category
		if status == models.InvestigationFailed {
			category = "unknown"
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, keyword(SearchAttrTenant, w.in.TenantID),
			keyword(SearchAttrService, w.in.Service), keyword(SearchAttrCategory, category)); err != nil {
			w.log.Error("could not upsert search attributes", "error", err)
		}
	}
	return InvestigationOutcome{
		InvestigationID: w.in.InvestigationID, Status: status, IncidentStatus: out.IncidentStatus,
		Category: syn.Category, Confidence: syn.Confidence, Coverage: cov, Reason: reason,
	}, nil
}

// failureReason is the first application error's message and type: the
// activity's own words, without the wrapping of child and activity errors.
func failureReason(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.Type() != "" {
			return fmt.Sprintf("%s (%s)", app.Message(), app.Type())
		}
		return app.Message()
	}
	if temporalx.IsTimeout(err) {
		return "agent timed out"
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return "agent cancelled"
	}
	return "agent failed"
}

func describeFailures(cov []models.Coverage) string {
	parts := make([]string, len(cov))
	for i, c := range cov {
		parts[i] = c.AgentRole + " " + c.Status + ": " + c.Reason
	}
	return strings.Join(parts, "; ")
}

// factKeys are the answers the pass read: gathered ones, then those the
// agents' tool calls read, so findings quoting either are cited.
func (w *investigation) factKeys() []string {
	keys := slices.Clone(w.gathered.keys)
	for _, r := range w.results {
		keys = append(keys, r.summary.Facts...)
	}
	return keys
}
