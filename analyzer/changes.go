package analyzer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// stamp is a point in time as far as the text pins it down: day is a
// monotonic day number (0 = unknown), min the minute of the day (-1 = unknown).
type stamp struct{ day, min int }

var (
	// Timestamps as logs print them: ISO 8601/RFC 3339, syslog and
	// Java/Python logging ("Jan 2 15:04"), RFC 2822 ("2 Jan 2006 15:04"),
	// bare clock times; startedRe and onsetKeyRe are Alertmanager's and
	// PagerDuty's "startsAt"/"started"/"triggered"/"fired" fields.
	isoTimeRe  = regexp.MustCompile(`(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?`)
	monTimeRe  = regexp.MustCompile(`(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2}),?\s+(?:(\d{4})\s+)?(\d{2}):(\d{2})`)
	dayMonRe   = regexp.MustCompile(`(?i)\b(\d{1,2})\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+(\d{4})\s+(\d{2}):(\d{2})`)
	bareTimeRe = regexp.MustCompile(`(?:^|[^\d.:/-])(\d{1,2}):(\d{2})(?::\d{2})?(?:[^\d:]|$)`)
	startedRe  = regexp.MustCompile(`(?i)\b(started|since|began|beginning|starting)\s+(at\s+|around\s+|about\s+|~)?(\d{1,2}):(\d{2})`)
	onsetKeyRe = regexp.MustCompile(`(?i)start|trigger|fired|since|began|onset|first`)
	months     = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

	// Release vocabulary of Kubernetes (Deployment, rollout), Helm ("helm
	// upgrade"), Argo CD ("Synced"), Argo Rollouts/Flagger (canary,
	// "promoted"), container registries ("image pushed").
	deployRe = re(`\b(deploy(ed|ing|ment)?|rolled out|roll(ing)? out|rollout|released|release v?\d|upgraded?|helm upgrade|synced|new image|image [^ ]+ (updated|pushed)|canary|promoted to)\b`)
	// deployHookRe is a certificate or package manager's hook that merely
	// reloads a service, not a release: certbot ("Running deploy-hook
	// command"), and kubectl's resource names (deployment.apps/x).
	deployHookRe = re(`deploy[-_ ]hook|\bdeploy(ment)?(\.apps)?/`)
	// Configuration vocabulary: feature flags (LaunchDarkly, Unleash,
	// "percentage rollout", "toggled"), Kubernetes ConfigMaps and Helm
	// values.yaml, Terraform ("terraform apply") and Ansible, Amazon RDS
	// parameter groups, Linux sysctl, Heroku config vars, Azure Resource
	// Manager (Microsoft.Web/sites/config/write, App Service connection
	// strings), Istio VirtualService/DestinationRule, Varnish and Fastly (VCL,
	// service versions), Consul ("consul kv put"), and key: old -> new diffs
	// as Terraform plans and change tickets print them.
	configRe = re(`feature[- ]flag|\bflag[=: ]|percentage rollout|configmap|config(uration)? (change|update|push|reload)|\bconfig\b[^.]*\b(updated|changed|applied|pushed|edited)|(updated|changed|applied|pushed|edited)[^.]*\bconfig\b|terraform apply|ansible|values\.ya?ml|parameter group|\bsysctl\b|toggled|launchdarkly|unleash|env(ironment)? var\w*[^.]*(changed|updated|set)|(setting|parameter|timeout|limit) changed|changed [^.]*(setting|parameter|value)|config/write|connection ?strings?\b|virtualservice|destinationrule|\b(add|added|adds|set|sets|raised?|lowered|reduced?|increased?|changed?)\b[^.]*\b(timeouts?|retries|thresholds?|ttl|pool size)\b|\b[a-z_]\w*(\.[a-z_]\w*)+[:=]?\s+\S+\s*(->|→)\s*\S+|\bvcl\b|service version|\w-config\b|\bkv put\b`)

	// Undoing a release: "kubectl rollout undo", "helm rollback", Argo CD and
	// Spinnaker rollbacks, git revert, a previous image or revision.
	deployRevertRe = re(`\broll(ed|ing|s)?[ -]?back|\brevert(ed|ing|s)?\b|\bdowngrad|rollout undo|\bundo\b|previous (version|image|release|revision)`)
	// Undoing a configuration change: LaunchDarkly's audit log ("Turned off
	// the flag"), disabled flags, restored settings.
	configRevertRe = re(`turned [^.]*\boff\b|disabled (the )?(flag|feature|toggle)|\bflag\b[^.]*\b(off|disabled|back to)|(revert|restor|roll)\w*( back)? (the )?(config|configmap|setting|value|parameter|flag|change to)`)
	configWordRe   = re(`config|flag|setting|parameter|toggle|timeout|limit`)
	// Symptoms ending, as alerting and status tools word it (Alertmanager
	// "RESOLVED", Nagios "RECOVERY", Statuspage "Resolved", AWS Health
	// "recovered"/"restored", kubectl STATUS Running) and as it shows in the
	// symptom's own numbers (error rate back to 0%, "0 errors").
	recoveryRe = re(`back to (normal|baseline|~?\d)|\brecover(ed|y)\b|\b(errors?|5xx|\w*\d{3}s|failures|waits?|timeouts|restarts|alerts?|latency)\s+(have\s+)?(stopped|dropped|cleared|gone|ended|subsided|disappeared)|\bresolved\b|normal again|(error rate|latency|errors)( is| are)? (normal|ok)|\bfixed\b|healthy again|pods running|stopped at \d|went away|\brestored\b|(ratio|rate) (is |back to |at |of )?0(\.\d+)?\s?%|working again|\b0 (errors|fatals|failures|5xx|exceptions)\b|no (more )?(errors|fatals|failures) since|\bgone\b|down to (normal|baseline)`)
	// Symptoms outlasting a change, in the same vocabulary.
	noRecoveryRe = re(`\bstill\b|\bcontinu|no (change|improvement|effect|difference)|did(n't| not) (help|fix|change)|\bpersist|no better|\bunchanged\b|not (improve|recover)`)
	// LaunchDarkly's and Unleash's gradual flag rollout.
	pctRolloutRe = re(`percentage rollout`)
	hhmmRe       = regexp.MustCompile(`(\d{1,2}):(\d{2})`)
	// Semantic versions (v1.4.2, 2.14.0).
	versionRe = re(`\bv\d+(\.\d+)+|\b\d+\.\d+\.\d+`)
	// Log levels and failure words (syslog, log4j, Python logging, Go
	// panics) and HTTP status codes: what a change line is not, and what an
	// onset line is.
	changeExclRe = re(`\b(error|errors|exception|fail\w*|warn\w*|traceback|panic)\b`)
	configNounRe = re(`\bconfig(uration|map)?\b`)
	errorishRe   = re(`\berror|\berr\b|fail|exception|panic|fatal|\bwarn|timeout|timed out|refused|denied|\b5\d\d\b|\b429\b|\bcrit\b|traceback|unreachable|\bdown\b|oom`)
)

