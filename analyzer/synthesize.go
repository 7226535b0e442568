package analyzer

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Result is the synthesized investigation answer: the fields the API's
// investigation result carries besides its ids and times.
type Result struct {
	Category string `json:"category"`
	// Confidence is 0..1, rounded to 2 decimals.
	Confidence float64 `json:"confidence"`
	// RootCause names the mechanism and quotes the decisive evidence.
	RootCause string `json:"rootCause"`
	// Evidence holds, per agent with valid findings (in role order), one entry
	// per place the agent read them (the alert, pasted context, each data
	// source query, each recorded change), strongest first.
	Evidence []Evidence `json:"evidence"`
	// Hypotheses are sorted by score desc, then category.
	Hypotheses []Hypothesis `json:"hypotheses"`
	// RecommendedActions are ordered and specific to the category and service.
	RecommendedActions []string `json:"recommendedActions"`
	// Dropped counts findings dropped for an invalid citation, category, role,
	// stance, strength or culprit.
	Dropped int `json:"dropped"`
	// Culprit is the one object whose fault started the chain; nil only with
	// CategoryUnknown.
	Culprit *Culprit `json:"culprit"`
	// Mechanism is how the category's fault came about (Mechanisms), or
	// MechanismOther; empty with CategoryUnknown.
	Mechanism string `json:"mechanism,omitempty"`
	// Candidates are up to three ranked answers, the first the answer itself.
	Candidates []Candidate `json:"candidates"`
}

// Candidate is one ranked answer: an object, what is wrong with it, and how
// sure the evidence makes it.
type Candidate struct {
	Culprit    *Culprit `json:"culprit"`
	Category   string   `json:"category"`
	Mechanism  string   `json:"mechanism,omitempty"`
	Confidence float64  `json:"confidence"`
}

// Evidence is what the agents read in one place; Content quotes or points at
// the input, and Source says where that input came from. A finding two agents
// made is one entry: AgentRole is the agent whose finding weighed most, and
// AgentRoles every agent that made one of its findings.
type Evidence struct {
	AgentRole  string   `json:"agentRole"`
	AgentRoles []string `json:"agentRoles,omitempty"`
	Content    string   `json:"content"`
	Source     *Source  `json:"source,omitempty"`
}

// Hypothesis is one considered category, kept so users see what was ruled out and why.
type Hypothesis struct {
	Category string  `json:"category"`
	Summary  string  `json:"summary"`
	Score    float64 `json:"score"`
	RuledOut bool    `json:"ruledOut"`
}

// Thresholds of the decision rule; exported behaviour is documented on Synthesize.
const (
	decisiveStrength = 0.7  // a finding this strong can carry a confident answer
	minWinnerScore   = 0.75 // below this aggregated score the answer is unknown
	minWinnerSupport = 0.5  // the winner needs at least one finding this strong
	refuteWeight     = 0.8
	// corroborationWeight is what each further distinct quote supporting a
	// category adds, up to four of them.
	corroborationWeight = 0.08
)

type catScore struct {
	cat        string
	sup, ref   map[string]float64 // per agent: max strength
	supF       []Finding          // all supporting findings
	refF       []Finding          // all refuting findings, weighed by weighRefutations
	nSup, nRef int
	best       Finding // strongest supporting finding
	bestRef    Finding
	raw        float64
}

