package analyzer

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// hit is one raw signal before it is turned into findings for each role.
type hit struct {
	cat      string
	stance   string
	str      float64
	what     string
	roles    []string
	citation string
	// stated marks a conclusion the input states outright (a polar rule) or
	// the deployments agent's reasoning about changes and reverts, which reads
	// mitigation lines on purpose; it stands even on a line reporting a fix.
	stated bool
	// fromRecord marks the reasoning over recorded changes (attribution.go).
	fromRecord bool
	// mech and culprit say how and where, when the signal can tell.
	mech    string
	culprit *Culprit
}

// Bounds of what one agent reads. An incident's description and context are
// written by whoever holds an API key or a token, so an agent reads a bounded
// prefix of each: enough for pages of logs, small enough that a pass costs
// milliseconds however large the incident grew.
const (
	MaxContextBytes     = 256 << 10
	MaxDescriptionBytes = 64 << 10
)

// BoundInput returns in cut to what an agent reads: the description up to
// MaxDescriptionBytes, the context entries in order up to MaxContextBytes in
// all, and the gathered excerpts in order up to as much again (the entry that
// crosses a limit is cut, later ones dropped). Cuts fall on line ends where possible, so quotes
// stay whole lines. in is not modified.
func BoundInput(in Input) Input {
	in.Description = cutText(in.Description, MaxDescriptionBytes)
	budget := MaxContextBytes
	var kept []string
	for _, e := range in.Context {
		if budget <= 0 {
			break
		}
		e = cutText(e, budget)
		budget -= len(e)
		kept = append(kept, e)
	}
	in.Context = kept
	budget = MaxContextBytes
	var gathered []Excerpt
	for _, g := range in.Gathered {
		if budget <= 0 {
			break
		}
		g.Text = cutText(g.Text, budget)
		budget -= len(g.Text)
		gathered = append(gathered, g)
	}
	in.Gathered = gathered
	return in
}

// cutText keeps at most limit bytes of s, ending at the last line break within
// them when there is one, and never inside a UTF-8 sequence.
func cutText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head := RunePrefix(s, limit)
	if nl := strings.LastIndexByte(head, '\n'); nl > 0 {
		return head[:nl]
	}
	return head
}

