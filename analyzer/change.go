package analyzer

import (
	"strings"
	"time"
)

// Change is one recorded change to the tenant's systems (docs/changes.md), as
// the agents read it: what the tenant's deploy tooling said changed, where
// and when. Its JSON shape is the change webhook's body, so a scenario file
// can carry the changes a tenant would have sent.
type Change struct {
	ID             string     `json:"changeId,omitempty"`
	Service        string     `json:"service"`
	Environment    string     `json:"environment,omitempty"`
	Kind           string     `json:"kind"`
	Version        string     `json:"version,omitempty"`
	Description    string     `json:"description"`
	StartedAt      time.Time  `json:"startedAt"`
	FinishedAt     *time.Time `json:"finishedAt,omitempty"`
	Author         string     `json:"author,omitempty"`
	URL            string     `json:"url,omitempty"`
	RevertOf       string     `json:"revertOf,omitempty"`
	SourceChangeID string     `json:"sourceChangeId,omitempty"`
}

// changeKindWords says each kind the way a person would write it in an
// incident channel, so the text rules that read pasted change notes read
// recorded ones too.
var changeKindWords = map[string]string{
	"deployment":     "deployment",
	"config":         "config change",
	"feature_flag":   "feature flag change",
	"infrastructure": "infrastructure change",
	"migration":      "database migration",
	"rollback":       "rollback",
}

// Line renders the change as one line of text: the quote evidence cites when
// it rests on the change, naming its id, version and time.
func (c Change) Line() string {
	var b strings.Builder
	b.WriteString("Recorded change")
	if c.ID != "" {
		b.WriteString(" " + c.ID)
	}
	b.WriteString(": ")
	if !c.StartedAt.IsZero() {
		b.WriteString(c.StartedAt.UTC().Format("2006-01-02T15:04:05Z") + " ")
	}
	kind := changeKindWords[c.Kind]
	if kind == "" {
		kind = c.Kind + " change"
	}
	b.WriteString(kind + " of " + oneLine(c.Service))
	if c.Version != "" {
		b.WriteString(" version " + oneLine(c.Version))
	}
	if c.Environment != "" {
		b.WriteString(" in " + oneLine(c.Environment))
	}
	if c.FinishedAt != nil {
		b.WriteString(", finished " + c.FinishedAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	if c.RevertOf != "" {
		b.WriteString(", reverting " + oneLine(c.RevertOf))
	}
	if c.Author != "" {
		b.WriteString(", by " + oneLine(c.Author))
	}
	if d := oneLine(c.Description); d != "" {
		b.WriteString(" — " + d)
	}
	return b.String()
}

// maxChangeLine bounds the rendering of one change an agent reads.
const maxChangeLine = 2048

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// WithChanges returns in with the recorded changes attached: structured, for
// the reasoning about each one as the trigger, and as excerpts the
// deployments agent reads and evidence cites with the change as its source.
func (in Input) WithChanges(cs []Change) Input {
	if len(cs) == 0 {
		return in
	}
	in.Changes = append([]Change(nil), cs...)
	g := make([]Excerpt, 0, len(in.Gathered)+len(cs))
	g = append(g, in.Gathered...)
	for _, c := range cs {
		g = append(g, Excerpt{Source: Source{Kind: SourceChange, ChangeID: c.ID}, Text: c.Line(), Roles: []string{RoleDeployments}})
	}
	in.Gathered = g
	return in
}

func validChangeKind(k string) bool {
	_, ok := changeKindWords[k]
	return ok
}
