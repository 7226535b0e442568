package analyzer

import (
	"fmt"
	"regexp"
	"strings"
)

// line is one unit of input text the agents read: the title, the description,
// one line of a context entry, or a rendered tag/metadata field.
type line struct {
	text  string // original text, a substring of the input
	lower string
	src   string // "title", "description", "context", "field"
	ref   string // citation to use instead of a quote (tags.x, metadata.x)
	entry int    // context entry index; -1 for alert fields
	idx   int    // line index within the entry
	spans []span // clause boundaries
	// afterFix marks a context line that reports a mitigation or a recovery
	// at a clock time (see corpus.afterMitigation).
	afterFix bool
	// recorded marks the rendering of a recorded change (Input.Changes): the
	// structured change reasoning reads it, the text rules do not, since a
	// change's description says what was changed, not what went wrong.
	recorded bool
}

type span struct{ s, e int }

// corpus is the pre-split input shared by all rules of one agent run.
type corpus struct {
	in      Input
	lines   []line
	entries [][]int // line indices per context entry
	// mech caches the mechanisms the input shows (corpus.mechanisms).
	mech *[]hit
}

func buildCorpus(in Input) *corpus {
	c := &corpus{in: in}
	add := func(text, src, ref string, entry, idx int) int {
		l := line{text: text, lower: strings.ToLower(text), src: src, ref: ref, entry: entry, idx: idx}
		l.spans = clauses(text)
		l.afterFix = src == "context" && clockRe.MatchString(text) && (mitigationRe.MatchString(text) || recoveryRe.MatchString(text))
		c.lines = append(c.lines, l)
		return len(c.lines) - 1
	}
	if strings.TrimSpace(in.Title) != "" {
		add(in.Title, "title", "", -1, 0)
	}
	if strings.TrimSpace(in.Description) != "" {
		for i, t := range strings.Split(in.Description, "\n") {
			if strings.TrimSpace(t) != "" {
				add(t, "description", "", -1, i)
			}
		}
	}
	// Gathered excerpts are read exactly like pasted entries, numbered after
	// them, so every rule that reasons within an entry applies to a query's
	// answer too.
	texts := make([]string, 0, len(in.Context)+len(in.Gathered))
	texts = append(texts, in.Context...)
	recorded := make([]bool, len(texts), cap(texts))
	raw := newRawBudget()
	for _, g := range in.Gathered {
		if g.Measured {
			continue // judged by its readings (readings.go)
		}
		if g.Source.Kind == SourceChange {
			// One short line per change, bounded where changes are read: the
			// change reasoning needs every one, problem words or not.
			texts = append(texts, RunePrefix(g.Text, maxChangeLine))
			recorded = append(recorded, true)
			continue
		}
		texts = append(texts, raw.take(g.Text))
		recorded = append(recorded, false)
	}
	c.entries = make([][]int, len(texts))
	for e, entry := range texts {
		for i, t := range strings.Split(entry, "\n") {
			if strings.TrimSpace(t) == "" {
				continue
			}
			li := add(t, "context", "", e, i)
			c.lines[li].recorded = recorded[e]
			c.entries[e] = append(c.entries[e], li)
		}
	}
	for _, k := range sortedKeys(in.Tags) {
		add(k+": "+in.Tags[k], "field", "tags."+k, -1, 0)
	}
	for _, k := range sortedKeys(in.Metadata) {
		switch v := in.Metadata[k].(type) {
		case string:
			add(k+": "+v, "field", "metadata."+k, -1, 0)
		case float64, int, bool:
			add(fmt.Sprintf("%s: %v", k, v), "field", "metadata."+k, -1, 0)
		}
	}
	return c
}

// clauseSep splits English sentences and table rows (psql, kubectl, Markdown "|")
// into clauses.
var clauseSep = regexp.MustCompile(`; |;; |, | \| |\. |\? `)

