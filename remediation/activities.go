package remediation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Activities are the remediation's side effects: proposals, decisions, the
// steps themselves and the outcome. Each is idempotent, keyed by the
// remediation and the step, so a retry after a crash changes nothing twice.
type Activities struct {
	// Kernel reads incidents and writes their timeline.
	Kernel *models.Store
	// Store holds runbooks, remediations and their steps.
	Store *Store
	// Egress is the SSRF-guarded client (package egress) every step request
	// to a tenant-supplied URL goes through.
	Egress *http.Client
	// SQLTargets are the databases sql_migration steps may change, by name,
	// and which tenants may use each, so runbooks never carry connection
	// strings and a tenant reaches only the databases named for it.
	SQLTargets SQLTargets
	// VerifyAfter is how long after its steps a completed remediation is
	// verified; zero means DefaultVerifyAfter.
	VerifyAfter time.Duration
	// Reach is how a verification step probes the tenant's system: under
	// the networks granted to the tenant's data sources, never at
	// Causeway's own services (datasources.Connector). Nil probes through
	// Egress.
	Reach TenantReach
	// Rechecker runs the queries that evidenced the cause again; nil
	// verifies on the alert's state alone.
	Rechecker Rechecker
	// Reinvestigate starts the next pass when the fix did not hold; nil
	// starts none.
	Reinvestigate Reinvestigator
}

// TenantReach builds the HTTP client one probe of a tenant's system goes
// through; the caller closes its idle connections when done.
type TenantReach interface {
	HTTPClient(ctx context.Context, tenantID string, timeout time.Duration) (*http.Client, error)
}

// Registered names of the remediation activities.
const (
	NameProposeRemediations = "ProposeRemediations"
	NameDecideRemediation   = "DecideRemediation"
	NameBeginRemediation    = "BeginRemediation"
	NameRunRemediationStep  = "RunRemediationStep"
	NameFinishRemediation   = "FinishRemediation"
)

// ErrTypeInvalidStatus marks a move refused because the remediation is in
// another state: an update's validator refusing a second decision (the service
// answers invalid_status), or a write the database refuses because the
// workflow and the database disagree, which no retry fixes.
const ErrTypeInvalidStatus = "RemediationInvalidStatus"

// StepRef is what a workflow needs to know of a step to schedule it: its place
// and its type (which picks the timeout and retry policy). Params stay in the
// database, out of history, because they may hold credentials.
type StepRef struct {
	Index int
	Type  string
}

// ProposedRemediation is one remediation the proposal recorded.
type ProposedRemediation struct {
	RemediationID string
	PlanHash      string
	Steps         []StepRef
}

// ProposeInput names a completed pass and the root-cause category it found.
type ProposeInput struct {
	TenantID        string
	IncidentID      string
	InvestigationID string
	Category        string
	At              time.Time
}

// ProposeOutput lists every remediation of the pass, in a stable order.
type ProposeOutput struct {
	Remediations []ProposedRemediation
}

// ProposeRemediations turns every runbook matching the pass's category (and the
// incident's service, when the runbook names services) into a remediation
// awaiting approval, its params rendered with the incident's fields. Rows are
// keyed by investigation + runbook, so a retry proposes nothing twice; the
// answer is read back from the database, so it lists what a crashed earlier
// attempt wrote too. A runbook whose templates do not render for this incident
// is skipped with a timeline entry saying why.
func (a *Activities) ProposeRemediations(ctx context.Context, in ProposeInput) (ProposeOutput, error) {
	inc, err := a.Kernel.GetIncident(ctx, in.TenantID, in.IncidentID)
	if err != nil {
		return ProposeOutput{}, temporalx.Classify(err)
	}
	books, err := a.Store.Runbooks(ctx, in.TenantID)
	if err != nil {
		return ProposeOutput{}, err
	}
	data := TemplateData{Service: inc.Service, Environment: inc.Environment, IncidentID: inc.ID, Tags: inc.Tags}
	at := in.At.UTC()
	var rems []Remediation
	var entries []models.TimelineEntry
	for i := range books {
		rb := &books[i]
		if !rb.Matches(in.Category, inc.Service) {
			continue
		}
		id := RemediationID(in.InvestigationID, rb.ID)
		steps, err := a.renderSteps(id, rb, data)
		entry := models.TimelineEntry{TenantID: inc.TenantID, IncidentID: inc.ID, At: at, Actor: "causeway",
			Kind: "remediation_proposed", DedupKey: "remediation/" + id + "/proposed",
			Message: fmt.Sprintf("Remediation %s proposed from runbook %q; awaiting approval", id, rb.Name)}
		if err != nil {
			entry.Kind, entry.DedupKey = "remediation_skipped", "remediation/"+id+"/skipped"
			entry.Message = fmt.Sprintf("Runbook %q matched but was not proposed: %s", rb.Name, models.RedactText(temporalx.Reason(err.Error())))
			if err := a.Kernel.AddTimeline(ctx, &entry); err != nil {
				return ProposeOutput{}, err
			}
			continue
		}
		desc := rb.Name
		if rb.Description != "" {
			desc += ": " + rb.Description
		}
		rems = append(rems, Remediation{ID: id, TenantID: inc.TenantID, IncidentID: inc.ID, InvestigationID: in.InvestigationID,
			RunbookID: rb.ID, Description: desc, Status: AwaitingApproval, PlanHash: PlanHash(steps),
			CreatedAt: at, Steps: steps})
		entries = append(entries, entry)
	}
	if err := a.Store.ProposeRemediations(ctx, rems, entries); err != nil {
		return ProposeOutput{}, err
	}
	mine, err := a.Store.PassRemediations(ctx, in.TenantID, in.IncidentID, in.InvestigationID)
	if err != nil {
		return ProposeOutput{}, err
	}
	var out ProposeOutput
	for _, r := range mine {
		p := ProposedRemediation{RemediationID: r.ID, PlanHash: r.PlanHash}
		for _, s := range r.Steps {
			p.Steps = append(p.Steps, StepRef{Index: s.Index, Type: s.Type})
		}
		out.Remediations = append(out.Remediations, p)
	}
	return out, nil
}

