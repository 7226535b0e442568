package app

import (
	"context"
	"errors"
	"sync"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/remediation"
	"github.com/causeway/causeway/slack"
	"github.com/causeway/causeway/ui"
)

// slackRemediations adapts the remediation service to the Slack integration:
// a click calls the same Approve, Reject and Execute as the API, so the plan
// hash binding and the exactly-once Update are the API's own.
type slackRemediations struct{ svc *remediation.Service }

// Proposal implements slack.Remediations.
func (r slackRemediations) Proposal(ctx context.Context, tenantID, id string) (slack.ProposalView, error) {
	rem, err := r.svc.Get(ctx, auth.Principal{TenantID: tenantID}, id)
	if e, ok := errcode.As(err); ok && e.Code == errcode.RemediationNotFound {
		return slack.ProposalView{}, slack.ErrNotFound
	}
	if err != nil {
		return slack.ProposalView{}, err
	}
	return proposalView(rem), nil
}

// Proposals implements slack.Remediations.
func (r slackRemediations) Proposals(ctx context.Context, tenantID, incidentID string) ([]slack.ProposalView, error) {
	rems, err := r.svc.List(ctx, auth.Principal{TenantID: tenantID}, incidentID)
	if e, ok := errcode.As(err); ok && e.Code == errcode.IncidentNotFound {
		return nil, nil
	}
	out := make([]slack.ProposalView, len(rems))
	for i := range rems {
		out[i] = proposalView(&rems[i])
	}
	return out, err
}

// Approve implements slack.Remediations.
func (r slackRemediations) Approve(ctx context.Context, p auth.Principal, id, planHash string) error {
	if planHash == "" {
		return errors.New("an approval from Slack must name the plan hash")
	}
	return r.svc.Approve(ctx, p, id, remediation.ApproveInput{PlanHash: planHash})
}

// Reject implements slack.Remediations.
func (r slackRemediations) Reject(ctx context.Context, p auth.Principal, id, reason string) error {
	return r.svc.Reject(ctx, p, id, remediation.RejectInput{Reason: reason})
}

// Execute implements slack.Remediations.
func (r slackRemediations) Execute(ctx context.Context, p auth.Principal, id string) error {
	return r.svc.Execute(ctx, p, id)
}

func proposalView(rem *remediation.Remediation) slack.ProposalView {
	v := rem.View()
	out := slack.ProposalView{ID: v.RemediationID, IncidentID: v.IncidentID, Description: v.Description, Status: v.Status,
		PlanHash: v.PlanHash, ApprovedBy: v.ApprovedBy, RejectedBy: v.RejectedBy, RejectReason: v.RejectReason,
		ExecutedBy: v.ExecutedBy, FailureReason: v.FailureReason}
	for _, s := range v.Steps {
		out.Steps = append(out.Steps, slack.StepView{Type: s.Type, Description: s.Description, Status: s.Status})
	}
	return out
}

// slackInvestigations starts passes for /causeway investigate.
type slackInvestigations struct{ svc *investigation.Investigations }

// Start implements slack.Investigations.
func (s slackInvestigations) Start(ctx context.Context, p auth.Principal, incidentID string) error {
	_, err := s.svc.Start(ctx, p, incidentID, investigation.StartInvestigationInput{})
	return err
}

// slackParts are the integration's shared pieces, built once per process.
type slackParts struct {
	once     sync.Once
	store    *slack.Store
	rems     slack.Remediations
	notifier *slack.Notifier
}

func (a *App) slack() *slackParts {
	a.slackParts.once.Do(func() {
		c := a.Config
		a.slackParts.store = slack.NewStore(a.Store.DB())
		a.slackParts.rems = slackRemediations{remediation.NewService(a.Store, a.Temporal, c.TemporalTaskQueue, a.sqlTargets(), c.EgressAllowPrivate)}
		a.slackParts.notifier = slack.NewNotifier(a.slackParts.store, a.Store, a.Temporal, c.TemporalTaskQueue, a.slackParts.rems, a.Log)
	})
	return &a.slackParts
}

// SlackNotifier follows connected tenants' incidents into Slack; the worker
// processes run it next to the relay.
func (a *App) SlackNotifier() *slack.Notifier { return a.slack().notifier }

// slackService serves the integration's settings and Slack's signed requests.
func (a *App) slackService(invs *investigation.Investigations) *slack.Service {
	p := a.slack()
	return slack.NewService(slack.Options{Store: p.store, Models: a.Store, Sealer: a.sealer,
		HTTP: egress.NewClient(egress.Options{AllowPrivate: a.Config.EgressAllowPrivate}), APIURL: a.Config.SlackAPIURL,
		PublicURL: a.PublicURL(), Remediations: p.rems, Investigations: slackInvestigations{invs},
		Notifier: p.notifier, Marks: a.Marks, Log: a.Log})
}

// slackActivities sends the messages; registered on the worker.
func (a *App) slackActivities() *slack.Activities {
	p := a.slack()
	return &slack.Activities{Store: p.store, Models: a.Store, Sealer: a.sealer,
		HTTP: egress.NewClient(egress.Options{AllowPrivate: a.Config.EgressAllowPrivate}), APIURL: a.Config.SlackAPIURL,
		IncidentURL: func(id string) string { return a.PublicURL() + ui.Prefix + "/incidents/" + id }, Remediations: p.rems}
}