var (
	// mitigationRe recognizes a line that reports an action taken during the
	// incident ("16:18 killed pid 28811; lock waits 0"); clockRe pins it in time.
	// The verbs are those of the tools' own commands and audit logs: kill,
	// kubectl rollout restart/undo/scale/drain/delete, git revert, Redis
	// FLUSHALL, RDS failover, PostgreSQL pg_terminate_backend.
	mitigationRe = regexp.MustCompile(`(?i)\b(terminat\w*|kill(ed|ing)?|restart(ed|ing)?|revert\w*|rolled back|roll(ing)? back|scaled|switched|deleted|removed|disabled|block(ed|ing)|drained|failed over|flushed|mitigat\w*|pg_terminate_backend|added)\b`)
	clockRe      = regexp.MustCompile(`\b\d{1,2}:\d{2}\b`)

	// adviceRe is a numbered piece of advice, as libraries print under an
	// error (Elixir DBConnection: "2. Tracking down slow queries and making
	// sure they are running fast enough"): it names causes to check, not
	// causes seen.
	adviceRe = regexp.MustCompile(`(?i)^\s*\d+[.)]\s+(ensur|track|increas|allow|check|consider|mak|try|verif|reduc|add)\w*\b`)
	// speculativeRe marks a guess ("maybe GC?", "could it be the cache"):
	// English hedges, not any system's words.
	speculativeRe = regexp.MustCompile(`(?i)\b(maybe|perhaps|might be|could (it )?be|i guess|i think|wondering|wonder if|is it|looks like|probably|can't be|cannot be|must be)\b`)
	// dismissRe marks a signal someone explained away in the same sentence,
	// in plain English.
	dismissRe   = regexp.MustCompile(`(?i)\b(not ours|not our (service|problem|consumer|app)|(other|another|different) team'?s|unrelated|red herring|not related|not the cause|nothing to do with|ruled out)\b`)
	sentenceEnd = regexp.MustCompile(`[.?!](\s|$)`)
)

// speculationWeight scales a signal that is only guessed at.
const speculationWeight = 0.4

// speculative reports whether the clause at pos is a question or a guess.
func (l *line) speculative(pos int) bool {
	sp := l.clauseAt(pos)
	clause := strings.TrimSpace(l.text[sp.s:sp.e])
	return strings.HasSuffix(clause, "?") || (sp.e < len(l.text) && l.text[sp.e] == '?') || speculativeRe.MatchString(clause)
}

// dismissed reports whether the sentence holding pos explains the signal away
// ("kafka lag is the risk team's own consumer, not ours").
func (l *line) dismissed(pos int) bool {
	start, end := 0, len(l.text)
	for _, m := range sentenceEnd.FindAllStringIndex(l.text, -1) {
		if m[1] <= pos {
			start = m[1]
		} else {
			end = m[1]
			break
		}
	}
	return dismissRe.MatchString(l.text[start:end])
}

// afterMitigation reports whether citation comes from a line that reports a
// mitigation: readings there ("lock waits 0", "CPU 45% by 11:36") describe the
// system once fixed, so they cannot rule a cause out.
func (c *corpus) afterMitigation(citation string) bool {
	for i := range c.lines {
		if c.lines[i].afterFix && strings.Contains(c.lines[i].text, citation) {
			return true
		}
	}
	return false
}

// clauses splits a line into clause spans so negations and citations stay
// local to the statement they belong to.
func clauses(t string) []span {
	var out []span
	start := 0
	for _, m := range clauseSep.FindAllStringIndex(t, -1) {
		// Keep "1,200" and "v2.1" intact: separators always contain a space.
		out = append(out, span{start, m[0]})
		start = m[1]
	}
	out = append(out, span{start, len(t)})
	return out
}

// clauseAt returns the clause span that contains byte offset pos. A position
// on a separator belongs to the clause after it, which then starts at pos, so
// the span always holds pos.
func (l *line) clauseAt(pos int) span {
	for _, sp := range l.spans {
		if pos < sp.e {
			return span{min(sp.s, pos), sp.e}
		}
	}
	if len(l.spans) > 0 {
		last := l.spans[len(l.spans)-1]
		return span{min(last.s, pos), max(last.e, pos)}
	}
	return span{0, len(l.text)}
}