// Synthesize combines the reports of the agents that finished (failed agents
// are simply absent) into the result. Whichever path produced the findings:
// findings with an invalid citation, unknown category, role or stance, or a
// strength outside 0..1 are dropped and counted. Each category is scored as the
// sum over agents of the agent's strongest supporting finding, plus a small
// bonus for corroborating findings, minus the agents' strongest refutations.
// Confidence grows with the number of independent agents supporting the
// winner, its margin over the runner-up and the number of alternatives ruled
// out; it is capped at 0.5 when no supporting finding is decisive (strength ≥
// 0.7). When the winner is weak the answer is "unknown" with confidence ≤ 0.3.
// Losing and refuted categories are kept as hypotheses (RuledOut when refuted
// or clearly beaten).
func Synthesize(in Input, reports []AgentReport) Result {
	res := Result{Evidence: []Evidence{}, Hypotheses: []Hypothesis{}, RecommendedActions: []string{}, Candidates: []Candidate{}}
	byRole, scores := tally(in, reports, &res)
	ranked := rankCategories(in, byRole, scores)
	win := winner(ranked)
	nRuled := 0
	for _, cs := range ranked {
		out := ruledOut(cs, win)
		if out {
			nRuled++
		}
		res.Hypotheses = append(res.Hypotheses, Hypothesis{
			Category: cs.cat,
			Summary:  hypothesisSummary(cs),
			Score:    round2(1 - math.Exp(-math.Max(cs.raw, 0)/1.5)),
			RuledOut: out,
		})
	}
	if win == nil {
		answerUnknown(in, ranked, nRuled, &res)
	} else {
		answerWinner(in, ranked, win, nRuled, &res)
	}
	res.Candidates = candidates(in, ranked, win, res)
	sort.SliceStable(res.Hypotheses, func(i, j int) bool {
		a, b := res.Hypotheses[i], res.Hypotheses[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Category < b.Category
	})
	res.Evidence = evidence(in, byRole, res.Category)
	res.RecommendedActions = actions(res.Category, in.Service, res.Culprit)
	return res
}

// tally admits the findings the evidence rules allow (counting the rest in
// res.Dropped), gives a change-cited finding its change as culprit, and sums
// each category's support and refutation by agent.
func tally(in Input, reports []AgentReport, res *Result) (map[string][]Finding, map[string]*catScore) {
	byRole := map[string][]Finding{}
	scores := map[string]*catScore{}
	for _, rep := range reports {
		for _, f := range rep.Findings {
			if f.AgentRole == "" {
				f.AgentRole = rep.AgentRole
			}
			if !admissible(in, rep, f) {
				res.Dropped++
				continue
			}
			if f.Mechanism != "" && !ValidMechanism(f.Category, f.Mechanism) {
				f.Mechanism = MechanismOther
			}
			if f.Culprit == nil && f.Stance == StanceSupports {
				if src := SourceOf(in, f.Citation); src != nil && src.Kind == SourceChange && src.ChangeID != "" {
					f.Culprit = &Culprit{Kind: KindChange, Name: src.ChangeID}
				}
			}
			byRole[f.AgentRole] = append(byRole[f.AgentRole], f)
			if f.Category == "" || f.Category == CategoryUnknown {
				continue
			}
			cs := scores[f.Category]
			if cs == nil {
				cs = &catScore{cat: f.Category, sup: map[string]float64{}, ref: map[string]float64{}}
				scores[f.Category] = cs
			}
			if f.Stance == StanceSupports {
				cs.nSup++
				cs.supF = append(cs.supF, f)
				cs.sup[f.AgentRole] = math.Max(cs.sup[f.AgentRole], f.Strength)
				if better(f, cs.best) {
					cs.best = f
				}
			} else {
				cs.refF = append(cs.refF, f)
			}
		}
	}
	return byRole, scores
}

// admissible is the evidence rule every finding passes, from the offline
// analyzer or the LLM alike: its own agent, a known category and stance, a
// strength in [0, 1], a citation of the input and a culprit the input names.
func admissible(in Input, rep AgentReport, f Finding) bool {
	return ValidRole(f.AgentRole) && (rep.AgentRole == "" || rep.AgentRole == f.AgentRole) &&
		(f.Category == "" || ValidCategory(f.Category)) &&
		(f.Stance == StanceSupports || f.Stance == StanceRefutes) &&
		f.Strength >= 0 && f.Strength <= 1 && !math.IsNaN(f.Strength) &&
		CitationValid(in, f.Citation) && culpritNamed(in, f.Culprit)
}

// rankCategories scores each category (independent support, corroboration by more
// quotes, minus refutation), promotes the triggers of a chain over their
// consequences, and orders the categories best first.
func rankCategories(in Input, byRole map[string][]Finding, scores map[string]*catScore) []*catScore {
	for _, cs := range scores {
		cs.weighRefutations()
	}
	ranked := make([]*catScore, 0, len(scores))
	for _, cs := range scores {
		ref := 0.0
		for _, v := range cs.ref {
			ref += v
		}
		// Corroboration counts distinct quotes beyond the one per agent that
		// independentSupport already weighed: more lines saying the same
		// thing, not the same line read by more agents.
		extra := distinctCitations(cs.supF) - len(cs.sup)
		cs.raw = independentSupport(in, cs.supF)
		cs.raw += corroborationWeight*math.Min(float64(max(extra, 0)), 4) - refuteWeight*math.Min(ref, 1.5)
		ranked = append(ranked, cs)
	}
	byScore := func(i, j int) bool {
		if ranked[i].raw != ranked[j].raw {
			return ranked[i].raw > ranked[j].raw
		}
		return ranked[i].cat < ranked[j].cat
	}
	sort.Slice(ranked, byScore)
	promoteTriggers(byRole, scores)
	sort.SliceStable(ranked, byScore)
	return ranked
}

// winner is the best-ranked category with a decisive enough finding, if its
// score clears the bar; nil leaves the answer unknown.
func winner(ranked []*catScore) *catScore {
	for _, cs := range ranked {
		if cs.best.Strength >= minWinnerSupport {
			if cs.raw >= minWinnerScore {
				return cs
			}
			return nil
		}
	}
	return nil
}

// ruledOut reports a category the evidence argues against, or one far
// behind the winner.
func ruledOut(cs, win *catScore) bool {
	if cs == win {
		return false
	}
	if cs.nRef > 0 && cs.raw <= 0.3 {
		return true
	}
	return win != nil && cs.raw < 0.5*win.raw
}

// answerUnknown is the honest answer when no category won: a low
// confidence, a little higher for every category the evidence ruled out.
func answerUnknown(in Input, ranked []*catScore, nRuled int, res *Result) {
	res.Category = CategoryUnknown
	conf := 0.15 + 0.02*math.Min(float64(nRuled), 5)
	if len(ranked) > 0 && ranked[0].raw > 0 {
		conf -= 0.05
	}
	res.Confidence = round2(conf)
	res.RootCause = unknownNarrative(in, ranked)
	res.Hypotheses = append(res.Hypotheses, Hypothesis{
		Category: CategoryUnknown,
		Summary:  "No category is supported strongly enough by the available evidence.",
		Score:    round2(res.Confidence),
	})
}

// answerWinner is the answer of the winning category: a confidence from the
// agents that support it, its margin over the runner-up and what was ruled
// out, then its culprit, mechanism and narrative.
func answerWinner(in Input, ranked []*catScore, win *catScore, nRuled int, res *Result) {
	res.Category = win.cat
	runner := 0.0
	for _, cs := range ranked {
		if cs != win {
			runner = math.Max(runner, cs.raw)
		}
	}
	margin := math.Max(0, math.Min(1, (win.raw-runner)/win.raw))
	nAg := 0
	for _, v := range win.sup {
		if v >= 0.3 {
			nAg++
		}
	}
	conf := 0.2 + 0.1*math.Min(float64(nAg), 4) + 0.3*margin + 0.02*math.Min(float64(nRuled), 5)
	if len(win.ref) > 0 {
		conf -= 0.1
	}
	if win.best.Strength < decisiveStrength {
		conf = math.Min(conf, 0.5)
	}
	res.Confidence = round2(math.Max(0.05, math.Min(0.95, conf)))
	res.Culprit, res.Mechanism = blame(in, win)
	res.RootCause = rootCauseNarrative(in, win, nAg, res.Culprit, res.Mechanism)
}

// triggerStrength is how strong a finding for a change category must be for
// the change to take over the score of the mechanism it set off.
const triggerStrength = 0.8

// promoteTriggers applies the causal-chain rule: when one agent's finding
// supports a change (bad_deployment, config_change) decisively and the same
// agent, on the same quote, argues that another category is only what the
// change set off, the evidence of that mechanism is evidence of the change.
// The change then scores at least what the mechanism scored before that
// refutation, plus a margin: the throttling a cut limit causes must not
// outvote the cut.
func promoteTriggers(byRole map[string][]Finding, scores map[string]*catScore) {
	for _, fs := range byRole {
		for _, sup := range fs {
			if sup.Stance != StanceSupports || sup.Strength < triggerStrength ||
				(sup.Category != CategoryBadDeployment && sup.Category != CategoryConfigChange) {
				continue
			}
			t := scores[sup.Category]
			key := squash(sup.Citation)
			for _, r := range fs {
				m := scores[r.Category]
				if r.Stance != StanceRefutes || m == nil || m == t || squash(r.Citation) != key {
					continue
				}
				before := m.raw + refuteWeight*r.Strength
				t.raw = math.Max(t.raw, before+0.1)
			}
		}
	}
}

// independentSupport sums, over agents, each agent's strongest supporting
// finding; a finding that quotes the same text another agent already used
// counts half, since two agents reading one line are not independent evidence,
// and not at all when that text is the alert's own title or description: every
// agent reads the alert, and its wording states the symptom, not a cause.
func independentSupport(in Input, fs []Finding) float64 {
	sorted := append([]Finding(nil), fs...)
	sort.SliceStable(sorted, func(i, j int) bool { return better(sorted[i], sorted[j]) })
	usedRole := map[string]bool{}
	usedCite := map[string]bool{}
	total := 0.0
	for _, f := range sorted {
		if usedRole[f.AgentRole] {
			continue
		}
		usedRole[f.AgentRole] = true
		k := squash(strings.ToLower(f.Citation))
		switch {
		case usedCite[k] && alertOnly(in, f.Citation):
		case usedCite[k]:
			total += f.Strength / 2
		default:
			total += f.Strength
		}
		usedCite[k] = true
	}
	return total
}

// distinctCitations counts the different quotes among fs.
func distinctCitations(fs []Finding) int {
	seen := map[string]bool{}
	for _, f := range fs {
		seen[squash(strings.ToLower(f.Citation))] = true
	}
	return len(seen)
}

// alertOnly reports whether citation quotes the alert's title or description
// and nothing of the context.
func alertOnly(in Input, citation string) bool {
	q := squash(citation)
	if q == "" || !(strings.Contains(squash(in.Title), q) || strings.Contains(squash(in.Description), q)) {
		return false
	}
	for _, e := range in.Context {
		if strings.Contains(squash(e), q) {
			return false
		}
	}
	for _, g := range in.Gathered {
		if strings.Contains(squash(g.Text), q) {
			return false
		}
	}
	return true
}

func better(f, cur Finding) bool {
	if cur.Citation == "" {
		return true
	}
	if f.Strength != cur.Strength {
		return f.Strength > cur.Strength
	}
	if f.AgentRole != cur.AgentRole {
		return f.AgentRole < cur.AgentRole
	}
	return f.Citation < cur.Citation
}

func hypothesisSummary(cs *catScore) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d supporting finding(s) from %d agent(s), %d refuting.", label(cs.cat), cs.nSup, len(cs.sup), cs.nRef)
	if cs.best.Citation != "" {
		fmt.Fprintf(&b, " Strongest support: %q.", clip(cs.best.Citation, 160))
	}
	if cs.bestRef.Citation != "" {
		fmt.Fprintf(&b, " Against: %q.", clip(cs.bestRef.Citation, 160))
	}
	return b.String()
}

