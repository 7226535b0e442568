package analyzer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Bounds of the rollout reasoning: a rollout is the likely trigger when its
// pods start failing within rolloutWindow of it; one older than staleRollout
// when the failures began had long proven itself.
const (
	rolloutWindow = 2 * time.Hour
	staleRollout  = 24 * time.Hour
)

// podState is one container reading of the Kubernetes pods query.
type podState struct {
	r       *Reading
	failing bool
}

// failingContainer tells a container in trouble: waiting to start again,
// not ready after a restart, or ended by a signal or an error since.
func failingContainer(r *Reading) bool {
	l := r.Labels
	if l["waiting"] != "" {
		return true
	}
	if l["ready"] == "true" {
		return false // restarted once, long ago maybe, and serving now
	}
	return r.Value >= 1 && (l["reason"] != "" && l["reason"] != "Completed" || l["ready"] == "false")
}

// explainedElsewhere tells a container whose failure names its own cause
// (an image that cannot be pulled, configuration that does not exist): the
// cluster reading blames that, not the rollout that brought it.
func explainedElsewhere(r *Reading) bool {
	w := r.Labels["waiting"]
	return pullWaitingReasons[w] || w == "CreateContainerConfigError"
}

// rolloutHits is the deployments agent's reading of Kubernetes: when the pods
// failing all belong to a Deployment's newest ReplicaSet, created shortly
// before they began failing, while its previous ReplicaSet's pods keep
// running, the rollout is the trigger, and the finding cites the rollout
// itself. Pods of an older ReplicaSet failing too, or a rollout that had run
// for a day before the failures, argue against it.
func rolloutHits(c *corpus, readings []*Reading, role string) []hit {
	if role != RoleDeployments {
		return nil
	}
	byDeployment, deployments, pods := rolloutsAndPods(readings)
	var out []hit
	for _, d := range deployments {
		if h, ok := rolloutHit(c, d, byDeployment[d], pods); ok {
			out = append(out, h)
		}
	}
	return out
}

// rolloutOwner keys a revision reading by its workload: a Deployment (its
// ReplicaSets) or a StatefulSet (its ControllerRevisions).
func rolloutOwner(r *Reading) string {
	if sts := r.Labels["statefulset"]; sts != "" {
		return "statefulset/" + sts
	}
	return r.Labels["deployment"]
}

// rolloutCulprit is the workload a revision reading belongs to.
func rolloutCulprit(r *Reading) *Culprit {
	if sts := r.Labels["statefulset"]; sts != "" {
		return &Culprit{Kind: KindStatefulSet, Name: sts, Namespace: r.Labels["namespace"]}
	}
	return &Culprit{Kind: KindDeployment, Name: r.Labels["deployment"], Namespace: r.Labels["namespace"]}
}

// revisionSet is one revision of a workload (a Deployment's ReplicaSet, a
// StatefulSet's ControllerRevision) and its revision number.
type revisionSet struct {
	r        *Reading
	revision int
}

// rolloutsAndPods are the ReplicaSets of each Deployment, in the order the
// readings name the Deployments, and the containers of each ReplicaSet's
// pods that no other reader explains (a probe's kill is the probe's fault).
func rolloutsAndPods(readings []*Reading) (map[string][]revisionSet, []string, map[string][]podState) {
	byDeployment := map[string][]revisionSet{}
	var deployments []string
	pods := map[string][]podState{}  // by replicaset
	probeKilled := map[string]bool{} // pods the kubelet restarts for a failed probe
	for _, r := range readings {
		if r.Signal == SignalK8sEvent && r.Labels["kind"] == "Pod" && probeKill(r) {
			probeKilled[r.Labels["name"]] = true
		}
	}
	for _, r := range readings {
		switch r.Signal {
		case SignalRollout:
			d := rolloutOwner(r)
			if _, ok := byDeployment[d]; !ok {
				deployments = append(deployments, d)
			}
			byDeployment[d] = append(byDeployment[d], revisionSet{r, int(r.Value)})
		case SignalContainerStatus:
			set := r.Labels["replicaset"]
			if set != "" && !explainedElsewhere(r) && !probeKilled[r.Labels["pod"]] {
				pods[set] = append(pods[set], podState{r, failingContainer(r)})
			}
		}
	}
	return byDeployment, deployments, pods
}

