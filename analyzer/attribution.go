package analyzer

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Change attribution: the deployments agent's reading of the changes the
// tenant recorded (Input.Changes). Each is weighed as the trigger by the
// questions an SRE asks on the incident call:
//   - timing: did it land shortly before the symptoms began (not long
//     before, not after)?
//   - scope: is it a change to the failing service, and do the failing lines
//     name what it changed (its version, the setting or resource it names)?
//   - experiment: did a rollback or revert of it end the symptoms, or did the
//     symptoms carry on?
//
// A change that passes these tests is the initiating cause even when the
// alert shows only the mechanism it set off (throttling after a limit cut,
// pool exhaustion after a release): the agent then says so against that
// mechanism. A change to another service, or one the failing lines never
// name, is left alone or argued against.

// Windows of the timing test, in minutes from a change's start to the onset.
const (
	triggerWindow   = 30
	suspectWindow   = 120
	staleAfter      = 360
	afterOnsetSlack = 2
)

// Strengths of the attribution findings.
const (
	strTimelyOnly    = 0.45
	strTimelyLoose   = 0.3
	strScopedWord    = 0.65
	strScopedIdent   = 0.8
	strVersionFails  = 0.9
	strRollbackFixed = 0.9
	strRollbackNoFix = 0.7
	strStale         = 0.4
	strAfterOnset    = 0.5
	strOtherService  = 0.45
	// strMechanism is how strongly a confirmed trigger argues against the
	// mechanism it set off being the root cause.
	strMechanism = 0.6
	// triggerConfirmed is the strength from which a change counts as the
	// initiating cause.
	triggerConfirmed = 0.8
)

// kindCategory is the category a change of each kind would be the root
// cause under; rollbacks are judged by what they undo.
func kindCategory(kind string) string {
	switch kind {
	case "config", "feature_flag", "infrastructure":
		return CategoryConfigChange
	case "deployment", "migration":
		return CategoryBadDeployment
	}
	return ""
}

// attributed is one recorded change as the agent weighs it.
type attributed struct {
	ch     Change
	li     int // its rendered line in the corpus
	cat    string
	own    bool
	gap    int // minutes from its start to the onset
	timed  bool
	revert bool
}

func attributionHits(c *corpus) []hit {
	if len(c.in.Changes) == 0 {
		return nil
	}
	on, haveOnset := onset(c, make([]bool, len(c.lines)))
	var all []attributed
	for _, ch := range c.in.Changes {
		li := c.recordedLine(ch.Line())
		if li < 0 {
			continue
		}
		a := attributed{ch: ch, li: li, cat: kindCategory(ch.Kind), own: sameService(ch.Service, c.in),
			revert: ch.Kind == "rollback" || strings.TrimSpace(ch.RevertOf) != ""}
		if haveOnset && !ch.StartedAt.IsZero() {
			a.gap, a.timed = minutesBetween(stampOf(ch.StartedAt), on)
		}
		all = append(all, a)
	}
	var out []hit
	best := map[string]float64{} // strongest support per category from a change of the failing service
	for i := range all {
		a := &all[i]
		if a.revert || a.cat == "" {
			continue
		}
		if h, ok := c.weigh(a); ok {
			out = append(out, h)
			if h.stance == StanceSupports && a.own {
				best[h.cat] = max(best[h.cat], h.str)
			}
		}
	}
	out = append(out, c.rollbackHits(all)...)
	for _, h := range out {
		if h.stance == StanceSupports {
			best[h.cat] = max(best[h.cat], h.str)
		}
	}
	// A change to another service is named and set aside, unless a change
	// of the failing service already argues for the same category.
	for i := range all {
		a := &all[i]
		if a.own || a.revert || a.cat == "" || best[a.cat] > 0 || !a.timed || a.gap < -afterOnsetSlack || a.gap > suspectWindow {
			continue
		}
		out = append(out, c.changeHit(a, StanceRefutes, strOtherService,
			fmt.Sprintf("as trigger (it changed %s, not the failing service)", oneLine(a.ch.Service))))
	}
	return append(out, c.mechanismHits(out)...)
}