func rootCauseNarrative(in Input, win *catScore, nAg int, culprit *Culprit, mech string) string {
	head := label(win.cat)
	if mech != "" && mech != MechanismOther {
		head += " (" + strings.ReplaceAll(mech, "_", " ") + ")"
	}
	switch {
	case culprit != nil:
		head = culprit.String() + ": " + head
	case in.Service != "":
		head = in.Service + ": " + head
	case head != "":
		head = strings.ToUpper(head[:1]) + head[1:]
	}
	roles := sortedKeys(win.sup)
	s := fmt.Sprintf("%s. %s Decisive evidence (%s agent): %q.", head, mechanism[win.cat], win.best.AgentRole, clip(win.best.Citation, 240))
	if nAg > 1 {
		s += fmt.Sprintf(" Corroborated by %d agents (%s).", nAg, strings.Join(roles, ", "))
	}
	if win.bestRef.Citation != "" {
		s += fmt.Sprintf(" Conflicting signal: %q.", clip(win.bestRef.Citation, 160))
	}
	return s
}

func unknownNarrative(in Input, ranked []*catScore) string {
	s := "The evidence does not support a specific root cause"
	if in.Service != "" {
		s += " for " + in.Service
	}
	s += "."
	var weak, out []string
	for _, cs := range ranked {
		if cs.raw > 0 && len(weak) < 3 {
			weak = append(weak, cs.cat)
		}
		if cs.raw <= 0 && len(out) < 5 {
			out = append(out, cs.cat)
		}
	}
	if len(weak) > 0 {
		s += " Weak, inconclusive signals for: " + strings.Join(weak, ", ") + "."
	}
	if len(out) > 0 {
		s += " Explicitly ruled out by the input: " + strings.Join(out, ", ") + "."
	}
	return s + " Gather more data (logs and metrics around the onset) before acting."
}

