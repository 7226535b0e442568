package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Signed is a request from Slack as received: the signature headers and the
// raw body they sign.
type Signed struct {
	Timestamp string
	Signature string
	Body      []byte
}

// Reply is the ephemeral answer to a click or a command.
type Reply struct {
	ResponseType    string `json:"response_type"`
	Text            string `json:"text"`
	ReplaceOriginal bool   `json:"replace_original"`
}

func ephemeral(format string, a ...any) *Reply {
	return &Reply{ResponseType: "ephemeral", Text: fmt.Sprintf(format, a...)}
}

// errUnsigned is the one answer to every request that fails verification.
var errUnsigned = errcode.New(errcode.Unauthorized, "the request is not signed by this tenant's Slack app")

// verify checks a request against the signing secret of the tenant named in
// the path. The tenant only selects the secret: a request signed by another
// tenant's app fails here like a forged one.
func (s *Service) verify(ctx context.Context, tenantID string, req Signed) (*Integration, url.Values, error) {
	integ, err := s.store.Integration(ctx, tenantID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, errUnsigned
	}
	if err != nil {
		return nil, nil, unavailable(err)
	}
	secret, err := s.sealer.Decrypt(integ.SigningSecretEnc, []byte(aadSigningSecret+integ.TenantID))
	if err != nil {
		return nil, nil, unavailable(err)
	}
	if err := Verify(string(secret), req.Timestamp, req.Signature, req.Body, s.now()); err != nil {
		return nil, nil, errUnsigned
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return nil, nil, errcode.New(errcode.Validation, "the body is not a form")
	}
	if team := form.Get("team_id"); team != "" && integ.TeamID != "" && team != integ.TeamID {
		return nil, nil, errUnsigned
	}
	return integ, form, nil
}