func dayNum(y, m, d int) int { return y*372 + m*31 + d }

// firstStamp finds the first timestamp in a line.
func firstStamp(t string) (stamp, bool) {
	best, bestPos, found := stamp{}, len(t)+1, false
	if m := isoTimeRe.FindStringSubmatchIndex(t); m != nil && m[0] < bestPos {
		y, _ := strconv.Atoi(t[m[2]:m[3]])
		mo, _ := strconv.Atoi(t[m[4]:m[5]])
		d, _ := strconv.Atoi(t[m[6]:m[7]])
		s := stamp{day: dayNum(y, mo, d), min: -1}
		if m[8] >= 0 {
			h, _ := strconv.Atoi(t[m[8]:m[9]])
			mi, _ := strconv.Atoi(t[m[10]:m[11]])
			s.min = h*60 + mi
		}
		best, bestPos, found = s, m[0], true
	}
	if m := monTimeRe.FindStringSubmatchIndex(t); m != nil && m[0] < bestPos {
		mo := months[strings.ToLower(t[m[2]:m[3]])]
		d, _ := strconv.Atoi(t[m[4]:m[5]])
		y := 0
		if m[6] >= 0 {
			y, _ = strconv.Atoi(t[m[6]:m[7]])
		}
		h, _ := strconv.Atoi(t[m[8]:m[9]])
		mi, _ := strconv.Atoi(t[m[10]:m[11]])
		s := stamp{min: h*60 + mi}
		if y > 0 {
			s.day = dayNum(y, mo, d)
		}
		best, bestPos, found = s, m[0], true
	}
	if m := dayMonRe.FindStringSubmatchIndex(t); m != nil && m[0] < bestPos {
		d, _ := strconv.Atoi(t[m[2]:m[3]])
		mo := months[strings.ToLower(t[m[4]:m[5]])]
		y, _ := strconv.Atoi(t[m[6]:m[7]])
		h, _ := strconv.Atoi(t[m[8]:m[9]])
		mi, _ := strconv.Atoi(t[m[10]:m[11]])
		best, bestPos, found = stamp{day: dayNum(y, mo, d), min: h*60 + mi}, m[0], true
	}
	if m := bareTimeRe.FindStringSubmatchIndex(t); m != nil && m[2] < bestPos {
		h, _ := strconv.Atoi(t[m[2]:m[3]])
		mi, _ := strconv.Atoi(t[m[4]:m[5]])
		if h < 24 && mi < 60 {
			best, found = stamp{min: h*60 + mi}, true
		}
	}
	return best, found
}