// rolloutHit weighs Deployment d's newest revision: its pods failing right
// after it while the previous revision's run supports a bad deployment;
// earlier revisions failing too, or a revision that ran well for long
// before, refutes it.
func rolloutHit(c *corpus, d string, sets []revisionSet, pods map[string][]podState) (hit, bool) {
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].revision > sets[j].revision })
	if h, ok := rollbackHit(d, sets, pods); ok {
		return h, true
	}
	newest := sets[0]
	name := newest.r.Labels["replicaset"]
	var firstFail time.Time
	newFailing, newTotal := 0, 0
	for _, p := range pods[name] {
		newTotal++
		if p.failing {
			newFailing++
			if firstFail.IsZero() || p.r.At.Before(firstFail) {
				firstFail = p.r.At
			}
		}
	}
	var oldFailing *Reading
	oldHealthy := 0
	for _, s := range sets[1:] {
		for _, p := range pods[s.r.Labels["replicaset"]] {
			if p.failing && oldFailing == nil {
				oldFailing = p.r
			} else if !p.failing {
				oldHealthy++
			}
		}
	}
	rev := strconv.Itoa(newest.revision)
	culprit := rolloutCulprit(newest.r)
	switch {
	case newFailing == 0:
		return c.servingRolloutHit(d, sets, culprit)
	case oldFailing != nil:
		return hit{cat: CategoryBadDeployment, stance: StanceRefutes, str: 0.45, roles: rDeploy, stated: true, culprit: culprit,
			what: fmt.Sprintf("revision %s of %s as trigger (pods of an earlier ReplicaSet fail too)", rev, d), citation: oldFailing.Line}, true
	case !firstFail.IsZero() && firstFail.Sub(newest.r.At) > staleRollout:
		return hit{cat: CategoryBadDeployment, stance: StanceRefutes, str: 0.4, roles: rDeploy, stated: true, culprit: culprit,
			what: fmt.Sprintf("revision %s of %s as trigger (it ran for %s before its pods failed)", rev, d, formatDuration(firstFail.Sub(newest.r.At))), citation: newest.r.Line}, true
	case len(sets) > 1 && (firstFail.IsZero() || firstFail.Sub(newest.r.At) <= rolloutWindow):
		str := 0.62
		what := fmt.Sprintf("a rollout: %d of %d containers of %s (revision %s of %s) failing right after it", newFailing, newTotal, name, rev, d)
		if oldHealthy > 0 {
			str = 0.82
			what += fmt.Sprintf(", while %d of the previous revision's keep running", oldHealthy)
		}
		// The failing lines naming the new revision's version tie the
		// failures to it as they tie them to a recorded release.
		if tag := imageTag(newest.r.Labels["image"]); tag != "" && tag != imageTag(sets[1].r.Labels["image"]) {
			if q, _ := c.failingLineNaming(tag); q != "" {
				str = max(str, strVersionFails)
				what += "; the failing lines name its version " + tag + ": " + q
			}
		}
		return hit{cat: CategoryBadDeployment, stance: StanceSupports, str: str, roles: rDeploy, stated: true, what: what, citation: newest.r.Line,
			culprit: culprit, mech: MechanismOther}, true
	}
	return hit{}, false
}

// rollbackHit reads a rollback: `kubectl rollout undo` (or a GitOps revert)
// gives an earlier ReplicaSet the newest revision number, so the newest
// revision was created before another one, the rollout it undid. That
// rollout, undone within rolloutWindow of its creation, is the trigger when
// the restored revision's pods run well; when they fail too, undoing it did
// not help and it argues against it.
func rollbackHit(d string, sets []revisionSet, pods map[string][]podState) (hit, bool) {
	if len(sets) < 2 {
		return hit{}, false
	}
	restored, undone := sets[0], sets[1]
	for _, s := range sets[1:] {
		if s.r.At.After(undone.r.At) {
			undone = s
		}
	}
	if !undone.r.At.After(restored.r.At) {
		return hit{}, false
	}
	// The restored revision's pods started again when it was restored; a
	// rollout undone long after it began had proven itself meanwhile.
	failing, healthy := 0, 0
	var restarted time.Time
	for _, p := range pods[restored.r.Labels["replicaset"]] {
		if p.failing {
			failing++
		} else {
			healthy++
		}
		if p.r.At.After(restarted) {
			restarted = p.r.At
		}
	}
	if !restarted.After(undone.r.At) || restarted.Sub(undone.r.At) > rolloutWindow {
		return hit{}, false
	}
	culprit := rolloutCulprit(undone.r)
	rev, back := strconv.Itoa(undone.revision), strconv.Itoa(restored.revision)
	switch {
	case failing > 0:
		return hit{cat: CategoryBadDeployment, stance: StanceRefutes, str: 0.5, roles: rDeploy, stated: true, culprit: culprit,
			what: fmt.Sprintf("revision %s of %s as trigger (rolled back as revision %s, whose pods fail as well)", rev, d, back), citation: undone.r.Line}, true
	case healthy > 0:
		return hit{cat: CategoryBadDeployment, stance: StanceSupports, str: 0.8, roles: rDeploy, stated: true, culprit: culprit, mech: MechanismOther,
			what: fmt.Sprintf("a rollout undone: revision %s of %s, rolled back as revision %s, whose %d containers run", rev, d, back, healthy), citation: undone.r.Line}, true
	}
	return hit{}, false
}