// Limits on what evidence repeats of the findings: enough to check the answer,
// short enough to read.
const (
	findingsPerSource = 3
	maxEvidence       = 16
)

// evidence turns the agents' valid findings into entries, one per place they
// were read, each finding once however many agents made it. Entries come in
// the order of how much they decided the answer: the strongest support of
// the winning category first, then the rest by strength.
func evidence(in Input, byRole map[string][]Finding, winner string) []Evidence {
	type merged struct {
		f     Finding
		roles []string
	}
	var fs []*merged
	seen := map[string]*merged{}
	for _, role := range Roles {
		for _, f := range byRole[role] {
			k := f.Stance + "\x00" + f.Category + "\x00" + strings.Join(strings.Fields(f.Summary), " ") + "\x00" + strings.Join(strings.Fields(f.Citation), " ")
			if m := seen[k]; m != nil {
				switch {
				case f.Strength > m.f.Strength:
					// The agent whose finding weighs most leads it.
					m.f.Strength = f.Strength
					m.roles = append([]string{role}, slices.DeleteFunc(m.roles, func(r string) bool { return r == role })...)
				case !slices.Contains(m.roles, role):
					m.roles = append(m.roles, role)
				}
				continue
			}
			m := &merged{f: f, roles: []string{role}}
			seen[k] = m
			fs = append(fs, m)
		}
	}
	weight := func(f Finding) float64 {
		if f.Category == winner && f.Stance == StanceSupports {
			return 2 + f.Strength
		}
		if f.Category == winner {
			return 1 + f.Strength
		}
		return f.Strength
	}
	sort.SliceStable(fs, func(i, j int) bool { return weight(fs[i].f) > weight(fs[j].f) })
	type group struct {
		src   *Source
		roles []string
		parts []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, m := range fs {
		// Entries are per leading agent and place, as the agents read them.
		src := SourceOf(in, m.f.Citation)
		key := m.roles[0] + "\x00" + src.key()
		g := byKey[key]
		if g == nil {
			if len(groups) == maxEvidence {
				continue
			}
			g = &group{src: src}
			byKey[key] = g
			groups = append(groups, g)
		}
		if len(g.parts) == findingsPerSource {
			continue
		}
		for _, r := range m.roles {
			if !slices.Contains(g.roles, r) {
				g.roles = append(g.roles, r)
			}
		}
		tag := m.f.Stance
		if m.f.Category != "" {
			tag += " " + m.f.Category
		}
		g.parts = append(g.parts, fmt.Sprintf("[%s] %s Evidence: %q", tag, m.f.Summary, clip(m.f.Citation, 200)))
	}
	out := make([]Evidence, 0, len(groups))
	for _, g := range groups {
		e := Evidence{AgentRole: g.roles[0], Content: strings.Join(g.parts, " "), Source: g.src}
		if len(g.roles) > 1 {
			e.AgentRoles = g.roles
		}
		out = append(out, e)
	}
	return out
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// culpritScore is one object's case for being the culprit of a category:
// the sum over agents of each agent's strongest finding blaming it, and
// the mechanism of the strongest.
type culpritScore struct {
	culprit *Culprit
	mech    string
	score   float64
	best    float64
}

// blamed ranks the objects the supporting findings of one category blame.
func blamed(fs []Finding) []culpritScore {
	byKey := map[string]*culpritScore{}
	perAgent := map[string]map[string]float64{}
	var order []string
	for _, f := range fs {
		if f.Culprit == nil {
			continue
		}
		k := f.Culprit.String()
		cs := byKey[k]
		if cs == nil {
			cs = &culpritScore{culprit: f.Culprit}
			byKey[k] = cs
			perAgent[k] = map[string]float64{}
			order = append(order, k)
		}
		if f.Strength > cs.best || (f.Strength == cs.best && cs.mech == "" && f.Mechanism != "") {
			cs.best, cs.mech = f.Strength, f.Mechanism
		}
		perAgent[k][f.AgentRole] = math.Max(perAgent[k][f.AgentRole], f.Strength)
	}
	out := make([]culpritScore, 0, len(order))
	for _, k := range order {
		cs := byKey[k]
		for _, v := range perAgent[k] {
			cs.score += v
		}
		out = append(out, *cs)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].best != out[j].best {
			return out[i].best > out[j].best
		}
		return out[i].score > out[j].score
	})
	return out
}

