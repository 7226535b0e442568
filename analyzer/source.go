package analyzer

import "strings"

// Kinds of Source: where a piece of evidence was read.
const (
	// SourceAlert is the alert itself: title, description, tags, metadata.
	SourceAlert = "alert"
	// SourceContext is supplemental text a person pasted.
	SourceContext = "context"
	// SourceDataSource is the result of a query Causeway ran against one of
	// the tenant's data sources.
	SourceDataSource = "datasource"
	// SourceChange is a change event the tenant recorded (a release, a config
	// or flag change, a migration…).
	SourceChange = "change"
)

// Source says where evidence was read, so a reader can go and check it: the
// alert, pasted context, the query that was run against a data source, or a
// recorded change.
type Source struct {
	Kind         string `json:"kind"`
	DataSourceID string `json:"dataSourceId,omitempty"`
	Type         string `json:"type,omitempty"`
	Query        string `json:"query,omitempty"`
	ChangeID     string `json:"changeId,omitempty"`
}

// Excerpt is text Causeway gathered for an investigation rather than text a
// person gave it: a data source's answer to one query, rendered as lines, or a
// recorded change. Agents read it exactly like pasted context, and evidence
// that quotes it names its Source.
type Excerpt struct {
	Source Source
	Text   string
	// Roles lists the agents that read the excerpt; empty means every agent.
	// The excerpt still counts as input for citations whoever reads it.
	Roles []string
}

// forRole reports whether the agent role reads the excerpt.
func (e Excerpt) forRole(role string) bool {
	return len(e.Roles) == 0 || hasRole(e.Roles, role)
}

// SourceOf tells where a citation was read. Field references name the alert
// (or a whole context entry); a quote is looked up in the gathered excerpts
// first, since those carry the most precise address, then in the pasted
// context, then in the alert. A citation found nowhere gets no source; such a
// finding is dropped by Synthesize anyway.
func SourceOf(in Input, citation string) *Source {
	c := strings.TrimSpace(citation)
	if c == "" {
		return nil
	}
	if ok, isRef := fieldRefValid(in, c); isRef {
		if !ok {
			return nil
		}
		if strings.HasPrefix(c, "context[") {
			return &Source{Kind: SourceContext}
		}
		return &Source{Kind: SourceAlert}
	}
	q := squash(c)
	if q == "" {
		return nil
	}
	for _, g := range in.Gathered {
		if strings.Contains(squash(g.Text), q) {
			s := g.Source
			return &s
		}
	}
	for _, e := range in.Context {
		if strings.Contains(squash(e), q) {
			return &Source{Kind: SourceContext}
		}
	}
	if strings.Contains(squash(in.Title), q) || strings.Contains(squash(in.Description), q) {
		return &Source{Kind: SourceAlert}
	}
	return nil
}

// key identifies a source for grouping evidence.
func (s *Source) key() string {
	if s == nil {
		return ""
	}
	return s.Kind + "\x00" + s.DataSourceID + "\x00" + s.Query + "\x00" + s.ChangeID
}

// ForRole is the input one agent reads: the gathered excerpts meant for other
// agents are left out. Both analysis paths (offline and LLM) use it.
func (in Input) ForRole(role string) Input {
	if len(in.Gathered) == 0 {
		return in
	}
	out := in
	out.Gathered = nil
	for _, g := range in.Gathered {
		if g.forRole(role) {
			out.Gathered = append(out.Gathered, g)
		}
	}
	return out
}

// Describe names the source in a few words for a reader: where to look to
// check the evidence.
func (s Source) Describe() string {
	switch s.Kind {
	case SourceDataSource:
		d := "data source"
		if s.Type != "" {
			d = s.Type + " " + d
		}
		if s.DataSourceID != "" {
			d += " " + s.DataSourceID
		}
		if s.Query != "" {
			d += ", query: " + s.Query
		}
		return d
	case SourceChange:
		if s.ChangeID != "" {
			return "recorded change " + s.ChangeID
		}
		return "recorded change"
	case SourceAlert:
		return "the alert"
	case SourceContext:
		return "pasted context"
	}
	return s.Kind
}
