package investigation

import (
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// ErrAlreadyResolved is the validator's refusal of a second resolution.
var ErrAlreadyResolved = errors.New("incident is already resolved")

// IncidentWorkflow owns one incident's lifecycle, from creation until it is
// resolved: triage of webhook incidents, investigation passes (one at a time,
// each a child InvestigationWorkflow) and resolution. Its ID is
// IncidentWorkflowID(incident id).
//
// Resolving while a pass runs lets the pass finish: its answer is still worth
// having for the postmortem, and the pass never moves a resolved incident's
// status. The workflow ends once both the resolution and the pass are done.
func IncidentWorkflow(ctx workflow.Context, in IncidentInput) (IncidentState, error) {
	w := &incident{
		in:     in,
		id:     workflow.GetInfo(ctx).WorkflowExecution.ID,
		log:    log.With(workflow.GetLogger(ctx), "tenant_id", in.TenantID, "incident_id", in.IncidentID),
		pass:   in.Pass,
		agents: in.Agents,
		state: IncidentState{
			IncidentID: in.IncidentID, Status: in.initialStatus(), Severity: in.Severity,
			Pass: in.Pass, InvestigationID: in.InvestigationID,
		},
	}
	if err := w.setup(ctx); err != nil {
		return w.state, err
	}
	return w.run(ctx)
}

func (in IncidentInput) initialStatus() string {
	if in.Status != "" {
		return in.Status
	}
	return models.StatusOpen
}

type incident struct {
	in        IncidentInput
	id        string
	log       log.Logger // bound to the tenant and the incident
	state     IncidentState
	resolving bool
	running   bool     // a pass (or triage deciding on one) is in progress
	pass      int      // number of the latest pass started
	agents    []string // triage's choice, carried over continue-as-new

	searchAttrs bool           // this run upserts search attributes
	published   publishedAttrs // what it last upserted
	localSteps  bool           // the first timeline entry and triage run as local activities
}

// versionLocalTriage marks the change that runs the first timeline entry and
// triage as local activities: two short database steps on every alert's way
// to its first pass, each of which cost a round trip through the server (and,
// after a worker was killed, up to a whole activity timeout before the
// server gave it to another worker).
const versionLocalTriage = "local-triage"

// storeStep runs one of the incident's short database steps: as a local
// activity (inside the workflow task) where versionLocalTriage says so.
func (w *incident) storeStep(ctx workflow.Context, name string, in, out any) error {
	if w.localSteps {
		return workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), name, in).Get(ctx, out)
	}
	return workflow.ExecuteActivity(temporalx.StoreOptions(ctx), name, in).Get(ctx, out)
}

// publishedAttrs is what an incident workflow last wrote to its search
// attributes, so it upserts only what changed.
type publishedAttrs struct {
	done             bool
	status, severity string
}

func (w *incident) setup(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (IncidentState, error) {
		st := w.state
		st.Investigating = w.running
		return st, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateStartInvestigation, w.startInvestigation, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req StartInvestigationRequest) error { return w.canStart(req) },
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateResolve, w.resolve, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, req ResolveRequest) error {
			if w.resolving || w.state.Status == models.StatusResolved {
				return ErrAlreadyResolved
			}
			return nil
		},
	})
}

func (w *incident) run(ctx workflow.Context) (IncidentState, error) {
	// Label the workflow for the Temporal UI: tenant, service, severity, status.
	w.searchAttrs = searchAttributesOn(ctx, w.in.SearchAttributes)
	w.publish(ctx)
	if !w.in.Continued {
		w.localSteps = workflow.GetVersion(ctx, versionLocalTriage, workflow.DefaultVersion, 1) == 1
		// Say in the incident's own timeline that orchestration has taken over, so
		// the dashboard shows the workflow exists.
		if err := w.timeline(ctx, "workflow_started", fmt.Sprintf("Incident workflow %s started", w.id), "causeway"); err != nil {
			return w.state, err
		}
		// Alerts from monitoring tools are triaged and investigated without
		// waiting for a person; manual incidents wait for startInvestigation.
		if w.state.Status == models.StatusTriaging {
			if err := w.triage(ctx); err != nil {
				return w.state, err
			}
		}
	}

	// Serve updates until the incident is resolved and nothing is in flight. When
	// history grows long, hand over to a fresh run between passes.
	err := workflow.Await(ctx, func() bool {
		idle := !w.running && !w.resolving && workflow.AllHandlersFinished(ctx)
		return idle && (w.state.Status == models.StatusResolved || workflow.GetInfo(ctx).GetContinueAsNewSuggested())
	})
	if err != nil {
		return w.state, err
	}
	if w.state.Status == models.StatusResolved {
		return w.state, nil
	}
	return w.state, workflow.NewContinueAsNewError(ctx, IncidentWorkflowName, w.carryOver())
}