// blame names the winner's culprit and mechanism: the object its strongest
// findings blame, else what the alert names.
func blame(in Input, win *catScore) (*Culprit, string) {
	mech := ""
	var culprit *Culprit
	if b := blamed(win.supF); len(b) > 0 {
		culprit, mech = b[0].culprit, b[0].mech
	} else {
		culprit = fallbackCulprit(in, win.cat)
	}
	if mech == "" || !ValidMechanism(win.cat, mech) {
		mech = mechanismOfWords(win.cat, win.best.Citation)
	}
	return culprit, mech
}

// mechanismOfWords tells the mechanism from the words of the decisive
// evidence when no finding named one: the kernel's and the runtimes' own
// ("OOMKilled", "out of memory", CFS "throttled"), else other.
func mechanismOfWords(category, citation string) string {
	c := strings.ToLower(citation)
	switch category {
	case CategoryMemoryExhaustion:
		switch {
		case strings.Contains(c, "oom") || strings.Contains(c, "out of memory") || strings.Contains(c, "exit code 137"):
			return "oom_killed"
		case strings.Contains(c, "leak"):
			return "memory_leak"
		}
	case CategoryCPUSaturation:
		if strings.Contains(c, "throttl") {
			return "cpu_throttled"
		}
		return "cpu_overload"
	}
	return MechanismOther
}

