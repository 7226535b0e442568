package slack

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Block is one Block Kit layout block. Causeway uses header, section, context,
// divider and actions; the fields a type does not use stay empty.
type Block struct {
	Type     string    `json:"type"`
	BlockID  string    `json:"block_id,omitempty"`
	Text     *Text     `json:"text,omitempty"`
	Fields   []Text    `json:"fields,omitempty"`
	Elements []Element `json:"elements,omitempty"`
}

// Text is a Block Kit text object: plain_text or mrkdwn.
type Text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Element is an element of a context block (a text object) or of an actions
// block (a button).
type Element struct {
	Type     string `json:"type"`
	Text     any    `json:"text"`
	ActionID string `json:"action_id,omitempty"`
	Value    string `json:"value,omitempty"`
	Style    string `json:"style,omitempty"`
}

// Button action IDs, the contract of the interaction endpoint.
const (
	ActionApprove = "approve"
	ActionReject  = "reject"
)

// Block Kit limits Slack enforces with invalid_blocks; texts are cut to fit.
const (
	maxSectionText = 3000
	maxHeaderText  = 150
	maxFieldText   = 2000
	maxButtonValue = 2000
)

func plain(s string) *Text { return &Text{Type: "plain_text", Text: clip(s, maxHeaderText)} }
func mrkdwn(s string) *Text {
	return &Text{Type: "mrkdwn", Text: clip(s, maxSectionText)}
}
func field(label, value string) Text {
	if value == "" {
		value = "—"
	}
	return Text{Type: "mrkdwn", Text: clip("*"+label+"*\n"+value, maxFieldText)}
}
func section(s string) Block { return Block{Type: "section", Text: mrkdwn(s)} }
func contextLine(s string) Block {
	return Block{Type: "context", Elements: []Element{{Type: "mrkdwn", Text: clip(s, maxSectionText)}}}
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// escape makes user text inert wherever Slack parses it (mrkdwn blocks and a
// message's fallback text, which notifications show): Slack reads &, < and >
// as control characters (links, mentions), so an alert title cannot ping
// @channel or show a link. plain_text objects are shown as they are and need
// no escaping.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// IncidentView is what the root message shows: the culprit first (the
// object to fix, as "deployment shop/checkout — image_not_found"), then the
// category, confidence, narrative and top evidence.
type IncidentView struct {
	ID, Title, Severity, Status, Service, Environment string
	// Culprit is the blamed object and its mechanism, empty until answered
	// or when the answer is unknown.
	Culprit    string
	Category   string
	Confidence float64
	RootCause  string
	// Evidence is the top cited evidence; EvidenceSource says where it was read.
	Evidence, EvidenceRole, EvidenceSource string
	// Progress summarises a running pass, e.g. "3 of 5 agents reported".
	Progress     string
	DashboardURL string
}

var severityMark = map[string]string{
	"critical": ":red_circle:", "high": ":large_orange_circle:", "medium": ":large_yellow_circle:",
	"low": ":white_circle:", "info": ":information_source:",
}

// IncidentMessage renders the incident's root message.
func IncidentMessage(v IncidentView) (string, []Block) {
	text := escape(fmt.Sprintf("[%s] %s — %s", v.Severity, v.Title, v.Status))
	blocks := []Block{
		{Type: "header", Text: plain(v.Title)},
		{Type: "section", Fields: []Text{
			field("Severity", severityMark[v.Severity]+" "+v.Severity),
			field("Status", v.Status),
			field("Service", escape(v.Service)),
			field("Environment", escape(v.Environment)),
			field("Category", escape(v.Category)),
			field("Confidence", confidence(v)),
		}},
	}
	if v.Progress != "" {
		blocks = append(blocks, contextLine(escape(v.Progress)))
	}
	if v.Culprit != "" {
		blocks = append(blocks, section("*Culprit*\n`"+escape(v.Culprit)+"`"))
	}
	if v.RootCause != "" {
		blocks = append(blocks, section("*Root cause*\n"+escape(v.RootCause)))
	}
	if v.Evidence != "" {
		src := v.EvidenceRole
		if v.EvidenceSource != "" {
			src += " · " + v.EvidenceSource
		}
		blocks = append(blocks, section("*Top evidence* ("+escape(src)+")\n>"+escape(v.Evidence)))
	}
	link := "Incident `" + v.ID + "`"
	if v.DashboardURL != "" {
		link = "<" + v.DashboardURL + "|Open incident " + v.ID + " in Causeway>"
	}
	blocks = append(blocks, Block{Type: "divider"}, contextLine(link))
	return text, blocks
}

func confidence(v IncidentView) string {
	if v.Category == "" {
		return ""
	}
	return fmt.Sprintf("%.0f%%", v.Confidence*100)
}

// ProposalView is what a remediation message shows.
type ProposalView struct {
	ID, IncidentID, Description, Status, PlanHash string
	Steps                                         []StepView
	ApprovedBy, RejectedBy, RejectReason          string
	ExecutedBy, FailureReason                     string
}

// StepView is one step of a proposal.
type StepView struct{ Type, Description, Status string }

// Remediation statuses the messages tell apart (the API's values).
const (
	statusAwaitingApproval = "awaiting_approval"
	statusApproved         = "approved"
	statusRejected         = "rejected"
	statusExecuting        = "executing"
	statusCompleted        = "completed"
	statusFailed           = "failed"
)

// ButtonValue is the value of both buttons: the remediation and the plan hash
// the person is looking at, so a click approves exactly that plan.
func ButtonValue(remediationID, planHash string) string { return remediationID + ":" + planHash }

// parseButtonValue splits a ButtonValue.
func parseButtonValue(v string) (remediationID, planHash string, ok bool) {
	remediationID, planHash, ok = strings.Cut(v, ":")
	return remediationID, planHash, ok && remediationID != "" && planHash != ""
}

// RemediationMessage renders a proposal: its steps and plan hash, the buttons
// while it awaits a decision, and who decided once someone has.
func RemediationMessage(p ProposalView) (string, []Block) {
	var steps strings.Builder
	for i, s := range p.Steps {
		fmt.Fprintf(&steps, "%d. `%s` %s", i+1, escape(s.Type), escape(s.Description))
		if s.Status != "" && s.Status != "pending" {
			fmt.Fprintf(&steps, " — _%s_", s.Status)
		}
		steps.WriteString("\n")
	}
	text := "Remediation proposed: " + escape(p.Description)
	blocks := []Block{
		section("*Proposed remediation* `" + p.ID + "`\n" + escape(p.Description)),
		section("*Steps*\n" + steps.String()),
		contextLine("Plan hash `" + p.PlanHash + "`"),
	}
	switch p.Status {
	case statusAwaitingApproval:
		v := clip(ButtonValue(p.ID, p.PlanHash), maxButtonValue)
		blocks = append(blocks, Block{Type: "actions", BlockID: "decide", Elements: []Element{
			{Type: "button", Text: plain("Approve"), ActionID: ActionApprove, Value: v, Style: "primary"},
			{Type: "button", Text: plain("Reject"), ActionID: ActionReject, Value: v, Style: "danger"},
		}})
	default:
		text = "Remediation " + escape(p.Status) + ": " + escape(p.Description)
		blocks = append(blocks, section(decisionLine(p)))
	}
	return text, blocks
}

// decisionLine says who decided and where the remediation stands.
func decisionLine(p ProposalView) string {
	switch p.Status {
	case statusRejected:
		line := ":no_entry: *Rejected* by " + escape(p.RejectedBy)
		if p.RejectReason != "" {
			line += ": " + escape(p.RejectReason)
		}
		return line
	case statusApproved:
		return ":white_check_mark: *Approved* by " + escape(p.ApprovedBy) + "; waiting to be executed"
	case statusExecuting:
		return ":white_check_mark: *Approved* by " + escape(p.ApprovedBy) + " · :gear: executing (started by " + escape(p.ExecutedBy) + ")"
	case statusCompleted:
		return ":white_check_mark: *Approved* by " + escape(p.ApprovedBy) + " · :heavy_check_mark: completed"
	case statusFailed:
		return ":white_check_mark: *Approved* by " + escape(p.ApprovedBy) + " · :x: failed: " + escape(p.FailureReason)
	}
	return "Status: " + p.Status
}

// TimelineMessage renders one timeline entry as a thread reply.
func TimelineMessage(kind, message, actor string) (string, []Block) {
	line := "*" + escape(kind) + "* " + escape(message)
	if actor != "" {
		line += " — " + escape(actor)
	}
	return escape(kind + ": " + message), []Block{section(line)}
}

// TestMessage is what "send test message" posts.
func TestMessage(dashboardURL string) (string, []Block) {
	text := "Causeway is connected to this channel."
	blocks := []Block{section(":wave: *Causeway is connected.* Incidents will appear in this channel, with proposals to approve in their threads.")}
	if dashboardURL != "" {
		blocks = append(blocks, contextLine("<"+dashboardURL+"|Open Causeway>"))
	}
	return text, blocks
}