// carryOver is the input of the next run after continue-as-new.
func (w *incident) carryOver() IncidentInput {
	next := w.in
	next.Status, next.Severity = w.state.Status, w.state.Severity
	next.Continued, next.Pass, next.InvestigationID, next.Agents = true, w.pass, w.state.InvestigationID, w.agents
	return next
}

// triage normalizes severity, picks the agents and starts the first pass. When the
// investigation quota is spent the incident waits, open, for a person.
func (w *incident) triage(ctx workflow.Context) error {
	w.running = true // a manual start waits until triage has decided
	var t TriageOutput
	err := w.storeStep(ctx, NameTriageIncident, TriageInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, At: workflow.Now(ctx), DedupKey: temporalx.TimelineKey(w.id, "triaged"),
	}, &t)
	if err != nil {
		w.running = false
		return err
	}
	w.agents, w.state.Severity = t.Agents, t.Severity

	_, err = w.startPass(ctx, StartInvestigationRequest{Agents: t.Agents, Actor: "causeway"})
	if temporalx.HasErrorType(err, ErrTypeQuotaExceeded) {
		return w.setStatus(ctx, models.StatusOpen, "investigation_skipped",
			"Not investigated automatically: the tenant's monthly investigation quota is used up. "+
				"Start an investigation manually once quota is available.")
	}
	return err
}

// canStart refuses a pass while one runs or once the incident is resolved. A
// request that saw the running pass recorded as finished is let through: its
// handler waits for the pass to report back.
func (w *incident) canStart(req StartInvestigationRequest) error {
	switch {
	case w.resolving || w.state.Status == models.StatusResolved:
		return temporal.NewApplicationError("the incident is resolved", ErrTypeIncidentResolved)
	case w.running && !w.finishing(req):
		return temporal.NewApplicationError(fmt.Sprintf("investigation pass %d is still running", w.pass), ErrTypeInvestigationInProgress)
	}
	return nil
}

// finishing reports whether req saw the pass this workflow still follows
// recorded as finished in the database.
func (w *incident) finishing(req StartInvestigationRequest) bool {
	return w.running && req.FinishedPass > 0 && req.FinishedPass == w.pass
}

// finishingPassWait bounds how long a start waits for a pass recorded as
// finished to report back; past it the start is refused as in progress.
const finishingPassWait = 5 * time.Second

// versionAwaitFinishingPass marks the change that made a start wait for a
// finished pass to report back instead of the API retrying the update.
const versionAwaitFinishingPass = "await-finishing-pass"

// startInvestigation is the startInvestigation update: one manual (or
// context-triggered) pass.
func (w *incident) startInvestigation(ctx workflow.Context, req StartInvestigationRequest) (StartInvestigationResult, error) {
	// The pass is recorded finished; its workflow reports back in moments.
	if w.finishing(req) && workflow.GetVersion(ctx, versionAwaitFinishingPass, workflow.DefaultVersion, 1) == 1 {
		if _, err := workflow.AwaitWithTimeout(ctx, finishingPassWait, func() bool { return !w.running }); err != nil {
			return StartInvestigationResult{}, err
		}
	}
	// Validators of updates delivered together all run before any handler, and
	// another start may have won the wait, so the handler checks again, strictly.
	if err := w.canStart(StartInvestigationRequest{}); err != nil {
		return StartInvestigationResult{}, err
	}
	w.running = true
	return w.startPass(ctx, req)
}

// startPass spends quota and records the pass (one local activity, so the
// update's answer does not wait for a round trip through the server), then
// starts its InvestigationWorkflow and follows it in the background. w.running
// is already set; it is cleared when the pass cannot start or has ended.
func (w *incident) startPass(ctx workflow.Context, req StartInvestigationRequest) (StartInvestigationResult, error) {
	pass := w.pass + 1
	invID := InvestigationID(w.in.IncidentID, pass)
	var begun BeginOutput
	err := workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), NameBeginInvestigation, BeginInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: invID, Pass: pass,
		Agents: req.Agents, Context: req.Context, Actor: req.Actor, At: workflow.Now(ctx),
		DedupKey: temporalx.TimelineKey(w.id, fmt.Sprintf("investigation/%d/started", pass)),
	}).Get(ctx, &begun)
	if err != nil {
		w.running = false
		if temporalx.HasErrorType(err, ErrTypeQuotaExceeded) {
			return StartInvestigationResult{}, temporal.NewApplicationError(
				"the monthly investigation quota of this tenant is used up; it resets on the 1st (UTC)", ErrTypeQuotaExceeded)
		}
		return StartInvestigationResult{}, err
	}
	w.pass = pass
	w.state.Pass, w.state.InvestigationID = pass, invID
	if w.state.Status != models.StatusResolved {
		w.state.Status = models.StatusInvestigating
	}
	w.publish(ctx)

	child := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            InvestigationWorkflowID(w.in.IncidentID, pass),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowTaskTimeout:   workflowTaskTimeout,
		StaticSummary:         fmt.Sprintf("pass %d · %s", pass, strings.Join(begun.Agents, ", ")),
	}), InvestigationWorkflowName, InvestigationInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: invID, Pass: pass, Agents: begun.Agents,
		Service: w.in.Service, SearchAttributes: w.in.SearchAttributes,
	})
	workflow.Go(ctx, func(ctx workflow.Context) { w.awaitPass(ctx, child, invID, pass) })
	return StartInvestigationResult{InvestigationID: invID, Pass: pass}, nil
}