// weigh judges one change of a kind that can be a root cause.
func (c *corpus) weigh(a *attributed) (hit, bool) {
	q, kind, at := c.scope(a.ch)
	if kind != scopeNone && kind != scopeWords && at.min >= 0 && !a.ch.StartedAt.IsZero() {
		// The failures that name what the change touched date its effect
		// better than the first error of the whole input, which may be
		// background noise from before: time the change against them.
		if d, ok := minutesBetween(stampOf(a.ch.StartedAt), at); ok && d >= -afterOnsetSlack && (!a.timed || d < a.gap || a.gap < -afterOnsetSlack) {
			a.gap, a.timed = d, true
		}
	}
	if a.timed && a.gap < -afterOnsetSlack && kind != scopeNone && !a.ch.StartedAt.IsZero() {
		// The first error of the whole input may predate the incident (a
		// cron that failed earlier); the alert's own start time says when
		// this incident began.
		if fired, ok := c.alertStart(); ok {
			if d, ok := minutesBetween(stampOf(a.ch.StartedAt), fired); ok && d >= -afterOnsetSlack && d <= suspectWindow {
				a.gap = d
			}
		}
	}
	if !a.own {
		return c.weighOther(a, q, kind)
	}
	switch {
	case a.timed && a.gap < -afterOnsetSlack:
		return c.changeHit(a, StanceRefutes, strAfterOnset, "as trigger (it began after the symptoms)"), true
	case a.timed && a.gap > staleAfter:
		return c.changeHit(a, StanceRefutes, strStale, fmt.Sprintf("as trigger (it landed %s before the symptoms began)", humanMinutes(a.gap))), true
	case a.timed && a.gap > suspectWindow:
		return hit{}, false
	}
	str, why := strTimelyOnly, "shortly before the symptoms began"
	if a.timed {
		why = fmt.Sprintf("%s before the symptoms began", humanMinutes(a.gap))
		if a.gap <= 0 {
			why = "as the symptoms began"
		}
		if a.gap > triggerWindow {
			str = strTimelyLoose
		}
	} else {
		str, why = strTimelyLoose, "near the incident"
	}
	if !a.timed && kind != scopeVersion {
		// With no time to set it against, what a change touched makes it a
		// suspect, never the confirmed trigger.
		if kind == scopeIdent || kind == scopeResource {
			kind = scopeWords
		}
	}
	switch kind {
	case scopeResource:
		str, why = max(str, strScopedIdent), why+"; it changed what now fails, "+q
	case scopeVersion:
		str, why = strVersionFails, why+"; the failing lines name its version "+oneLine(a.ch.Version)+": "+q
	case scopeIdent:
		str, why = max(str, strScopedIdent), why+"; the failing lines name what it changed: "+q
	case scopeWords:
		str, why = max(str, strScopedWord), why+"; the failing lines name what it changed: "+q
	}
	return c.changeHit(a, StanceSupports, str, why), true
}

// scope is the evidence that the failures touch what the change changed, the
// kind of that evidence, and the earliest time at or after the change's start
// (min -1 when none) of a failing line showing it.
func (c *corpus) scope(ch Change) (string, int, stamp) {
	q, kind, _ := c.scopeEvidence(ch)
	mech := ""
	if kind == scopeNone || kind == scopeWords {
		if m, quote := c.touchedMechanism(ch); m != "" {
			q, kind, mech = m+" as the input shows: "+quote, scopeResource, m
		}
	}
	at := stamp{min: -1}
	if kind == scopeNone || kind == scopeWords || ch.StartedAt.IsZero() {
		return q, kind, at
	}
	start := stampOf(ch.StartedAt)
	for _, li := range c.scopeLines(ch, kind, mech) {
		s, ok := firstStamp(c.lines[li].text)
		if !ok {
			continue
		}
		d, ok := minutesBetween(start, s)
		switch {
		case !ok:
		case d < -afterOnsetSlack && loggedLineRe.MatchString(c.lines[li].text):
			// What the change touched was logged failing before it began:
			// those failures date the onset, and the change cannot have
			// set them off. (Only a log record's own leading time says
			// when it failed; "14:00-14:20: 31% errors" spans the change.)
			return q, kind, stamp{min: -1}
		case d < -afterOnsetSlack:
		case at.min < 0:
			at = s
		default:
			if e, ok := minutesBetween(at, s); ok && e < 0 {
				at = s
			}
		}
	}
	return q, kind, at
}