// minutesBetween returns b-a in minutes when the stamps are comparable.
func minutesBetween(a, b stamp) (int, bool) {
	if a.day > 0 && b.day > 0 {
		if a.day != b.day {
			// Different days: only the sign and rough size matter.
			d := (b.day - a.day) * 1440
			if a.min >= 0 && b.min >= 0 {
				d += b.min - a.min
			}
			return d, true
		}
		if a.min < 0 || b.min < 0 {
			return 0, false
		}
		return b.min - a.min, true
	}
	if a.min < 0 || b.min < 0 {
		return 0, false
	}
	return b.min - a.min, true
}

func isSeriesLine(t string) bool {
	return strings.Count(t, " | ") >= 1 || arrowRe.MatchString(t) || len(bareTimeRe.FindAllString(t, -1)) >= 3
}

// onset estimates when symptoms began: alert metadata start times, "started
// HH:MM" in the alert text, and the first timestamped error line.
func onset(c *corpus, isChange []bool) (stamp, bool) {
	var cands []stamp
	for _, k := range sortedKeys(c.in.Metadata) {
		if v, ok := c.in.Metadata[k].(string); ok && onsetKeyRe.MatchString(k) {
			if s, ok := firstStamp(v); ok && s.day > 0 {
				cands = append(cands, s)
			}
		}
	}
	for _, t := range []string{c.in.Title, c.in.Description} {
		if m := startedRe.FindStringSubmatch(t); m != nil {
			h, _ := strconv.Atoi(m[3])
			mi, _ := strconv.Atoi(m[4])
			cands = append(cands, stamp{min: h*60 + mi})
		}
	}
	var errs, any []stamp
	for i := range c.lines {
		l := &c.lines[i]
		if l.src != "context" || l.recorded || isChange[i] || isSeriesLine(l.text) {
			continue
		}
		s, ok := firstStamp(l.text)
		if !ok {
			continue
		}
		if errorishRe.MatchString(l.text) && !deployRevertRe.MatchString(l.text) && !recoveryRe.MatchString(l.text) {
			errs = append(errs, s)
		}
		any = append(any, s)
	}
	if len(errs) > 0 {
		cands = append(cands, errs...)
	} else if len(cands) == 0 {
		cands = append(cands, any...)
	}
	if len(cands) == 0 {
		return stamp{}, false
	}
	// Earliest candidate; dated stamps anchor undated ones.
	best := cands[0]
	for _, s := range cands[1:] {
		if d, ok := minutesBetween(best, s); ok && d < 0 {
			if best.day > 0 && s.day == 0 {
				s.day = best.day
			}
			best = s
		} else if best.day == 0 && s.day > 0 {
			best.day = s.day
			if d, ok := minutesBetween(best, s); ok && d < 0 {
				best = s
			}
		}
	}
	return best, true
}