// imageTag is the tag of the first image of a revision's comma-separated
// images ("registry.example/checkout:2.15.0" → "2.15.0"), "" for none or a
// digest alone.
func imageTag(images string) string {
	img, _, _ := strings.Cut(images, ",")
	img, _, _ = strings.Cut(img, "@")
	if i := strings.LastIndexByte(img, ':'); i > strings.LastIndexByte(img, '/') {
		if tag := img[i+1:]; len(tag) >= 3 && tag != "latest" {
			return tag
		}
	}
	return ""
}

// failingLineNaming quotes the first failing line of the input that names
// tag, and its index; "" and -1 when none does.
func (c *corpus) failingLineNaming(tag string) (string, int) {
	t := strings.ToLower(tag)
	for i := range c.lines {
		l := &c.lines[i]
		if !l.recorded && l.src != "field" && errorishRe.MatchString(l.text) && containsToken(l.lower, t) {
			return shortQuote(l.text), i
		}
	}
	return "", -1
}

// servingRolloutHit weighs a rollout whose pods all run and serve: a code
// fault a handler recovers from (a panic middleware, a 500) does not fail
// the container. The rollout is still the release the failures come from
// when the failing lines name its image's version and not the previous
// revision's, beginning within rolloutWindow of it, as a recorded release
// is read.
func (c *corpus) servingRolloutHit(d string, sets []revisionSet, culprit *Culprit) (hit, bool) {
	if len(sets) < 2 {
		return hit{}, false
	}
	newest := sets[0]
	tag, prev := imageTag(newest.r.Labels["image"]), imageTag(sets[1].r.Labels["image"])
	if tag == "" || tag == prev {
		return hit{}, false
	}
	q, li := c.failingLineNaming(tag)
	if li < 0 {
		return hit{}, false
	}
	if prev != "" {
		if old, _ := c.failingLineNaming(prev); old != "" {
			return hit{}, false // the previous version fails as well
		}
	}
	failed, ok := firstStamp(c.lines[li].text)
	if !ok {
		return hit{}, false
	}
	gap, ok := minutesBetween(stampOf(newest.r.At), failed)
	if !ok || gap < -afterOnsetSlack || time.Duration(gap)*time.Minute > rolloutWindow {
		return hit{}, false
	}
	what := fmt.Sprintf("a rollout: revision %d of %s (%s), %s before the failures, which name its version: %s",
		newest.revision, d, tag, humanMinutes(max(gap, 0)), q)
	return hit{cat: CategoryBadDeployment, stance: StanceSupports, str: strVersionFails, roles: rDeploy, stated: true, what: what,
		citation: newest.r.Line, culprit: culprit, mech: MechanismOther}, true
}

// rolloutMechanismHits: once a rollout is the confirmed trigger, what the
// input then shows (OOM kills, throttling, an exhausted pool, slow queries)
// is what it set off, and the deployments agent says so against each such
// mechanism, as it does for a recorded change (mechanismHits).
func rolloutMechanismHits(c *corpus, readings []*Reading, rollouts []hit) []hit {
	trigger := confirmedTrigger(rollouts)
	if trigger == nil {
		return nil
	}
	shown := map[string]bool{}
	for _, h := range c.mechanisms() {
		shown[h.cat] = true
	}
	for _, role := range Roles {
		if role == RoleDeployments {
			continue
		}
		for _, h := range append(readingHits(readings, role), clusterHits(readings, role, c.in)...) {
			if h.stance == StanceSupports && h.str >= 0.4 && h.cat != "" && h.cat != CategoryBadDeployment && h.cat != CategoryConfigChange && h.cat != CategoryUnknown {
				shown[h.cat] = true
			}
		}
	}
	out := make([]hit, 0, len(shown))
	for _, cat := range sortedKeys(shown) {
		out = append(out, hit{cat: cat, stance: StanceRefutes, str: strMechanism, roles: rDeploy, stated: true, citation: trigger.citation,
			what: cat + " as the root cause (it is what the rollout set off)"})
	}
	return out
}