// scopeLines are the failing lines that show the scope evidence of kind.
func (c *corpus) scopeLines(ch Change, kind int, mech string) []int {
	var out []int
	switch kind {
	case scopeVersion, scopeIdent:
		toks := []string{strings.ToLower(strings.TrimSpace(ch.Version))}
		if kind == scopeIdent {
			toks, _ = changeTerms(ch)
		}
		for i := range c.lines {
			l := &c.lines[i]
			if l.recorded || l.src == "field" || !errorishRe.MatchString(l.text) {
				continue
			}
			if kind == scopeVersion && narratesRelease(l) {
				continue
			}
			for _, t := range toks {
				if len(t) >= 2 && containsToken(l.lower, t) {
					out = append(out, i)
					break
				}
			}
		}
	case scopeResource:
		var cites []string
		for _, h := range append(ruleHits(c), numericHits(c)...) {
			if h.cat == mech && h.stance == StanceSupports {
				cites = append(cites, h.citation)
			}
		}
		for i := range c.lines {
			for _, q := range cites {
				if !c.lines[i].recorded && strings.Contains(c.lines[i].text, q) {
					out = append(out, i)
					break
				}
			}
		}
	}
	return out
}

// loggedLineRe is a log record that starts with its own time: RFC 3339 or
// ISO 8601 (Go, logfmt, Python logging in brackets), syslog ("Jan  2 15:04").
var loggedLineRe = regexp.MustCompile(`^\W{0,2}(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2})`)

// narratesRelease tells a line that tells of a release itself ("12.4.0
// rolled out 23:34", "deployed v2 to prod") in the release vocabulary of
// deployRe: its version there dates the change, it does not show the
// failures coming from it, even when the line goes on to the symptoms.
func narratesRelease(l *line) bool { return deployRe.MatchString(l.text) }

// weighOther judges a change to another service: it is the trigger only when
// the failing lines name both that service and what the change touched (a
// caller failing on what its dependency changed); otherwise it is left alone
// here and set aside later.
func (c *corpus) weighOther(a *attributed, q string, kind int) (hit, bool) {
	if kind == scopeNone || kind == scopeWords || !a.timed || a.gap < -afterOnsetSlack || a.gap > suspectWindow || !c.failuresName(a.ch.Service) {
		return hit{}, false
	}
	why := fmt.Sprintf("%s before the symptoms began, to %s, which the failing lines name; they name what it changed: %s",
		humanMinutes(max(a.gap, 0)), oneLine(a.ch.Service), q)
	return c.changeHit(a, StanceSupports, strScopedIdent, why), true
}

// alertStart is the start time the alert's metadata states, when it states one.
func (c *corpus) alertStart() (stamp, bool) {
	for _, k := range sortedKeys(c.in.Metadata) {
		if v, ok := c.in.Metadata[k].(string); ok && onsetKeyRe.MatchString(k) {
			if s, ok := firstStamp(v); ok && s.day > 0 && s.min >= 0 {
				return s, true
			}
		}
	}
	return stamp{}, false
}

// failuresName reports whether a failing line of the input names service.
func (c *corpus) failuresName(service string) bool {
	s := strings.ToLower(strings.TrimSpace(service))
	if s == "" {
		return false
	}
	for i := range c.lines {
		l := &c.lines[i]
		if !l.recorded && l.src != "field" && errorishRe.MatchString(l.text) && containsToken(l.lower, s) {
			return true
		}
	}
	return false
}

// Kinds of scope evidence, strongest first.
const (
	scopeNone = iota
	scopeVersion
	scopeIdent
	scopeResource
	scopeWords
)

// scopeEvidence looks for the failing lines (errors, failures, refusals) that
// name what the change touched: its version, or an identifier or words of its
// description. It returns the quote and the kind of evidence.
func (c *corpus) scopeEvidence(ch Change) (string, int, int) {
	version := strings.TrimSpace(ch.Version)
	idents, words := changeTerms(ch)
	bestKind, bestQuote, bestLine := scopeNone, "", -1
	for i := range c.lines {
		l := &c.lines[i]
		if l.recorded || l.src == "field" || !errorishRe.MatchString(l.text) {
			continue
		}
		if len(version) >= 2 && containsToken(l.lower, strings.ToLower(version)) && !narratesRelease(l) {
			return shortQuote(l.text), scopeVersion, i
		}
		if bestKind != scopeNone && bestKind <= scopeIdent {
			continue
		}
		for _, id := range idents {
			if containsToken(l.lower, id) {
				bestKind, bestQuote, bestLine = scopeIdent, shortQuote(l.text), i
				break
			}
		}
		if bestKind == scopeIdent {
			continue
		}
		n := 0
		for _, w := range words {
			if containsToken(l.lower, w) {
				n++
			}
		}
		if n >= 2 && bestKind == scopeNone {
			bestKind, bestQuote, bestLine = scopeWords, shortQuote(l.text), i
		}
	}
	if q, li := c.failingInstancesRun(version); li >= 0 {
		return q, scopeVersion, li
	}
	if ch.Kind == "deployment" {
		if q, li := c.newPodsFail(ch.Service); li >= 0 {
			return q, scopeVersion, li
		}
	}
	return bestQuote, bestKind, bestLine
}