// firstGatheredError is the line of a data source's answer (not pasted
// context) that dates the onset: the first error-level line at on.
func firstGatheredError(c *corpus, isChange []bool, on stamp) (int, bool) {
	for i := range c.lines {
		l := &c.lines[i]
		if l.src != "context" || l.entry < len(c.in.Context) || isChange[i] || isSeriesLine(l.text) || !errorishRe.MatchString(l.text) {
			continue
		}
		if s, ok := firstStamp(l.text); ok {
			if d, ok := minutesBetween(s, on); ok && d == 0 {
				return i, true
			}
		}
	}
	return 0, false
}

type change struct {
	li     int
	config bool
	at     stamp
	timed  bool
}

// changeHits is the deployments agent's timeline reasoning: a change shortly
// before onset supports bad_deployment/config_change, a change after onset or
// days before refutes it, and a revert that fixed (or did not fix) the symptoms
// is the decisive test.
func changeHits(c *corpus) []hit {
	isChange, changes := proseChanges(c)
	var out []hit
	on, haveOnset := onset(c, isChange)
	for _, kind := range []bool{false, true} {
		out = append(out, changeKindHits(c, changes, isChange, on, haveOnset, kind)...)
	}
	out = append(out, revertHits(c, changes, on, haveOnset)...)
	return out
}

// proseChanges are the deploys and configuration changes the input's lines
// tell of (recorded changes are read from their own entries), and which
// lines those are.
func proseChanges(c *corpus) ([]bool, []change) {
	isChange := make([]bool, len(c.lines))
	var changes []change
	for i := range c.lines {
		l := &c.lines[i]
		if l.src == "field" || l.recorded {
			continue
		}
		cfg := configRe.FindStringIndex(l.text)
		dep := deployRe.FindStringIndex(l.text)
		if cfg == nil && dep == nil {
			continue
		}
		m := dep
		if cfg != nil {
			m = cfg
		}
		if l.negated(m[0], m[1]) || changeExclRe.MatchString(l.text) || deployRevertRe.MatchString(l.text) || configRevertRe.MatchString(l.text) ||
			(cfg == nil && deployHookRe.MatchString(l.text)) || strings.Contains(l.text, "?") {
			continue
		}
		if dep != nil && cfg == nil && pctRolloutRe.MatchString(l.text) {
			continue
		}
		isChange[i] = true
		ch := change{li: i, config: cfg != nil || configNounRe.MatchString(l.text)}
		ch.at, ch.timed = firstStamp(l.text)
		if l.src != "context" {
			if m := hhmmRe.FindStringSubmatch(l.text); m != nil {
				h, _ := strconv.Atoi(m[1])
				mi, _ := strconv.Atoi(m[2])
				ch.at, ch.timed = stamp{min: h*60 + mi}, true
			}
		}
		changes = append(changes, ch)
	}
	return isChange, changes
}