// maxCandidates bounds the ranked answers.
const maxCandidates = 3

// candidates ranks up to three answers: the answer itself, then the other
// objects its category's findings blame and the objects of the categories
// that came next, each with a confidence scaled from the answer's by how
// strongly its evidence stands against the answer's.
func candidates(in Input, ranked []*catScore, win *catScore, res Result) []Candidate {
	out := []Candidate{{Culprit: res.Culprit, Category: res.Category, Mechanism: res.Mechanism, Confidence: res.Confidence}}
	top := 0.0
	if win != nil {
		top = math.Max(win.raw, 0.01)
	}
	for _, cs := range ranked {
		if len(out) == maxCandidates {
			break
		}
		if cs.raw <= 0 || cs.best.Strength < minWinnerSupport/2 {
			continue
		}
		for _, b := range blamed(cs.supF) {
			if len(out) == maxCandidates {
				break
			}
			if cs == win && res.Culprit != nil && b.culprit.String() == res.Culprit.String() {
				continue
			}
			mech := b.mech
			if mech == "" || !ValidMechanism(cs.cat, mech) {
				mech = MechanismOther
			}
			conf := 0.1 * b.best
			if win != nil {
				conf = math.Min(res.Confidence*0.9, res.Confidence*math.Min(cs.raw, b.score)/top)
			}
			out = append(out, Candidate{Culprit: b.culprit, Category: cs.cat, Mechanism: mech, Confidence: round2(math.Max(conf, 0.01))})
		}
	}
	return out
}

// weighRefutations counts the refutations of a category, except those that
// argue about an object no supporting finding of the category blames: that
// a rollout of one Deployment was not the trigger says nothing of another's.
func (cs *catScore) weighRefutations() {
	blamed := map[string]bool{}
	for _, f := range cs.supF {
		if f.Culprit != nil {
			blamed[f.Culprit.String()] = true
		}
	}
	for _, f := range cs.refF {
		if len(blamed) > 0 && f.Culprit != nil && !blamed[f.Culprit.String()] {
			continue
		}
		cs.nRef++
		cs.ref[f.AgentRole] = math.Max(cs.ref[f.AgentRole], f.Strength)
		if better(f, cs.bestRef) {
			cs.bestRef = f
		}
	}
}
