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
// tenant's app fails here like a forged one. A signed request is accepted
// once: the same signature again, at this API process or another, is a replay.
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
	if err := s.claim(ctx, tenantID, req.Signature); err != nil {
		return nil, nil, err
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return nil, nil, errcode.New(errcode.Validation, "the body is not a form")
	}
	return integ, form, nil
}

// replayTTL is how long a signature is remembered. A timestamp passes while
// it is within MaxRequestAge of now either way, so one signature can pass
// for twice that long.
const replayTTL = 2 * MaxRequestAge

// claim marks a verified signature as seen. The marks are the ones webhook
// deliveries use (Redis when configured), so every API process agrees. When
// they cannot be read the request is refused: a click decides a remediation,
// and Slack's user can click again once the store is back.
func (s *Service) claim(ctx context.Context, tenantID, signature string) error {
	first, err := s.marks.Mark(ctx, "slack-replay:"+tenantID+":"+auth.SHA256Hex(signature), replayTTL)
	if err != nil {
		return errcode.Down("the replay cache", err)
	}
	if !first {
		s.log.InfoContext(ctx, "slack request replay refused", slog.String("tenant_id", tenantID))
		return errUnsigned
	}
	return nil
}

// checkTeam refuses a request from a workspace other than the integration's.
// The signing secret belongs to an app, and one app may be installed in
// several workspaces; the bot token, and so the tenant, belongs to one.
func (s *Service) checkTeam(ctx context.Context, integ *Integration, team string) error {
	want, err := s.teamID(ctx, integ)
	if err != nil {
		return err
	}
	if team == "" || team != want {
		s.log.InfoContext(ctx, "slack request from another workspace refused", slog.String("tenant_id", integ.TenantID))
		return errUnsigned
	}
	return nil
}

// teamID is the integration's workspace. An integration saved before the
// workspace was recorded learns it once from auth.test with its own bot
// token; until that answers, its requests are refused.
func (s *Service) teamID(ctx context.Context, integ *Integration) (string, error) {
	if integ.TeamID != "" {
		return integ.TeamID, nil
	}
	c, err := openClient(s.sealer, s.apiURL, s.http, integ)
	if err != nil {
		return "", unavailable(err)
	}
	id, err := c.AuthTest(ctx)
	if err != nil || id.TeamID == "" {
		return "", errcode.New(errcode.Unavailable, "Slack could not confirm which workspace this integration is connected to; try again")
	}
	if err := s.store.RecordTeam(ctx, integ.TenantID, id.TeamID, id.Team); err != nil {
		return "", unavailable(err)
	}
	integ.TeamID, integ.TeamName = id.TeamID, id.Team
	return id.TeamID, nil
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
	perr := json.Unmarshal([]byte(form.Get("payload")), &in)
	if err := s.checkTeam(ctx, integ, in.Team.ID); err != nil {
		return nil, err
	}
	if perr != nil || in.Type != "block_actions" || len(in.Actions) == 0 {
		return ephemeral("Causeway only handles its Approve and Reject buttons."), nil
	}
	reply := s.decide(ctx, integ, in.User.ID, in.Actions[0].ActionID, in.Actions[0].Value)
	s.respond(ctx, integ.TenantID, in.ResponseURL, reply)
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
		return auth.Principal{}, ephemeral("No Causeway user of this workspace's tenant has the e-mail %s; ask an admin to add you. Nothing changed.", escape(email))
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
// decision is already recorded, and Slack accepts the click without it. The
// URL is a bearer credential for the conversation, so it is never logged.
func (s *Service) respond(ctx context.Context, tenantID, responseURL string, r *Reply) {
	if responseURL == "" {
		return
	}
	if !s.slackURL(responseURL) {
		s.log.WarnContext(ctx, "slack response_url is not a Slack address; not used", slog.String("tenant_id", tenantID))
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
		// A *url.Error names the URL; only its cause is logged.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		s.log.WarnContext(ctx, "slack response_url post failed", slog.String("tenant_id", tenantID), slog.Any("error", err))
		return
	}
	_ = resp.Body.Close()
}

// responseHost is where Slack's response URLs point (…/actions/…,
// …/commands/…, …/app/… on hooks.slack.com).
const responseHost = "hooks.slack.com"

// slackURL reports whether a response_url may be posted to: https on Slack's
// response host, or, when the operator pointed the Web API at a stand-in
// (CAUSEWAY_SLACK_API_URL), on that stand-in's own scheme and host. Anything
// else in a payload would make Causeway post wherever the payload says.
func (s *Service) slackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" {
		return false
	}
	if u.Scheme == "https" && u.Host == responseHost {
		return true
	}
	if s.apiURL == "" || s.apiURL == DefaultAPIURL {
		return false
	}
	base, err := url.Parse(s.apiURL)
	return err == nil && base.Host != "" && u.Scheme == base.Scheme && u.Host == base.Host
}

// Command handles /causeway status <incidentId> and /causeway investigate
// <incidentId>; the reply is the HTTP answer Slack shows the caller.
func (s *Service) Command(ctx context.Context, tenantID string, req Signed) (*Reply, error) {
	integ, form, err := s.verify(ctx, tenantID, req)
	if err != nil {
		return nil, err
	}
	if err := s.checkTeam(ctx, integ, form.Get("team_id")); err != nil {
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
		return ephemeral("No incident %s in this workspace's Causeway tenant.", escape(arg)), nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	if verb == "status" {
		return ephemeral("*%s* `%s`\nSeverity %s · status %s · service %s", escape(inc.Title), inc.ID, inc.Severity, inc.Status, escape(inc.Service)), nil
	}
	if !p.HasAnyRole(models.Writers...) {
		return ephemeral("Your Causeway role (%s) may not start investigations. Nothing changed.", strings.Join(p.Roles, ", ")), nil
	}
	if err := s.investigations.Start(ctx, p, inc.ID); err != nil {
		if e, ok := errcode.As(err); ok {
			return ephemeral("The investigation of %s did not start: %s", inc.ID, escape(e.Message)), nil
		}
		return nil, err
	}
	return &Reply{ResponseType: "in_channel", Text: fmt.Sprintf("%s started an investigation of %s (%s).", escape(p.Email), inc.ID, escape(inc.Title))}, nil
}