// changeKindHits weighs the changes of one kind (config: configuration and
// flags, else deploys) by their time against the onset: shortly before
// supports, after or days before refutes, untimed hints.
func changeKindHits(c *corpus, changes []change, isChange []bool, on stamp, haveOnset, kind bool) []hit {
	var out []hit
	cat, what := CategoryBadDeployment, "a deploy"
	if kind {
		cat, what = CategoryConfigChange, "a configuration or feature-flag change"
	}
	var before, after, old, untimed []change
	for _, ch := range changes {
		if ch.config != kind {
			continue
		}
		if !ch.timed || !haveOnset {
			untimed = append(untimed, ch)
			continue
		}
		d, ok := minutesBetween(ch.at, on)
		switch {
		case !ok:
			untimed = append(untimed, ch)
		case d >= -1 && d <= 120:
			before = append(before, ch)
		case d < -1:
			after = append(after, ch)
		case d > 24*60:
			old = append(old, ch)
		}
	}
	cite := func(ch change) string { l := &c.lines[ch.li]; return l.cite(0, len(l.text)) }
	switch {
	case len(before) > 0:
		best, bd := before[0], 1<<30
		for _, ch := range before {
			d, _ := minutesBetween(ch.at, on)
			if d < bd {
				best, bd = ch, d
			}
		}
		str := 0.6
		if bd > 30 {
			str = 0.4
		}
		if s := strings.ToLower(c.in.Service); s != "" && !kind && !strings.Contains(c.lines[best.li].lower, s) && !strings.Contains(strings.ToLower(c.in.Title+c.in.Description), "deploy") {
			str -= 0.15
		}
		out = append(out, hit{cat: cat, stance: StanceSupports, str: str, what: what + " shortly before the symptoms began", roles: rDeploy, citation: cite(best)})
		if li, ok := firstGatheredError(c, isChange, on); ok {
			// The logs a query returned date the first error: quoting it
			// cites the query that shows when the symptoms began. The
			// logs agent, which read those lines, makes the same
			// judgement on its own reading of them.
			out = append(out, hit{cat: cat, stance: StanceSupports, str: str - 0.05, roles: rDepLog,
				what: fmt.Sprintf("the first error in the logs %d minute(s) after %s", bd, what), citation: cite(change{li: li})})
		}
	case len(after) > 0:
		out = append(out, hit{cat: cat, stance: StanceRefutes, str: 0.55, what: what + " as trigger (the change came after the symptoms began)", roles: rDeploy, citation: cite(after[0])})
	case len(old) > 0:
		out = append(out, hit{cat: cat, stance: StanceRefutes, str: 0.4, what: what + " as trigger (the last change was days before the symptoms)", roles: rDeploy, citation: cite(old[0])})
	case len(untimed) > 0:
		out = append(out, hit{cat: cat, stance: StanceSupports, str: 0.25, what: what + " near the incident", roles: rDeploy, citation: cite(untimed[0])})
	}
	return out
}

// A redeploy of a named release, and the release the input calls the last
// good one (Argo CD and Spinnaker "redeploy", "previous release").
var (
	redeployRe = re(`\bre-?deploy(ed|ing|s)?\b`)
	previousRe = re(`\bprevious\b|\blast (known )?good\b|\bprior (release|version)`)
)

// redeploysPrevious reports whether line li redeploys a release the input
// calls the previous one ("redeployed release 2025.7.2" beside "Previous
// release: 2025.7.2"): a rollback in other words.
func redeploysPrevious(c *corpus, li int) bool {
	if !redeployRe.MatchString(c.lines[li].text) {
		return false
	}
	for _, tok := range idTokens(c.lines[li].text) {
		for j := range c.lines {
			if j != li && strings.Contains(c.lines[j].text, tok) && previousRe.MatchString(c.lines[j].text) {
				return true
			}
		}
	}
	return false
}

// idTokenRe picks identifiers out of a line (merge requests, pipelines,
// commits, releases): what a revert and the change it undoes both name.
var idTokenRe = regexp.MustCompile(`[!#]?\b[\w.-]*\d[\w.-]*\b`)