// cite returns a citation for the text around [s,e): the enclosing clause when
// it is informative, else a window of the line; field lines cite the field.
func (l *line) cite(s, e int) string {
	if l.ref != "" {
		return l.ref
	}
	sp := l.clauseAt(s)
	if e > sp.e {
		sp.e = min(e, len(l.text))
	}
	t := strings.TrimSpace(l.text[sp.s:sp.e])
	if len(t) < 24 {
		sp = span{0, len(l.text)}
	}
	if sp.e-sp.s > 220 {
		a := max(sp.s, s-80)
		b := min(sp.e, max(e, s)+140)
		sp = span{a, b}
	}
	return trimCitation(l.text[sp.s:sp.e])
}

// trimCitation trims whitespace, trailing separators and partial UTF-8 runes.
func trimCitation(t string) string {
	for len(t) > 0 && (t[0]&0xC0) == 0x80 {
		t = t[1:]
	}
	for len(t) > 0 && (t[len(t)-1]&0x80) != 0 && !validTail(t) {
		t = t[:len(t)-1]
	}
	return strings.Trim(strings.TrimSpace(t), " ,;|")
}

func validTail(t string) bool {
	return strings.ToValidUTF8(t, "\x00") == t
}

// English negation ("no lock waits", "0 restarts"), words that call a reading
// normal, words of change, and a zero reading after a metric's name
// ("evictions: 0", "n/a").
var (
	negBefore = regexp.MustCompile(`(?i)(\b(no|not|without|zero|none|never|nothing|neither|nor|isn't|aren't|wasn't|weren't|didn't|doesn't|don't|hasn't|haven't)\b|(^|[^\w.,])0 +([a-z]|$))`)
	normalRe  = regexp.MustCompile(`(?i)\b(unchanged|normal|healthy|flat|unremarkable|stable|steady|operational|nominal|as usual|fine)\b`)
	changeRe  = regexp.MustCompile(`(?i)(->|→|=>|\bjump|\bspike|\bsurge|\brose\b|\bincreas|\bclimb|\bgrew\b|\bgrow|\bdrop|\bfell\b|\bdoubl|\btripl|\bfrom \S+ to\b)`)
	zeroAfter = regexp.MustCompile(`(?i)^[\s:=]*(0|0\.0+|none|n/a)\b`)
)

// errorNo is the word after "no" in error messages that say something is
// missing: PgBouncer "no more connections allowed", Go "no such host", Linux
// "No route to host" and "No space left on device", Envoy "no healthy
// upstream", dig "no servers could be reached": there "no" states the failure
// rather than denying it.
var errorNo = regexp.MustCompile(`(?i)^\s+(more|such|route|space|healthy|free|available|servers|left)\b`)

// negatedBy reports whether text before a match negates it, ignoring the "no"
// of error messages.
func negatedBy(pre string) bool {
	for _, m := range negBefore.FindAllStringIndex(pre, -1) {
		if strings.EqualFold(strings.TrimSpace(pre[m[0]:m[1]]), "no") && errorNo.MatchString(pre[m[1]:]) {
			continue
		}
		return true
	}
	return false
}

// negated reports whether the match [s,e) in l is negated or described as
// normal within its clause ("no lock waits", "evictions: 0", "CPU 30%, flat").
func (l *line) negated(s, e int) bool {
	sp := l.clauseAt(s)
	clause := l.text[sp.s:sp.e]
	pre := l.text[max(sp.s, s-40):s]
	if negatedBy(pre) {
		return true
	}
	if changeRe.MatchString(clause) {
		return false
	}
	if e <= sp.e && zeroAfter.MatchString(l.text[e:sp.e]) {
		return true
	}
	return normalRe.MatchString(clause)
}