// RunePrefix is the longest prefix of s of at most limit bytes that does not
// end inside a UTF-8 sequence: a cut text stays valid UTF-8, which PostgreSQL
// insists on and JSON keeps intact.
func RunePrefix(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := max(limit, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Investigate runs one offline specialist agent over the input. It is
// deterministic and pure, so the same incident always yields the same report,
// and cheap enough (well under 5 ms) to run inline in an activity. Each finding
// cites the clause or field it rests on; an unknown role yields an empty report.
func Investigate(role string, in Input) AgentReport {
	rep, _ := InvestigateContext(context.Background(), role, in)
	return rep
}

// InvestigateContext is Investigate over the bounded input (BoundInput) that
// stops between its phases once ctx is done, returning ctx's error: an agent
// whose pass passed its deadline must not keep a worker busy.
func InvestigateContext(ctx context.Context, role string, in Input) (AgentReport, error) {
	rep := AgentReport{AgentRole: role, Findings: []Finding{}}
	if !ValidRole(role) {
		return rep, nil
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	c := buildCorpus(BoundInput(in.ForRole(role)))
	var hits []hit
	readings := func(c *corpus) []hit {
		rs := quotedReadings(c.in.Gathered)
		ro := rolloutHits(c, rs, role)
		hits := append(readingHits(rs, role), ro...)
		hits = append(hits, rolloutMechanismHits(c, rs, ro)...)
		return append(hits, clusterHits(rs, role, c.in)...)
	}
	for _, phase := range []func(*corpus) []hit{ruleHits, numericHits, readings, statedChangeHits, attributionHits} {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		hits = append(hits, phase(c)...)
	}

	hits = preferRecorded(hits)
	seen := map[string]int{}
	for _, h := range hits {
		if !hasRole(h.roles, role) || h.citation == "" {
			continue
		}
		if h.stance == StanceRefutes && !h.stated && c.afterMitigation(h.citation) {
			continue
		}
		key := h.cat + "|" + h.stance + "|" + squash(h.citation)
		if h.culprit != nil {
			key += "|" + h.culprit.String()
		}
		if i, ok := seen[key]; ok {
			if h.str > rep.Findings[i].Strength {
				rep.Findings[i].Strength = round2(h.str)
				rep.Findings[i].Summary = summarize(h)
				rep.Findings[i].Mechanism = h.mech
			}
			continue
		}
		seen[key] = len(rep.Findings)
		rep.Findings = append(rep.Findings, Finding{
			AgentRole: role,
			Category:  h.cat,
			Stance:    h.stance,
			Strength:  round2(h.str),
			Summary:   summarize(h),
			Citation:  h.citation,
			Mechanism: h.mech,
			Culprit:   h.culprit,
		})
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Strength != b.Strength {
			return a.Strength > b.Strength
		}
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.Stance > b.Stance
	})
	const maxFindings = 16
	if len(rep.Findings) > maxFindings {
		rep.Findings = rep.Findings[:maxFindings]
	}
	return rep, nil
}

// preferRecorded: once a recorded change is confirmed as the trigger of a
// category, the agent's other arguments against that category are about
// something else (another change, a release days earlier, the prose timing
// that misreads log lines naming a flag) and no longer stand against it. An
// argument about the confirmed change itself (a rollback of it that did not
// help) does.
func preferRecorded(hits []hit) []hit {
	confirmed := map[string]map[string]bool{}
	for _, h := range hits {
		if h.fromRecord && h.stance == StanceSupports && h.str >= triggerConfirmed {
			if confirmed[h.cat] == nil {
				confirmed[h.cat] = map[string]bool{}
			}
			confirmed[h.cat][h.citation] = true
		}
	}
	if len(confirmed) == 0 {
		return hits
	}
	out := hits[:0:0]
	for _, h := range hits {
		if c := confirmed[h.cat]; c != nil && h.stance == StanceRefutes && hasRole(h.roles, RoleDeployments) && !c[h.citation] {
			continue
		}
		out = append(out, h)
	}
	return out
}

// statedChangeHits are the deployments reasoning's hits, which stand even on
// lines that report a fix.
func statedChangeHits(c *corpus) []hit {
	hits := changeHits(c)
	for i := range hits {
		hits[i].stated = true
	}
	return hits
}

func summarize(h hit) string {
	if h.cat == "" {
		return fmt.Sprintf("Observed %s.", h.what)
	}
	if h.stance == StanceRefutes {
		return fmt.Sprintf("The input rules out %s, which argues against %s.", h.what, h.cat)
	}
	return fmt.Sprintf("Evidence of %s, pointing to %s.", h.what, h.cat)
}

func hasRole(rs []string, r string) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// sourceWeight discounts alert text (a symptom summary) and structured fields
// relative to the raw context an engineer pasted.
func sourceWeight(l *line) float64 {
	if l.fromAlert() {
		return 0.85
	}
	if l.src == "field" {
		return 0.6
	}
	return 1
}

// fromAlert tells a line of the alert's own title or description: the
// symptom as the monitoring tool summed it up, not what an engineer pasted.
func (l *line) fromAlert() bool { return l.src == "title" || l.src == "description" }

func ruleHits(c *corpus) []hit {
	var out []hit
	for li := range c.lines {
		l := &c.lines[li]
		if l.recorded || adviceRe.MatchString(l.text) {
			continue
		}
		for ri := range rules {
			r := &rules[ri]
			if !r.pf.mayMatch(l.lower) {
				continue
			}
			if r.unless != nil && r.unless.MatchString(l.lower) {
				continue
			}
			if r.need != nil && !r.needClause && !r.need.MatchString(l.lower) {
				continue
			}
			if r.alertNeed != nil && l.fromAlert() && !r.alertNeed.MatchString(l.lower) {
				continue
			}
			for _, m := range r.re.FindAllStringIndex(l.text, 4) {
				if r.needClause {
					sp := l.clauseAt(m[0])
					if !r.need.MatchString(l.text[sp.s:sp.e]) {
						continue
					}
				}
				h := hit{cat: r.cat, what: r.what, roles: r.roles, citation: l.cite(m[0], m[1])}
				switch {
				case r.polar && r.refute:
					h.stance, h.str, h.stated = StanceRefutes, r.str, true
				case !r.polar && (l.negated(m[0], m[1]) || l.dismissed(m[0])):
					if r.refStr == 0 {
						continue
					}
					h.stance, h.str = StanceRefutes, r.refStr
				case r.negOnly:
					continue
				default:
					h.stance, h.str = StanceSupports, r.str*sourceWeight(l)
					if l.speculative(m[0]) {
						h.str *= speculationWeight
					}
					if !l.fromAlert() {
						h.culprit = peerCulprit(r.cat, l.text)
					}
				}
				out = append(out, h)
			}
		}
	}
	return out
}

func round2(f float64) float64 {
	if f < 0 {
		return -round2(-f)
	}
	return float64(int64(f*100+0.5)) / 100
}

func lowerHasAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