// awaitPass follows a pass to its end and takes over the incident status it
// left. If the pass itself broke (not its agents), it is recorded as failed here
// so the incident is never left investigating.
func (w *incident) awaitPass(ctx workflow.Context, child workflow.ChildWorkflowFuture, invID string, pass int) {
	defer func() { w.running = false }()
	var out InvestigationOutcome
	if err := child.Get(ctx, &out); err != nil {
		reason := "the investigation workflow failed: " + failureReason(err)
		var fin FinishOutput
		ferr := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameFinishInvestigation, FinishInput{
			TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: invID,
			Status: models.InvestigationFailed, Reason: reason,
			Message: fmt.Sprintf("Investigation pass %d failed: %s", pass, reason),
			At:      workflow.Now(ctx), DedupKey: temporalx.TimelineKey(w.id, fmt.Sprintf("investigation/%d/failed", pass)),
		}).Get(ctx, &fin)
		if ferr != nil {
			w.log.Error("could not record the failed pass", "investigation_id", invID, "error", ferr)
			return
		}
		out.IncidentStatus = fin.IncidentStatus
	}
	if w.state.Status != models.StatusResolved && out.IncidentStatus != "" {
		w.state.Status = out.IncidentStatus
	}
	w.publish(ctx)
}

// setStatus moves the incident and records why, in one activity.
func (w *incident) setStatus(ctx workflow.Context, status, kind, msg string) error {
	err := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameSetIncidentStatus, StatusInput{
		Status: status, Timeline: w.entry(workflow.Now(ctx), kind, msg, "causeway"),
	}).Get(ctx, nil)
	if err == nil {
		w.state.Status = status
		w.publish(ctx)
	}
	return err
}

// resolve records the resolution in the database, then in the workflow state.
func (w *incident) resolve(ctx workflow.Context, req ResolveRequest) (IncidentState, error) {
	w.resolving = true
	defer func() { w.resolving = false }()
	msg := "Resolved by " + req.Actor
	if req.Note != "" {
		msg += ": " + req.Note
	}
	now := workflow.Now(ctx)
	err := workflow.ExecuteActivity(temporalx.StoreOptions(ctx), NameSetIncidentStatus, StatusInput{
		Status:   models.StatusResolved,
		Timeline: w.entry(now, "resolved", msg, req.Actor),
	}).Get(ctx, nil)
	if err != nil {
		return w.state, err
	}
	w.state.Status = models.StatusResolved
	w.state.ResolvedAt = now
	w.state.ResolvedBy = req.Actor
	w.publish(ctx)
	return w.state, nil
}

// publish brings the workflow's search attributes in line with the incident:
// tenant and service once per run, status and severity whenever they changed.
// Runs that do not use search attributes (see searchAttributesOn) do nothing.
func (w *incident) publish(ctx workflow.Context) {
	if !w.searchAttrs {
		return
	}
	var updates []temporal.SearchAttributeUpdate
	if !w.published.done {
		updates = append(updates, keyword(SearchAttrTenant, w.in.TenantID), keyword(SearchAttrService, w.in.Service))
	}
	if !w.published.done || w.state.Status != w.published.status {
		updates = append(updates, keyword(SearchAttrIncidentStatus, w.state.Status))
	}
	if !w.published.done || w.state.Severity != w.published.severity {
		updates = append(updates, keyword(SearchAttrSeverity, w.state.Severity))
	}
	if len(updates) == 0 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		w.log.Error("could not upsert search attributes", "error", err)
		return
	}
	w.published = publishedAttrs{done: true, status: w.state.Status, severity: w.state.Severity}
}

// timeline records one entry; kind doubles as the step name of its DedupKey, so
// each kind is written at most once per workflow.
func (w *incident) timeline(ctx workflow.Context, kind, msg, actor string) error {
	return w.storeStep(ctx, NameAddTimeline, w.entry(workflow.Now(ctx), kind, msg, actor), nil)
}

func (w *incident) entry(at time.Time, kind, msg, actor string) TimelineInput {
	return TimelineInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, At: at,
		Kind: kind, Message: msg, Actor: actor, DedupKey: temporalx.TimelineKey(w.id, kind),
	}
}