// renderSteps renders a runbook's steps for one incident and checks the result
// against the executors once more, now with every value known: the tenant may
// have lost a SQL target since, and an alert may carry values no step can use.
// The rendered plan must stay within MaxPlanBytes.
func (a *Activities) renderSteps(remID string, rb *Runbook, data TemplateData) ([]RemediationStep, error) {
	steps := make([]RemediationStep, len(rb.Steps))
	env := checkEnv{targets: a.SQLTargets, tenantID: rb.TenantID}
	size := 0
	for i, s := range rb.Steps {
		params, err := RenderParams(s.Params, data)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		ex, ok := executors[s.Type]
		if !ok {
			return nil, fmt.Errorf("step %d: unknown step type %q", i, s.Type)
		}
		if err := ex.check(params, true, env); err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		b, _ := json.Marshal(params)
		if size += len(b) + len(s.Description); size > MaxPlanBytes {
			return nil, fmt.Errorf("the rendered plan exceeds %d bytes", MaxPlanBytes)
		}
		steps[i] = RemediationStep{RemediationID: remID, Index: i, Type: s.Type, Description: s.Description,
			Params: params, Status: StepPending}
	}
	return steps, nil
}

// DecisionInput records an approval, a rejection or an expiry.
type DecisionInput struct {
	TenantID      string
	RemediationID string
	Status        string // Approved or Rejected
	From          string // see Decision
	Actor         string
	Reason        string
	At            time.Time
	Message       string
	DedupKey      string
}

// DecideRemediation writes a decision and its timeline entry in one transaction.
func (a *Activities) DecideRemediation(ctx context.Context, in DecisionInput) error {
	kind := "remediation_approved"
	if in.Status == Rejected {
		kind = "remediation_rejected"
	}
	err := a.Store.DecideRemediation(ctx, Decision{
		TenantID: in.TenantID, RemediationID: in.RemediationID, Status: in.Status, From: in.From, Actor: in.Actor, Reason: in.Reason, At: in.At,
		Entry: models.TimelineEntry{At: in.At.UTC(), Kind: kind, Message: in.Message, Actor: in.Actor, DedupKey: in.DedupKey},
	})
	return classifyRemediation(err)
}

// BeginRemediationInput records the start of an execution.
type BeginRemediationInput struct {
	TenantID      string
	RemediationID string
	Actor         string
	At            time.Time
	Message       string
	DedupKey      string
}

// BeginRemediation moves the remediation to executing and its incident to
// remediating, with who asked and when, in one transaction.
func (a *Activities) BeginRemediation(ctx context.Context, in BeginRemediationInput) error {
	err := a.Store.BeginRemediation(ctx, in.TenantID, in.RemediationID, in.Actor, in.At, models.TimelineEntry{
		At: in.At.UTC(), Kind: "remediation_executing", Message: in.Message, Actor: in.Actor, DedupKey: in.DedupKey,
	})
	return classifyRemediation(err)
}

// StepInput names one step to run; IdempotencyKey is the workflow ID plus the
// step index, sent to the target (Idempotency-Key header, SQL ledger row).
type StepInput struct {
	TenantID       string
	RemediationID  string
	Index          int
	Type           string
	IdempotencyKey string
}

// ErrTypeStepOutcomeUnknown fails a step whose request an earlier attempt sent
// without the answer being recorded: running it again could apply its change
// twice, so a person has to look at the target first.
const ErrTypeStepOutcomeUnknown = "StepOutcomeUnknown"

// outcomeUnknown is the reason such a step fails with.
const outcomeUnknown = "an earlier attempt sent this request and its outcome is unknown (the worker stopped or the answer was lost " +
	"before it was recorded); check the target, then run the change again if it is still needed. Steps whose target " +
	"honours Idempotency-Key can declare idempotent: true to be re-sent instead"

