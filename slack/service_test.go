package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/ratelimit"
	"github.com/causeway/causeway/slack/slackfake"
)

// recordingRemediations stands in for the remediation service: it records
// every decision asked of it and answers like the real one for a stale hash.
type recordingRemediations struct {
	hash  string
	calls []string
}

func (r *recordingRemediations) Proposal(_ context.Context, tenantID, id string) (ProposalView, error) {
	if tenantID != "ten_a" || id != "rem_1" {
		return ProposalView{}, ErrNotFound
	}
	return ProposalView{ID: id, IncidentID: "inc_a", Status: statusAwaitingApproval, PlanHash: r.hash}, nil
}
func (r *recordingRemediations) Proposals(context.Context, string, string) ([]ProposalView, error) {
	return nil, nil
}
func (r *recordingRemediations) Approve(_ context.Context, p auth.Principal, id, hash string) error {
	if hash != r.hash {
		return errcode.New(errcode.PlanChanged, "stale")
	}
	r.calls = append(r.calls, "approve "+p.Email+" "+id)
	return nil
}
func (r *recordingRemediations) Reject(_ context.Context, p auth.Principal, id, _ string) error {
	r.calls = append(r.calls, "reject "+p.Email+" "+id)
	return nil
}
func (r *recordingRemediations) Execute(_ context.Context, p auth.Principal, id string) error {
	r.calls = append(r.calls, "execute "+p.Email+" "+id)
	return nil
}

func newServiceRig(t *testing.T) (*Service, *recordingRemediations, *slackfake.Server) {
	t.Helper()
	r := newRig(t)
	now := time.Now().UTC()
	must(t, r.db.DB().Create(&models.Tenant{ID: "ten_b", Name: "B", QuotaEvents: 10, QuotaInvestigations: 10, CreatedAt: now}).Error)
	for _, u := range []models.User{
		{ID: "usr_admin", TenantID: "ten_a", Email: "admin@a.example", Name: "A", Role: models.RoleAdmin, CreatedAt: now},
		{ID: "usr_viewer", TenantID: "ten_a", Email: "viewer@a.example", Name: "V", Role: models.RoleViewer, CreatedAt: now},
		{ID: "usr_operator", TenantID: "ten_a", Email: "operator@a.example", Name: "O", Role: models.RoleOperator, CreatedAt: now},
		{ID: "usr_other", TenantID: "ten_b", Email: "admin@b.example", Name: "B", Role: models.RoleOwner, CreatedAt: now},
	} {
		must(t, r.db.DB().Create(&u).Error)
	}
	for id, email := range map[string]string{"U1": "admin@a.example", "U2": "viewer@a.example", "U3": "admin@b.example", "U4": "nobody@a.example", "U5": "operator@a.example"} {
		r.fake.AddUser(slackfake.User{ID: id, Email: email, Confirmed: true})
	}
	rems := &recordingRemediations{hash: "h1"}
	svc := NewService(Options{Store: r.store, Models: r.db, Sealer: r.acts.Sealer, HTTP: http.DefaultClient, APIURL: r.fake.URL,
		Remediations: rems, Marks: ratelimit.NewMemory(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return svc, rems, r.fake
}

func click(user, action, value string) []byte {
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user},
		"team": map[string]any{"id": "T0TEST"}, "actions": []map[string]any{{"action_id": action, "value": value}}})
	return []byte("payload=" + url.QueryEscape(string(payload)))
}

func signed(secret string, at time.Time, body []byte) Signed {
	ts := strconv.FormatInt(at.Unix(), 10)
	return Signed{Timestamp: ts, Signature: hmacSig(secret, ts, string(body)), Body: body}
}