// interaction is the part of a block_actions payload the service reads.
type interaction struct {
	Type string `json:"type"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
	Team struct {
		ID string `json:"id"`
	} `json:"team"`
	ResponseURL string `json:"response_url"`
	Actions     []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
}

// Interaction handles a button click (block_actions). The reply goes to the
// click's response_url as an ephemeral message and is also returned.
func (s *Service) Interaction(ctx context.Context, tenantID string, req Signed) (*Reply, error) {
	integ, form, err := s.verify(ctx, tenantID, req)
	if err != nil {
		return nil, err
	}
	var in interaction
	if err := json.Unmarshal([]byte(form.Get("payload")), &in); err != nil || in.Type != "block_actions" || len(in.Actions) == 0 {
		return ephemeral("Causeway only handles its Approve and Reject buttons."), nil
	}
	if in.Team.ID != "" && integ.TeamID != "" && in.Team.ID != integ.TeamID {
		return nil, errUnsigned
	}
	reply := s.decide(ctx, integ, in.User.ID, in.Actions[0].ActionID, in.Actions[0].Value)
	s.respond(ctx, in.ResponseURL, reply)
	return reply, nil
}

// decide applies one click through the remediation service, as the person
// the Slack user maps to; every refusal is an explanation, never a change.
func (s *Service) decide(ctx context.Context, integ *Integration, slackUser, action, value string) *Reply {
	remID, hash, ok := parseButtonValue(value)
	if !ok || (action != ActionApprove && action != ActionReject) {
		return ephemeral("This button is not one Causeway understands; nothing changed.")
	}
	p, refusal := s.principal(ctx, integ, slackUser)
	if refusal != nil {
		return refusal
	}
	if !p.HasAnyRole(models.Managers...) {
		return ephemeral("Your Causeway role (%s) may not approve or reject remediations; an owner or admin must. Nothing changed.", strings.Join(p.Roles, ", "))
	}
	var err error
	if action == ActionApprove {
		if err = s.remediations.Approve(ctx, p, remID, hash); err == nil {
			err = s.remediations.Execute(ctx, p, remID)
			if err != nil {
				s.refresh(ctx, integ.TenantID, remID)
				return ephemeral("Approved remediation %s, but it could not be started (%s); execute it from the dashboard.", remID, describe(err))
			}
		}
	} else {
		err = s.remediations.Reject(ctx, p, remID, "rejected in Slack by "+p.Email)
	}
	if err != nil {
		return s.refusal(ctx, integ, remID, err)
	}
	s.refresh(ctx, integ.TenantID, remID)
	if action == ActionApprove {
		return ephemeral("Approved remediation %s as %s; its steps are running.", remID, p.Email)
	}
	return ephemeral("Rejected remediation %s as %s.", remID, p.Email)
}

// refusal explains why a decision changed nothing.
func (s *Service) refusal(ctx context.Context, integ *Integration, remID string, err error) *Reply {
	e, ok := errcode.As(err)
	switch {
	case ok && e.Code == errcode.PlanChanged:
		return ephemeral("The plan of remediation %s is no longer the one this message showed; nothing was approved. Review the current plan first.", remID)
	case ok && e.Code == errcode.InvalidStatus:
		if pv, perr := s.remediations.Proposal(ctx, integ.TenantID, remID); perr == nil {
			return ephemeral("Remediation %s is already decided: %s. Nothing changed.", remID, decisionLine(pv))
		}
		return ephemeral("Remediation %s is already decided. Nothing changed.", remID)
	case ok && (e.Code == errcode.RemediationNotFound || e.Code == errcode.NotFound):
		return ephemeral("Remediation %s does not exist in this workspace's Causeway tenant. Nothing changed.", remID)
	}
	s.log.WarnContext(ctx, "slack decision failed", slog.String("tenant_id", integ.TenantID), slog.String("remediation_id", remID), slog.Any("error", err))
	return ephemeral("Causeway could not record the decision on %s right now; nothing changed. Try again.", remID)
}

func describe(err error) string {
	if e, ok := errcode.As(err); ok {
		return e.Code
	}
	return "internal error"
}

// refresh updates a proposal's message at once rather than at the next sweep.
func (s *Service) refresh(ctx context.Context, tenantID, remID string) {
	if s.notifier == nil {
		return
	}
	pv, err := s.remediations.Proposal(ctx, tenantID, remID)
	if err == nil {
		err = s.notifier.Refresh(ctx, tenantID, pv.IncidentID, RemediationKey(remID))
	}
	if err != nil {
		s.log.WarnContext(ctx, "slack refresh after a decision failed; the next sweep will do it", slog.String("tenant_id", tenantID), slog.Any("error", err))
	}
}

// principal maps a Slack user to the Causeway user of the integration's tenant
// with the same verified e-mail address.
func (s *Service) principal(ctx context.Context, integ *Integration, slackUser string) (auth.Principal, *Reply) {
	c, err := openClient(s.sealer, s.apiURL, s.http, integ)
	if err != nil {
		return auth.Principal{}, ephemeral("Causeway cannot use its Slack token right now; nothing changed.")
	}
	u, err := c.UserInfo(ctx, slackUser)
	if err != nil {
		return auth.Principal{}, ephemeral("Causeway could not look up your Slack profile (%s); nothing changed.", errCode(err))
	}
	if u.Deleted || u.IsBot || !u.IsEmailConfirmed || u.Profile.Email == "" {
		return auth.Principal{}, ephemeral("Your Slack account has no confirmed e-mail address Causeway can match; nothing changed.")
	}
	email := strings.ToLower(strings.TrimSpace(u.Profile.Email))
	user, err := s.models.UserByEmail(ctx, email)
	if err != nil || user.TenantID != integ.TenantID {
		return auth.Principal{}, ephemeral("No Causeway user of this workspace's tenant has the e-mail %s; ask an admin to add you. Nothing changed.", email)
	}
	return auth.Principal{UserID: user.ID, Email: user.Email, TenantID: user.TenantID, Roles: []string{user.Role}}, nil
}

func errCode(err error) string {
	if e, ok := AsAPIError(err); ok {
		return e.Code
	}
	return "unreachable"
}

// respond posts the reply to the interaction's response_url, best effort: the
// decision is already recorded, and Slack accepts the click without it.
func (s *Service) respond(ctx context.Context, responseURL string, r *Reply) {
	if responseURL == "" {
		return
	}
	raw, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(raw))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		s.log.WarnContext(ctx, "slack response_url post failed", slog.Any("error", err))
		return
	}
	_ = resp.Body.Close()
}

// Command handles /causeway status <incidentId> and /causeway investigate
// <incidentId>; the reply is the HTTP answer Slack shows the caller.
func (s *Service) Command(ctx context.Context, tenantID string, req Signed) (*Reply, error) {
	integ, form, err := s.verify(ctx, tenantID, req)
	if err != nil {
		return nil, err
	}
	verb, arg, _ := strings.Cut(strings.TrimSpace(form.Get("text")), " ")
	arg = strings.TrimSpace(arg)
	if (verb != "status" && verb != "investigate") || arg == "" || utf8.RuneCountInString(arg) > 100 {
		return ephemeral("Usage: `/causeway status <incidentId>` or `/causeway investigate <incidentId>`"), nil
	}
	p, refusal := s.principal(ctx, integ, form.Get("user_id"))
	if refusal != nil {
		return refusal, nil
	}
	inc, err := s.models.GetIncident(ctx, p.TenantID, arg)
	if errors.Is(err, models.ErrNotFound) {
		return ephemeral("No incident %s in this workspace's Causeway tenant.", arg), nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	if verb == "status" {
		return ephemeral("*%s* `%s`\nSeverity %s · status %s · service %s", inc.Title, inc.ID, inc.Severity, inc.Status, inc.Service), nil
	}
	if !p.HasAnyRole(models.Writers...) {
		return ephemeral("Your Causeway role (%s) may not start investigations. Nothing changed.", strings.Join(p.Roles, ", ")), nil
	}
	if err := s.investigations.Start(ctx, p, inc.ID); err != nil {
		if e, ok := errcode.As(err); ok {
			return ephemeral("The investigation of %s did not start: %s", inc.ID, e.Message), nil
		}
		return nil, err
	}
	return &Reply{ResponseType: "in_channel", Text: fmt.Sprintf("%s started an investigation of %s (%s).", p.Email, inc.ID, inc.Title)}, nil
}