// instanceRe picks out what names one instance: an IP address or a pod
// name with its generated suffixes.
var instanceRe = regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[a-z][a-z0-9-]*-[a-z0-9]{5,10}-[a-z0-9]{4,6}\b`)

// failingInstancesRun finds a failing line naming an instance (pod, IP) that
// another line shows running version: the failures come from the instances
// the change touched, even when the failing line does not name the version.
func (c *corpus) failingInstancesRun(version string) (string, int) {
	v := strings.ToLower(strings.TrimSpace(version))
	if len(v) < 2 {
		return "", -1
	}
	onVersion := map[string]bool{}
	for i := range c.lines {
		l := &c.lines[i]
		if !l.recorded && containsToken(l.lower, v) {
			for _, inst := range instanceRe.FindAllString(l.lower, -1) {
				onVersion[inst] = true
			}
		}
	}
	if len(onVersion) == 0 {
		return "", -1
	}
	for i := range c.lines {
		l := &c.lines[i]
		if l.recorded || l.src == "field" || !errorishRe.MatchString(l.text) || containsToken(l.lower, v) {
			continue
		}
		for _, inst := range instanceRe.FindAllString(l.lower, -1) {
			if onVersion[inst] {
				return quoted(oneLine(RunePrefix(l.text, 157))) + " (" + inst + " runs " + version + ")", i
			}
		}
	}
	return "", -1
}

var (
	identRe = regexp.MustCompile(`[A-Za-z][\w]*(?:[_.:/-][\w]+)+|\b[A-Z]?[a-z]+[A-Z]\w*|[A-Za-z]+\d[\w]*`)
	wordRe  = regexp.MustCompile(`[A-Za-z]{5,}`)
	camelRe = regexp.MustCompile(`([a-z])([A-Z])`)
)

// genericWords appear in change descriptions and failures alike without
// naming anything particular.
var genericWords = map[string]bool{
	"error": true, "errors": true, "failed": true, "failure": true, "service": true, "server": true, "client": true,
	"request": true, "requests": true, "update": true, "updated": true, "change": true, "changed": true, "changes": true,
	"release": true, "deploy": true, "deployed": true, "deployment": true, "version": true, "rollout": true,
	"production": true, "config": true, "configuration": true, "enable": true, "enabled": true, "disable": true,
	"disabled": true, "default": true, "value": true, "values": true, "setting": true, "settings": true, "there": true,
	"which": true, "their": true, "about": true, "after": true, "before": true, "while": true, "should": true,
	"would": true, "could": true, "other": true, "using": true, "because": true, "timeout": true, "latency": true,
	"response": true, "status": true, "upgrade": true, "bumped": true, "minor": true, "patch": true, "promote": true,
	"canary": true, "stable": true, "weight": true, "traffic": true, "users": true, "support": true, "added": true,
	"removed": true, "remove": true, "fixes": true, "feature": true, "rules": true, "limit": true, "limits": true,
	"restart": true, "restarted": true, "pods": true, "nodes": true, "cluster": true, "apply": true, "applied": true,
}

// resourceCats maps what a change's description says it touched to the
// mechanisms such a change sets off when it is wrong: a cut limit throttles,
// a shrunk pool runs out, a lowered memory limit kills, a migration locks or
// slows the tables it alters.
var resourceCats = []struct {
	re   *regexp.Regexp
	cats []string
}{
	{re(`rate[- _]?limit|ratelimit|throttl|quota|requests? per|\brps\b|\bqps\b|burst`), []string{CategoryRateLimited}},
	{re(`pool|max_?conn|connections?\b|pgbouncer|hikari`), []string{CategoryDBConnectionExhaustion}},
	{re(`memory|heap|xmx|\bmi\b|\bgi\b|\d\s?(mi|gi|mb|gb)\b|oom`), []string{CategoryMemoryExhaustion}},
	{re(`\bresources\b|rightsiz|requests/limits|\blimits\b`), []string{CategoryMemoryExhaustion, CategoryCPUSaturation}},
	{re(`\bcpu\b|millicores|\bthreads?\b|workers?\b|concurrency|parallelism`), []string{CategoryCPUSaturation, CategoryQueueBacklog}},
	{re(`\bindex|migrat|alter table|schema|\bcolumn|\bquery|\bsql\b|\borm\b|n\+1`), []string{CategoryDBLockContention, CategoryDBSlowQueries}},
	{re(`cache|\bttl\b|evict|redis|memcache`), []string{CategoryCacheFailure}},
	{re(`\bdns\b|resolver|coredns|ndots|hostname`), []string{CategoryDNSFailure}},
	{re(`\btls\b|\bssl\b|certificate|\bcert\b|\bca\b bundle|truststore`), []string{CategoryCertificateExpired}},
	{re(`consumer|prefetch|batch size|partition|queue|kafka|rabbit|\bsqs\b`), []string{CategoryQueueBacklog}},
	{re(`timeout|retr(y|ies)|circuit|upstream|endpoint|base[_ ]?url`), []string{CategoryUpstreamDependency}},
	{re(`disk|volume|\bpvc\b|log level|logging|retention`), []string{CategoryDiskFull}},
	{re(`network ?polic|security group|firewall|egress|ingress|\bacl\b|route table`), []string{CategoryNetworkPartition}},
}

// touchedMechanism is the mechanism the input shows that the change's
// description says it touched, with the quote that shows it.
func (c *corpus) touchedMechanism(ch Change) (string, string) {
	text := strings.ToLower(ch.Description + " " + ch.Version)
	var want []string
	for _, r := range resourceCats {
		if r.re.MatchString(text) {
			want = append(want, r.cats...)
		}
	}
	if ch.Kind == "migration" {
		want = append(want, CategoryDBLockContention, CategoryDBSlowQueries)
	}
	if len(want) == 0 {
		return "", ""
	}
	for _, h := range c.mechanisms() {
		for _, w := range want {
			if h.cat == w {
				return h.cat, h.citation
			}
		}
	}
	return "", ""
}

// mechanisms are the strongest supporting hit of each mechanism the input
// shows to any agent, strongest first.
func (c *corpus) mechanisms() []hit {
	if c.mech != nil {
		return *c.mech
	}
	best := map[string]hit{}
	for _, h := range append(ruleHits(c), numericHits(c)...) {
		if h.stance != StanceSupports || h.str < 0.4 || h.cat == "" ||
			h.cat == CategoryBadDeployment || h.cat == CategoryConfigChange || h.cat == CategoryUnknown {
			continue
		}
		if b, ok := best[h.cat]; !ok || h.str > b.str {
			best[h.cat] = h
		}
	}
	out := make([]hit, 0, len(best))
	for _, k := range sortedKeys(best) {
		out = append(out, best[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].str > out[j].str })
	c.mech = &out
	return out
}

// changeTerms are the identifiers (config keys, flag names, hostnames, metric
// names) and the distinctive words of a change's description.
func changeTerms(ch Change) (idents, words []string) {
	seen := map[string]bool{}
	svc := strings.ToLower(ch.Service)
	for _, m := range identRe.FindAllString(ch.Description, -1) {
		t := strings.ToLower(strings.Trim(m, ".:/-"))
		if len(t) < 4 || seen[t] || t == svc || versionRe.MatchString(t) {
			continue
		}
		seen[t] = true
		idents = append(idents, t)
	}
	for _, m := range wordRe.FindAllString(camelRe.ReplaceAllString(ch.Description, "$1 $2"), -1) {
		t := strings.ToLower(m)
		if seen[t] || genericWords[t] || strings.Contains(svc, t) {
			continue
		}
		seen[t] = true
		words = append(words, t)
	}
	return idents, words
}

// containsToken reports whether tok occurs in s not as part of a longer word.
func containsToken(s, tok string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], tok)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(tok)
		if (i == 0 || !wordByte(s[i-1])) && (end == len(s) || !wordByte(s[end])) {
			return true
		}
		from = i + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func shortQuote(s string) string {
	s = oneLine(s)
	if len(s) > 160 {
		s = RunePrefix(s, 157) + "…"
	}
	return quoted(s)
}

func quoted(s string) string { return "“" + s + "”" }

// rollbackHits judges each recorded rollback or revert by what followed it:
// symptoms that ended confirm the change it undid; symptoms that carried on
// clear it.
func (c *corpus) rollbackHits(all []attributed) []hit {
	var out []hit
	for i := range all {
		rb := &all[i]
		if !rb.revert || !rb.own {
			continue
		}
		undone := c.undone(rb, all)
		if undone == nil || undone.cat == "" {
			continue
		}
		at := stampOf(rb.ch.StartedAt)
		fixed, carried := false, false
		for j := range c.lines {
			l := &c.lines[j]
			if l.recorded || l.src != "context" {
				continue
			}
			// Only what followed the rollback judges it: a line timed at or
			// after it, or one that speaks of the rollback itself.
			s, timed := firstStamp(l.text)
			if d, ok := minutesBetween(at, s); timed && !rb.ch.StartedAt.IsZero() && ok {
				if d < 0 {
					continue
				}
			} else if !deployRevertRe.MatchString(l.text) && !configRevertRe.MatchString(l.text) {
				continue
			}
			switch {
			case noRecoveryRe.MatchString(l.text):
				carried = true
			case recoveryRe.MatchString(l.text):
				fixed = true
			}
		}
		switch {
		case carried && !fixed:
			out = append(out, c.changeHit(undone, StanceRefutes, strRollbackNoFix, "as trigger (undoing it did not end the symptoms)"))
		case fixed && !carried:
			h := c.changeHit(undone, StanceSupports, strRollbackFixed, "undone by "+rb.ch.ID+", after which the symptoms ended")
			h.citation = c.lines[rb.li].cite(0, len(c.lines[rb.li].text))
			out = append(out, h)
		}
	}
	return out
}

// undone is the change a rollback reverts: the one its RevertOf names (by
// id, version or the sender's id), else the latest change of the same
// service before it that a rollback can undo.
func (c *corpus) undone(rb *attributed, all []attributed) *attributed {
	ref := strings.TrimSpace(rb.ch.RevertOf)
	var latest *attributed
	for i := range all {
		a := &all[i]
		if a == rb || a.revert || a.cat == "" {
			continue
		}
		if ref != "" && (ref == a.ch.ID || ref == a.ch.Version || ref == a.ch.SourceChangeID) {
			return a
		}
		if a.own && !a.ch.StartedAt.After(rb.ch.StartedAt) && (latest == nil || a.ch.StartedAt.After(latest.ch.StartedAt)) {
			latest = a
		}
	}
	return latest
}

// mechanismHits: once a change is confirmed as the trigger, what it set off
// (throttling, exhausted pools, slow queries…) is the symptom, and the agent
// says so against each mechanism the input shows.
func (c *corpus) mechanismHits(hits []hit) []hit {
	trigger := confirmedTrigger(hits)
	if trigger == nil {
		return nil
	}
	var out []hit
	for _, h := range c.mechanisms() {
		out = append(out, hit{cat: h.cat, stance: StanceRefutes, str: strMechanism, roles: rDeploy, stated: true,
			citation: trigger.citation, what: h.cat + " as the root cause (it is what the recorded change set off)"})
	}
	return out
}

// confirmedTrigger is the strongest supporting hit strong enough to count as
// the initiating cause, nil when none is.
func confirmedTrigger(hits []hit) *hit {
	var trigger *hit
	for i := range hits {
		h := &hits[i]
		if h.stance == StanceSupports && h.str >= triggerConfirmed && (trigger == nil || h.str > trigger.str) {
			trigger = h
		}
	}
	return trigger
}

// changeHit is a finding about change a, citing its recorded line, which
// names the change's id, version and time.
func (c *corpus) changeHit(a *attributed, stance string, str float64, why string) hit {
	l := &c.lines[a.li]
	what := "recorded change " + describeChange(a.ch) + " " + why
	return hit{cat: a.cat, stance: stance, str: str, what: what, roles: rDeploy, stated: true, fromRecord: true, citation: l.cite(0, len(l.text))}
}

func describeChange(ch Change) string {
	d := ch.ID
	if d == "" {
		d = "of " + oneLine(ch.Service)
	}
	d += " (" + ch.Kind
	if ch.Version != "" {
		d += " " + oneLine(ch.Version)
	}
	if !ch.StartedAt.IsZero() {
		d += " at " + ch.StartedAt.UTC().Format("2006-01-02 15:04Z")
	}
	return d + ")"
}

// recordedLine finds the corpus line of a rendered change.
func (c *corpus) recordedLine(text string) int {
	for i := range c.lines {
		if c.lines[i].recorded && c.lines[i].text == text {
			return i
		}
	}
	return -1
}

// sameService reports whether a change's service is the incident's: by name
// when the alert names its service, else when the alert text names it.
func sameService(svc string, in Input) bool {
	s := strings.ToLower(strings.TrimSpace(svc))
	if s == "" {
		return false
	}
	if is := strings.ToLower(strings.TrimSpace(in.Service)); is != "" {
		return s == is
	}
	return containsToken(strings.ToLower(in.Title+" "+in.Description), s)
}

func stampOf(t time.Time) stamp {
	t = t.UTC()
	return stamp{day: dayNum(t.Year(), int(t.Month()), t.Day()), min: t.Hour()*60 + t.Minute()}
}

func humanMinutes(m int) string {
	switch {
	case m < 0:
		return "after"
	case m < 120:
		return fmt.Sprintf("%d min", m)
	case m < 48*60:
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d days", m/1440)
}

// podRowRe is one row of `kubectl get pods`: name (deployment, pod-template
// hash, suffix), ready, status, restarts, age.
var podRowRe = regexp.MustCompile(`^\s*([a-z0-9][a-z0-9-]*)-([a-z0-9]{6,10})-([a-z0-9]{5})\s+(\d+)/(\d+)\s+(\S+)\s+(\d+)(?:\s+\([^)]*\))?\s+(\d+[smhd](?:\d+[smhd])?)\s*$`)

// podGroup is the pods of one ReplicaSet in a pod listing.
type podGroup struct {
	failing, total int
	minAge, maxAge int // minutes
	line           int // a failing pod's line
}

// newPodsFail finds a pod listing in which the pods of the youngest
// ReplicaSet of service fail (restarts, not ready, not Running) while an older
// ReplicaSet's pods are healthy: what a rollout touched fails, and only that.
func (c *corpus) newPodsFail(service string) (string, int) {
	svc := strings.ToLower(strings.TrimSpace(service))
	groups := map[string]*podGroup{}
	for i := range c.lines {
		l := &c.lines[i]
		m := podRowRe.FindStringSubmatch(l.lower)
		if l.recorded || m == nil || (svc != "" && m[1] != svc) {
			continue
		}
		g := groups[m[2]]
		if g == nil {
			g = &podGroup{minAge: 1 << 30, line: -1}
			groups[m[2]] = g
		}
		age := kubeAge(m[8])
		g.total++
		g.minAge, g.maxAge = min(g.minAge, age), max(g.maxAge, age)
		if m[4] != m[5] || m[6] != "running" || m[7] != "0" {
			g.failing++
			if g.line < 0 {
				g.line = i
			}
		}
	}
	var young, old *podGroup
	for _, k := range sortedKeys(groups) {
		g := groups[k]
		switch {
		case g.failing*2 >= g.total && g.failing > 0:
			if young == nil || g.maxAge < young.maxAge {
				young = g
			}
		case g.failing == 0:
			if old == nil || g.minAge > old.minAge {
				old = g
			}
		}
	}
	if young == nil || old == nil || young.maxAge >= old.minAge {
		return "", -1
	}
	l := &c.lines[young.line]
	return quoted(oneLine(l.text)) + fmt.Sprintf(" (%d of %d pods of the newest ReplicaSet fail; the older ReplicaSet's %d are healthy)",
		young.failing, young.total, old.total), young.line
}

// kubeAge reads a kubectl age ("38m", "5d", "3h12m") in minutes.
func kubeAge(s string) int {
	total, n := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			n = n*10 + int(r-'0')
		case r == 'd':
			total, n = total+n*1440, 0
		case r == 'h':
			total, n = total+n*60, 0
		case r == 'm':
			total, n = total+n, 0
		case r == 's':
			n = 0
		}
	}
	return total
}