// TestInteractionRefusalsChangeNothing: every refused click reaches neither
// Approve nor Execute, and only a manager of the right tenant decides.
func TestInteractionRefusalsChangeNothing(t *testing.T) {
	svc, rems, _ := newServiceRig(t)
	ctx := context.Background()
	now := time.Now()
	good := click("U1", ActionApprove, "rem_1:h1")
	swapped := signed("sign", now, good)
	swapped.Body = click("U1", ActionApprove, "rem_1:h2")
	for name, req := range map[string]Signed{
		"forged":       signed("wrong", now, good),
		"six min old":  signed("sign", now.Add(-6*time.Minute), good),
		"future":       signed("sign", now.Add(6*time.Minute), good),
		"body swapped": swapped,
	} {
		if _, err := svc.Interaction(ctx, "ten_a", req); !errors.Is(err, errUnsigned) {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
	}
	// Signed by tenant A's app but sent to tenant B's endpoint (not connected).
	if _, err := svc.Interaction(ctx, "ten_b", signed("sign", now, good)); !errors.Is(err, errUnsigned) {
		t.Errorf("other tenant's path: %v", err)
	}
	for name, c := range map[string]struct {
		body []byte
		says string
	}{
		"viewer":               {click("U2", ActionApprove, "rem_1:h1"), "may not approve"},
		"other tenant's user":  {click("U3", ActionApprove, "rem_1:h1"), "No Causeway user"},
		"unmapped e-mail":      {click("U4", ActionApprove, "rem_1:h1"), "No Causeway user"},
		"unknown Slack user":   {click("U9", ActionApprove, "rem_1:h1"), "user_not_found"},
		"stale plan hash":      {click("U1", ActionApprove, "rem_1:h0"), "no longer the one"},
		"value without a hash": {click("U1", ActionApprove, "rem_1"), "not one Causeway understands"},
		"an action not ours":   {click("U1", "delete", "rem_1:h1"), "not one Causeway understands"},
		"viewer rejecting":     {click("U2", ActionReject, "rem_1:h1"), "may not approve or reject"},
		// Operators open and investigate incidents; deciding is for owners
		// and admins.
		"operator":           {click("U5", ActionApprove, "rem_1:h1"), "may not approve"},
		"operator rejecting": {click("U5", ActionReject, "rem_1:h1"), "may not approve or reject"},
	} {
		reply, err := svc.Interaction(ctx, "ten_a", signed("sign", now, c.body))
		if err != nil || reply.ResponseType != "ephemeral" || !strings.Contains(reply.Text, c.says) {
			t.Errorf("%s: %+v, %v; want an ephemeral %q", name, reply, err, c.says)
		}
	}
	if len(rems.calls) != 0 {
		t.Fatalf("refused clicks decided: %v", rems.calls)
	}
	reply, err := svc.Interaction(ctx, "ten_a", signed("sign", now, good))
	if err != nil || !strings.Contains(reply.Text, "Approved") {
		t.Fatalf("approve: %+v, %v", reply, err)
	}
	want := []string{"approve admin@a.example rem_1", "execute admin@a.example rem_1"}
	if strings.Join(rems.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls = %v, want %v", rems.calls, want)
	}
}

// recordingInvestigations records the passes /causeway investigate starts.
type recordingInvestigations struct{ started []string }

func (r *recordingInvestigations) Start(_ context.Context, p auth.Principal, incidentID string) error {
	r.started = append(r.started, p.TenantID+"/"+incidentID)
	return nil
}

func command(user, text string) []byte {
	return []byte(url.Values{"command": {"/causeway"}, "text": {text}, "user_id": {user}, "team_id": {"T0TEST"}}.Encode())
}

func TestSlashCommands(t *testing.T) {
	svc, _, _ := newServiceRig(t)
	invs := &recordingInvestigations{}
	svc.investigations = invs
	at := time.Now().UTC()
	must(t, svc.models.DB().Create(&models.Incident{ID: "inc_b", TenantID: "ten_b", Title: "B's incident", Description: "d",
		Severity: "high", Status: models.StatusOpen, Source: "manual", CreatedAt: at, UpdatedAt: at}).Error)
	ctx := context.Background()
	now := time.Now()
	for name, c := range map[string]struct {
		user, text, says string
	}{
		"status for a viewer":           {"U2", "status inc_a", "Checkout down"},
		"viewer may not investigate":    {"U2", "investigate inc_a", "may not start investigations"},
		"another tenant's incident":     {"U1", "status inc_b", "No incident inc_b"},
		"another tenant's user":         {"U3", "status inc_a", "No Causeway user"},
		"no verb":                       {"U1", "", "Usage"},
		"unknown verb":                  {"U1", "resolve inc_a", "Usage"},
		"investigate without incident":  {"U1", "investigate", "Usage"},
		"admin starts an investigation": {"U1", "investigate inc_a", "started an investigation of inc_a"},
	} {
		reply, err := svc.Command(ctx, "ten_a", signed("sign", now, command(c.user, c.text)))
		if err != nil || !strings.Contains(reply.Text, c.says) {
			t.Errorf("%s: %+v, %v; want %q", name, reply, err, c.says)
		}
	}
	if strings.Join(invs.started, ",") != "ten_a/inc_a" {
		t.Fatalf("started %v, want exactly the admin's one pass", invs.started)
	}
	if _, err := svc.Command(ctx, "ten_a", signed("wrong", now, command("U1", "investigate inc_a"))); !errors.Is(err, errUnsigned) {
		t.Fatalf("forged command: %v", err)
	}
}

func TestNotifyFilter(t *testing.T) {
	for _, c := range []struct {
		min        string
		categories []string
		severity   string
		category   string
		want       bool
	}{
		{"info", nil, "info", "", true},
		{"high", nil, "critical", "", true},
		{"high", nil, "high", "", true},
		{"high", nil, "medium", "", false},
		{"medium", []string{"bad_deployment"}, "critical", "", false},
		{"medium", []string{"bad_deployment"}, "critical", "bad_deployment", true},
		{"medium", []string{"bad_deployment", "disk_full"}, "low", "disk_full", false},
	} {
		if got := Passes(c.min, c.categories, c.severity, c.category); got != c.want {
			t.Errorf("Passes(%s, %v, %s, %q) = %v, want %v", c.min, c.categories, c.severity, c.category, got, c.want)
		}
	}
}
