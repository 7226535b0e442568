package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/ratelimit"
)

// Remediations is the approval surface the Slack service drives. The app
// adapts the remediation service to it, so a click takes exactly the path of
// the API: the same plan-hash-bound Temporal Updates, decided once.
type Remediations interface {
	// Proposal reads one of the tenant's remediations; ErrNotFound when absent.
	Proposal(ctx context.Context, tenantID, remediationID string) (ProposalView, error)
	// Proposals lists the remediations of the tenant's incident.
	Proposals(ctx context.Context, tenantID, incidentID string) ([]ProposalView, error)
	// Approve approves the plan with planHash as p.
	Approve(ctx context.Context, p auth.Principal, remediationID, planHash string) error
	// Reject rejects the remediation as p.
	Reject(ctx context.Context, p auth.Principal, remediationID, reason string) error
	// Execute starts an approved remediation as p.
	Execute(ctx context.Context, p auth.Principal, remediationID string) error
}

// Investigations starts investigation passes for /causeway investigate.
type Investigations interface {
	Start(ctx context.Context, p auth.Principal, incidentID string) error
}

// Service serves the integration's settings and Slack's signed requests.
type Service struct {
	store          *Store
	models         *models.Store
	sealer         *auth.Sealer
	http           *http.Client
	apiURL         string
	publicURL      string
	remediations   Remediations
	investigations Investigations
	notifier       *Notifier
	marks          ratelimit.Marks
	log            *slog.Logger
	now            func() time.Time
}

// Options wires a Service.
type Options struct {
	Store  *Store
	Models *models.Store
	Sealer *auth.Sealer
	// HTTP is the egress client for the Web API and response_url.
	HTTP   *http.Client
	APIURL string
	// PublicURL is where Slack reaches the API, for the URLs shown on GET.
	PublicURL      string
	Remediations   Remediations
	Investigations Investigations
	// Notifier refreshes a proposal's message right after a decision.
	Notifier *Notifier
	// Marks remembers the signatures already accepted, for every API
	// process: the shared backend (Redis) when the API runs as several.
	Marks ratelimit.Marks
	Log   *slog.Logger
}

// NewService builds the service.
func NewService(o Options) *Service {
	return &Service{store: o.Store, models: o.Models, sealer: o.Sealer, http: o.HTTP, apiURL: o.APIURL, publicURL: o.PublicURL,
		remediations: o.Remediations, investigations: o.Investigations, notifier: o.Notifier, marks: o.Marks, log: o.Log, now: time.Now}
}

// Notify is the notify filter of PUT.
type Notify struct {
	MinSeverity string   `json:"minSeverity"`
	Categories  []string `json:"categories,omitempty"`
}

// PutInput is the body of PUT /v1/integrations/slack. The token and the
// signing secret are write-only.
type PutInput struct {
	BotToken      string  `json:"botToken"`
	SigningSecret string  `json:"signingSecret"`
	Channel       string  `json:"channel"`
	Notify        *Notify `json:"notify"`
}