// idTokens lists the identifiers of text, leaving out clock times and numbers
// too short to name anything.
func idTokens(text string) []string {
	var out []string
	for _, tok := range idTokenRe.FindAllString(text, -1) {
		if len(tok) >= 3 && !hhmmRe.MatchString(tok) {
			out = append(out, tok)
		}
	}
	return out
}

// revertedKind tells whether the revert on line li undoes a configuration
// change: by an identifier it shares with a change line, else by the last
// change before the symptoms began. ok is false when neither decides.
func revertedKind(c *corpus, li int, changes []change, on stamp, haveOnset bool) (config, ok bool) {
	for _, tok := range idTokens(c.lines[li].text) {
		for _, ch := range changes {
			if ch.li != li && strings.Contains(c.lines[ch.li].text, tok) {
				return ch.config, true
			}
		}
	}
	if !haveOnset {
		return false, false
	}
	best, bestD := -1, 1<<30
	for i, ch := range changes {
		if !ch.timed {
			continue
		}
		if d, ok := minutesBetween(ch.at, on); ok && d >= -1 && d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return false, false
	}
	return changes[best].config, true
}

// revertHits looks for rollbacks/reverts and whether the symptoms ended after
// them. A revert that ended symptoms well before this incident began closed an
// earlier episode: it argues against the change, which was gone by then.
func revertHits(c *corpus, changes []change, on stamp, haveOnset bool) []hit {
	var out []hit
	for i := range c.lines {
		l := &c.lines[i]
		if l.src != "context" || l.recorded {
			continue
		}
		cfg := configRevertRe.MatchString(l.text)
		dep := deployRevertRe.MatchString(l.text) || redeploysPrevious(c, i)
		if !cfg && !dep {
			continue
		}
		switch {
		case cfg:
		case (configWordRe.MatchString(l.text) || configRe.MatchString(l.text)) && !versionRe.MatchString(l.text):
			cfg = true
		default:
			// The revert names no kind: it undoes the change it names, or the
			// last one before the symptoms.
			cfg, _ = revertedKind(c, i, changes, on, haveOnset)
		}
		cat, what := CategoryBadDeployment, "a rollback"
		if cfg {
			cat, what = CategoryConfigChange, "reverting a configuration change"
		}
		window := []int{i}
		for _, oi := range c.entries[l.entry] {
			if oi > i && len(window) < 3 {
				window = append(window, oi)
			}
		}
		var recovered, failed bool
		recoveredAt := i
		for _, wi := range window {
			t := c.lines[wi].text
			if noRecoveryRe.MatchString(t) {
				failed = true
			} else if recoveryRe.MatchString(t) {
				recovered, recoveredAt = true, wi
			}
			if recovered || failed {
				break
			}
		}
		cite := l.cite(0, len(l.text))
		if at, ok := firstStamp(l.text); ok && haveOnset && recovered {
			if d, ok := minutesBetween(at, on); ok && d > 15 {
				out = append(out, hit{cat: cat, stance: StanceRefutes, str: 0.5, what: what + " as trigger (it was reverted before the symptoms began)", roles: rDeploy, citation: cite})
				continue
			}
		}
		switch {
		case failed:
			out = append(out, hit{cat: cat, stance: StanceRefutes, str: 0.7, what: what + " fixing the incident (symptoms continued afterwards)", roles: rDeploy, citation: cite})
		case recovered:
			// Undoing the change and seeing the symptoms end is the closest an
			// incident comes to an experiment: it outweighs the mechanism (pool
			// starvation, memory errors) the change set off.
			out = append(out, hit{cat: cat, stance: StanceSupports, str: 0.9, what: what + " that ended the symptoms", roles: rDepLog, citation: cite})
			// The metrics agent sees the other half of the experiment: the
			// symptoms' own numbers returning to normal right after it.
			rl := &c.lines[recoveredAt]
			out = append(out, hit{cat: cat, stance: StanceSupports, str: 0.8, what: "the symptoms ending right after " + what, roles: rMet, citation: rl.cite(0, len(rl.text))})
		}
	}
	return out
}