// RunRemediationStep runs one step with its stored, rendered params: it marks the
// step running (counting the attempt), runs the executor while heartbeating,
// then marks it completed. A step already completed is not run again; a failure
// is returned classified and recorded by the workflow when it gives up.
//
// Steps that call out with side effects (http, deployment_rollback) record
// that their request is leaving before it leaves. An attempt that finds that
// record from an earlier attempt does not know whether the target applied the
// change, so unless the step is declared idempotent (the target honours its
// Idempotency-Key) it fails for a person to check instead of sending again.
func (a *Activities) RunRemediationStep(ctx context.Context, in StepInput) error {
	now := time.Now()
	before, err := a.Store.StartStep(ctx, in.RemediationID, in.Index, now)
	if err != nil {
		return temporalx.Classify(err)
	}
	if before.Status == StepCompleted {
		return nil
	}
	started := now
	if before.StartedAt != nil {
		started = *before.StartedAt // an earlier attempt, perhaps on a lost worker
	}
	ctx = withStepStarted(ctx, started)
	ex, ok := executors[before.Type]
	if !ok {
		return temporal.NewNonRetryableApplicationError("unknown step type "+before.Type, ErrTypeStepBadParams, nil)
	}
	call := stepCall{Params: before.Params, Key: in.IdempotencyKey, TenantID: in.TenantID}
	if sendsChange(before.Type) {
		if idempotent, _ := before.Params["idempotent"].(bool); before.DispatchedAt != nil && !idempotent {
			metrics.ObserveRemediationStep(before.Type, metrics.OutcomeFailure)
			return temporal.NewNonRetryableApplicationError(outcomeUnknown, ErrTypeStepOutcomeUnknown, nil)
		}
		call.dispatch = func(ctx context.Context) error {
			return a.Store.MarkStepDispatched(ctx, in.RemediationID, in.Index, time.Now())
		}
		call.notSent = func(ctx context.Context) {
			if err := a.Store.ClearStepDispatched(ctx, in.RemediationID, in.Index); err != nil {
				activity.GetLogger(ctx).Warn("could not withdraw a step's dispatch record", "remediation_id", in.RemediationID, "step", in.Index, "error", err)
			}
		}
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go temporalx.Heartbeat(hctx)
	if err := ex.run(ctx, a, call); err != nil {
		activity.GetLogger(ctx).Warn("remediation step failed", "tenant_id", in.TenantID, "remediation_id", in.RemediationID, "step", in.Index, "error", err)
		metrics.ObserveRemediationStep(before.Type, stepOutcome(err))
		return err
	}
	metrics.ObserveRemediationStep(before.Type, metrics.OutcomeSuccess)
	return a.Store.CompleteStep(ctx, in.RemediationID, in.Index, time.Now())
}

// sendsChange reports whether a step type's request changes the target, so
// sending it twice could apply the change twice.
func sendsChange(stepType string) bool {
	return stepType == StepHTTP || stepType == StepDeploymentRollback
}

// stepOutcome tells a final failure from an attempt Temporal will retry, so the
// failure counter means "a remediation stopped here".
func stepOutcome(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return metrics.OutcomeFailure
	}
	return metrics.OutcomeRetry
}

// stepStartedKey carries when a step's first attempt started, so an executor
// resumed on another worker (a wait) can continue instead of starting over.
type stepStartedKey struct{}

func withStepStarted(ctx context.Context, at time.Time) context.Context {
	return context.WithValue(ctx, stepStartedKey{}, at)
}

// stepStarted is when the running step first started; now when unknown.
func stepStarted(ctx context.Context) time.Time {
	if at, ok := ctx.Value(stepStartedKey{}).(time.Time); ok {
		return at
	}
	return time.Now()
}

// FinishRemediationInput ends an execution; FailedStep is -1 on success.
type FinishRemediationInput struct {
	TenantID      string
	RemediationID string
	Status        string
	FailedStep    int
	Reason        string
	At            time.Time
	Message       string
	DedupKey      string
}

// FinishRemediation records the outcome, the failed step, the remediation.*
// outbox event and the timeline entry in one transaction.
func (a *Activities) FinishRemediation(ctx context.Context, in FinishRemediationInput) error {
	return temporalx.Classify(a.Store.FinishRemediation(ctx, RemediationOutcome{
		TenantID: in.TenantID, RemediationID: in.RemediationID, Status: in.Status, FailedStep: in.FailedStep,
		Reason: in.Reason, At: in.At,
		Entry: models.TimelineEntry{At: in.At.UTC(), Kind: "remediation_" + in.Status, Message: in.Message,
			Actor: "causeway", DedupKey: in.DedupKey},
	}))
}

func classifyRemediation(err error) error {
	if errors.Is(err, ErrInvalidStatus) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidStatus, err)
	}
	return temporalx.Classify(err)
}