// View is the integration as the API shows it: never a credential.
type View struct {
	Channel         string     `json:"channel"`
	TeamID          string     `json:"teamId"`
	Team            string     `json:"team"`
	BotUserID       string     `json:"botUserId"`
	Notify          Notify     `json:"notify"`
	Status          string     `json:"status"`
	LastError       string     `json:"lastError,omitempty"`
	LastErrorAt     *time.Time `json:"lastErrorAt,omitempty"`
	InteractionsURL string     `json:"interactionsUrl"`
	CommandsURL     string     `json:"commandsUrl"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
}

// channelID is a Slack conversation ID: public (C), private (G) channels.
var channelID = regexp.MustCompile(`^[CG][A-Z0-9]{6,20}$`)

// Put connects (or reconnects) the tenant's workspace. The token is checked
// with auth.test before anything is saved; reconnecting clears a stop.
func (s *Service) Put(ctx context.Context, p auth.Principal, in PutInput) (*View, error) {
	notify, err := validPut(&in)
	if err != nil {
		return nil, err
	}
	id, err := NewClient(s.apiURL, s.http, in.BotToken).AuthTest(ctx)
	if apiErr, ok := AsAPIError(err); ok && !apiErr.Retryable() {
		return nil, errcode.New(errcode.Validation, "botToken was refused by Slack's auth.test: %s", apiErr.Code)
	}
	if err != nil {
		return nil, errcode.New(errcode.Unavailable, "Slack could not be reached to check botToken; try again")
	}
	if id.TeamID == "" {
		return nil, errcode.New(errcode.Validation, "botToken: Slack's auth.test named no workspace (team_id) for it")
	}
	now := s.now().UTC()
	integ := &Integration{TenantID: p.TenantID, Channel: in.Channel, TeamID: id.TeamID, TeamName: id.Team, BotUserID: id.UserID,
		MinSeverity: notify.MinSeverity, Categories: notify.Categories, Status: StatusActive, CreatedAt: now, UpdatedAt: now,
		BotTokenEnc:      s.sealer.Encrypt([]byte(in.BotToken), []byte(aadBotToken+p.TenantID)),
		SigningSecretEnc: s.sealer.Encrypt([]byte(in.SigningSecret), []byte(aadSigningSecret+p.TenantID))}
	prev, err := s.store.Integration(ctx, p.TenantID)
	switch {
	case errors.Is(err, ErrNotFound):
		// A new connection announces what happens from now on, not the past.
		if integ.Cursor, err = s.store.LastTimelineID(ctx, p.TenantID); err != nil {
			return nil, unavailable(err)
		}
	case err != nil:
		return nil, unavailable(err)
	}
	// Messages in another channel cannot be edited or threaded from this one:
	// a new channel starts each incident's messages afresh.
	if err := s.store.SaveIntegration(ctx, integ, prev != nil && prev.Channel != integ.Channel); err != nil {
		return nil, unavailable(err)
	}
	return s.Get(ctx, p)
}

func validPut(in *PutInput) (Notify, error) {
	in.BotToken, in.SigningSecret, in.Channel = strings.TrimSpace(in.BotToken), strings.TrimSpace(in.SigningSecret), strings.TrimSpace(in.Channel)
	bad := func(f string, a ...any) (Notify, error) {
		return Notify{}, errcode.New(errcode.Validation, f, a...)
	}
	if in.BotToken == "" || len(in.BotToken) > 500 {
		return bad("botToken is required (the bot user OAuth token, xoxb-…)")
	}
	if in.SigningSecret == "" || len(in.SigningSecret) > 200 {
		return bad("signingSecret is required (Basic Information → App Credentials → Signing Secret)")
	}
	if !channelID.MatchString(in.Channel) {
		return bad("channel must be a Slack channel ID such as C0123ABCD (channel details → About), not a name")
	}
	n := Notify{MinSeverity: models.SeverityInfo}
	if in.Notify != nil {
		n = *in.Notify
		if n.MinSeverity == "" {
			n.MinSeverity = models.SeverityInfo
		}
	}
	if !models.ValidSeverity(n.MinSeverity) {
		return bad("notify.minSeverity must be one of critical, high, medium, low, info")
	}
	if len(n.Categories) > len(analyzer.Categories) {
		return bad("notify.categories lists more categories than exist")
	}
	for _, c := range n.Categories {
		if !analyzer.ValidCategory(c) {
			return bad("notify.categories: unknown category %q", c)
		}
	}
	return n, nil
}

// Get shows the tenant's integration and its sending status.
func (s *Service) Get(ctx context.Context, p auth.Principal) (*View, error) {
	integ, err := s.integration(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	base := s.publicURL + "/v1/integrations/slack/" + p.TenantID
	return &View{Channel: integ.Channel, TeamID: integ.TeamID, Team: integ.TeamName, BotUserID: integ.BotUserID,
		Notify: Notify{MinSeverity: integ.MinSeverity, Categories: integ.Categories}, Status: integ.Status,
		LastError: integ.LastError, LastErrorAt: integ.LastErrorAt, InteractionsURL: base + "/interactions",
		CommandsURL: base + "/commands", CreatedAt: integ.CreatedAt.UTC(), UpdatedAt: integ.UpdatedAt.UTC()}, nil
}

// Delete disconnects the tenant's workspace; running message workflows find
// it gone and stop.
func (s *Service) Delete(ctx context.Context, p auth.Principal) error {
	err := s.store.DeleteIntegration(ctx, p.TenantID)
	if errors.Is(err, ErrNotFound) {
		return errcode.New(errcode.NotFound, "Slack is not connected")
	}
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// TestResult is where the test message went.
type TestResult struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// SendTest posts a test message to the configured channel. A permanent
// refusal is recorded on the status like a failed send.
func (s *Service) SendTest(ctx context.Context, p auth.Principal) (*TestResult, error) {
	integ, err := s.integration(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	if _, err := s.teamID(ctx, integ); err != nil {
		return nil, err
	}
	c, err := openClient(s.sealer, s.apiURL, s.http, integ)
	if err != nil {
		return nil, unavailable(err)
	}
	text, blocks := TestMessage(s.publicURL)
	ch, ts, err := c.PostMessage(ctx, Message{Channel: integ.Channel, Text: text, Blocks: blocks})
	if apiErr, ok := AsAPIError(err); ok && !apiErr.Retryable() {
		_ = s.store.RecordError(ctx, p.TenantID, apiErr.Code, apiErr.Permanent(), s.now())
		return nil, errcode.New(errcode.Validation, "Slack refused the test message: %s", apiErr.Code)
	}
	if err != nil {
		return nil, errcode.New(errcode.Unavailable, "Slack could not be reached; try again")
	}
	return &TestResult{Channel: ch, TS: ts}, nil
}

func (s *Service) integration(ctx context.Context, tenantID string) (*Integration, error) {
	integ, err := s.store.Integration(ctx, tenantID)
	if errors.Is(err, ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "Slack is not connected")
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return integ, nil
}

func unavailable(err error) error {
	return fmt.Errorf("%w: %w", errcode.New(errcode.Unavailable, "the database is unavailable; try again"), err)
}
