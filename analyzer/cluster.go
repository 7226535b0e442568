package analyzer

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The reading of a Kubernetes cluster (docs/query-plans.md, Kubernetes): the
// objects' own state — container waiting reasons and their messages, the
// scheduler's FailedScheduling verdicts, the controllers' FailedCreate
// refusals, the kubelet's probe and pull events, Services against the pods
// they select, node conditions and the kube-system agents — becomes faults,
// each with the object to fix. Every pattern below is a string a Kubernetes
// component (v1.27–1.30) or containerd writes, never incident prose.

// fault is one failing object and what it explains.
type fault struct {
	cat, mech string
	culprit   Culprit
	str       float64
	cite      *Reading
	what      string
	// affects names the workloads and pods the fault leaves failing, for
	// ranking it against the symptom.
	affects []string
	// onset is when its first failure shows.
	onset time.Time
}

// kpod is one pod as the readings show it.
type kpod struct {
	ns, name, workload, node string
	pending                  *Reading
	containers               []*Reading
	events                   []*Reading
}

// cluster is what an agent's readings say of a cluster.
type cluster struct {
	pods      map[string]*kpod // by namespace/name
	order     []*kpod
	events    []*Reading
	workloads []*Reading
	services  []*Reading
	envs      []*Reading
	nodes     []*Reading
	agents    []*Reading
	quotas    []*Reading
	claims    []*Reading
	rollouts  []*Reading
	// now is the moment the readings describe (reference).
	now time.Time
}

// reference is the moment the readings describe: the pass's time when the
// cluster's own clock (its latest reading) is at most an hour behind it,
// else that clock — a snapshot read long after it was taken describes its
// own moment, not the reader's.
func (c *cluster) reference(at time.Time) time.Time {
	clock := c.clock()
	if at.IsZero() || clock.IsZero() || at.Sub(clock) > time.Hour || at.Before(clock) {
		return clock
	}
	return at
}

func (c *cluster) empty() bool {
	return len(c.order) == 0 && len(c.events) == 0 && len(c.nodes) == 0 && len(c.services) == 0 && len(c.workloads) == 0 && len(c.quotas) == 0 && len(c.claims) == 0
}

func (c *cluster) pod(ns, name string) *kpod {
	k := ns + "/" + name
	p := c.pods[k]
	if p == nil {
		p = &kpod{ns: ns, name: name}
		c.pods[k] = p
		c.order = append(c.order, p)
	}
	return p
}

// clusterOf collects the Kubernetes readings of an agent's excerpts.
func clusterOf(gathered []Excerpt) *cluster {
	c := &cluster{pods: map[string]*kpod{}}
	for _, r := range quotedReadings(gathered) {
		l := r.Labels
		switch r.Signal {
		case SignalContainerStatus:
			p := c.pod(l["namespace"], l["pod"])
			p.workload, p.node = l["workload"], l["node"]
			p.containers = append(p.containers, r)
		case SignalPodPending:
			p := c.pod(l["namespace"], l["pod"])
			p.workload, p.node, p.pending = l["workload"], l["node"], r
		case SignalK8sEvent:
			c.events = append(c.events, r)
		case SignalWorkload:
			c.workloads = append(c.workloads, r)
		case SignalServiceRouting:
			c.services = append(c.services, r)
		case SignalEnvAddress:
			c.envs = append(c.envs, r)
		case SignalNodeStatus:
			c.nodes = append(c.nodes, r)
		case SignalNodeAgent:
			c.agents = append(c.agents, r)
		case SignalQuota:
			c.quotas = append(c.quotas, r)
		case SignalVolumeClaim:
			c.claims = append(c.claims, r)
		case SignalRollout:
			c.rollouts = append(c.rollouts, r)
		}
	}
	for _, e := range c.events {
		if e.Labels["kind"] == "Pod" {
			p := c.pod(e.Labels["namespace"], e.Labels["name"])
			if p.workload == "" {
				p.workload = e.Labels["workload"]
			}
			p.events = append(p.events, e)
		}
	}
	return c
}

// workloadCulprit names a workload ("deployment/checkout") as a culprit.
func workloadCulprit(workload, ns, pod string) Culprit {
	kind, name, ok := strings.Cut(workload, "/")
	switch {
	case !ok && pod != "":
		return Culprit{Kind: KindPod, Name: pod, Namespace: ns}
	case kind == "deployment", kind == "statefulset", kind == "daemonset", kind == "pod":
		return Culprit{Kind: kind, Name: name, Namespace: ns}
	case kind == "replicaset":
		return Culprit{Kind: KindDeployment, Name: name, Namespace: ns}
	case kind == "job" && pod != "":
		return Culprit{Kind: KindPod, Name: pod, Namespace: ns}
	}
	return Culprit{Kind: KindService, Name: name, Namespace: ns}
}

// clusterHits turns an agent's cluster readings into findings: each fault
// found, ranked by how well it explains the alert, and against each fault
// kind the cluster shows none of, its healthy state.
func clusterHits(gathered []Excerpt, role string, in Input) []hit {
	c := clusterOf(gathered)
	if c.empty() {
		return nil
	}
	var faults []fault
	c.now = c.reference(in.At)
	for _, detect := range []func(*cluster) []fault{pendingFaults, admissionFaults, podFaults, probeFaults, serviceFaults, envFaults, nodeFaults, claimFaults, chaosFaults} {
		faults = append(faults, detect(c)...)
	}
	faults = explainChains(c, faults)
	faults = recent(c, faults)
	rank(faults, in)
	var out []hit
	perCat := map[string]int{}
	for _, f := range faults {
		str := f.str
		switch role {
		case domainOf(f.cat):
		case corroboratorOf(f.cat):
			str *= 0.5 // the same object seen from the next domain: a second, weaker witness
		default:
			continue
		}
		if f.cite == nil || perCat[f.cat] >= 3 {
			continue
		}
		perCat[f.cat]++
		cul := f.culprit
		out = append(out, hit{cat: f.cat, mech: f.mech, culprit: &cul, stance: StanceSupports, str: str, what: f.what,
			roles: []string{role}, citation: f.cite.Line, stated: true})
	}
	return append(out, healthyHits(c, faults, role)...)
}

// domainOf is the agent that speaks for a cluster fault: every agent that
// reads the cluster sees the same objects, and one object read three times
// is one witness, not three.
func domainOf(category string) string {
	switch category {
	case CategoryServiceMisrouting, CategoryNetworkDegradation, CategoryDNSFailure:
		return RoleNetwork
	}
	return RoleInfrastructure
}

// corroboratorOf is the agent that weighs a cluster fault second: the one
// whose domain the fault touches next (a workload's rollout, a node's
// network, a Service's pods).
func corroboratorOf(category string) string {
	switch category {
	case CategoryServiceMisrouting, CategoryNetworkDegradation, CategoryDNSFailure:
		return RoleInfrastructure
	case CategoryNodeFailure:
		return RoleNetwork
	}
	return RoleDeployments
}

// containerStaleAfter is how long before the cluster's latest reading a container
// must have last failed, and run ready since, for that failure to be over.
const containerStaleAfter = time.Hour

// recent drops container faults that ended long ago: a container that last
// terminated well before the cluster's latest reading and has run ready
// since is not what the alert is about.
func recent(c *cluster, faults []fault) []fault {
	clock := c.now
	if clock.IsZero() {
		return faults
	}
	out := faults[:0]
	for _, f := range faults {
		if r := f.cite; r != nil && r.Signal == SignalContainerStatus && r.Labels["ready"] == "true" && r.Labels["waiting"] == "" {
			if done, err := time.Parse(time.RFC3339, r.Labels["finished"]); err == nil && clock.Sub(done) > containerStaleAfter {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// clock is the cluster's own time: the latest moment its readings show (an
// event, a container's start or end, a node's heartbeat), so staleness is
// judged on the snapshot's clock, not the reader's.
func (c *cluster) clock() time.Time {
	var t time.Time
	later := func(x time.Time) {
		if x.After(t) {
			t = x
		}
	}
	for _, e := range c.events {
		later(e.At)
	}
	for _, p := range c.order {
		for _, r := range p.containers {
			later(r.At)
		}
	}
	for _, n := range c.nodes {
		if hb, err := time.Parse(time.RFC3339, n.Labels["heartbeat"]); err == nil {
			later(hb)
		}
	}
	return t
}

// rank orders faults by how well each explains the alert: the alert's own
// service or a named object among what a fault breaks raises it, so a
// Pending pod of the failing service outranks a restart elsewhere.
func rank(faults []fault, in Input) {
	alertText := strings.ToLower(in.Title + " " + in.Description + " " + in.Service)
	for _, k := range sortedKeys(in.Tags) {
		alertText += " " + strings.ToLower(in.Tags[k])
	}
	names := func(f fault) []string {
		out := []string{f.culprit.Name}
		for _, a := range f.affects {
			_, n, _ := strings.Cut(a, "/")
			out = append(out, n)
		}
		return out
	}
	for i := range faults {
		f := &faults[i]
		for _, n := range names(*f) {
			if n == "" {
				continue
			}
			if in.Service != "" && (n == in.Service || strings.HasPrefix(n, in.Service+"-")) {
				f.str += 0.04
				break
			}
			if len(n) > 3 && strings.Contains(alertText, strings.ToLower(n)) {
				f.str += 0.03
				break
			}
		}
		f.str = clamp01(f.str)
	}
	sort.SliceStable(faults, func(i, j int) bool { return faults[i].str > faults[j].str })
}

func clamp01(x float64) float64 {
	if x > 0.97 {
		return 0.97
	}
	if x < 0 {
		return 0
	}
	return x
}

// explainChains applies what one fault says about another: a node that is
// down explains every pod failing on it, so their own faults step back; a
// workload refused by admission or left unscheduled explains its missing
// pods.
func explainChains(c *cluster, faults []fault) []fault {
	down := map[string]bool{}
	for _, f := range faults {
		if f.cat == CategoryNodeFailure && f.culprit.Kind == KindNode {
			down[f.culprit.Name] = true
		}
	}
	if len(down) == 0 {
		return faults
	}
	out := faults[:0]
	for _, f := range faults {
		if f.cat != CategoryNodeFailure && len(f.affects) > 0 {
			onDown := true
			for _, a := range f.affects {
				p := c.podByName(a)
				onDown = onDown && p != nil && down[p.node]
			}
			if onDown {
				continue // the node's failure is why
			}
		}
		out = append(out, f)
	}
	return out
}

func (c *cluster) podByName(ref string) *kpod {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || kind != "pod" {
		return nil
	}
	for _, p := range c.order {
		if p.name == name {
			return p
		}
	}
	return nil
}

// ---- scheduling ---------------------------------------------------------

// schedReasonRe is one "<n> <reason>" term of a FailedScheduling message
// ("0/4 nodes are available: 1 node(s) were unschedulable, 3 Insufficient
// cpu."), as kube-scheduler's framework writes it.
var schedReasonRe = regexp.MustCompile(`(\d+) ((?:node\(s\)|Insufficient|Too many)[^,]*)`)

var taintRe = regexp.MustCompile(`taint \{([^:}]+)`)

// schedVerdict reads a FailedScheduling message: the mechanism that keeps
// the pod off every node, and the taint it names, if that is the reason.
// Reasons that are the pod's own placement rules (a node selector, an
// affinity) only decide when nothing about the nodes does: a pod pinned to
// nodes that are cordoned or full is kept off by the cordon or the lack of
// room, not by its pin.
func schedVerdict(msg string, pod *Reading) (mech, taint string, ok bool) {
	msg, _, _ = strings.Cut(msg, "preemption:")
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "unbound immediate persistentvolumeclaims"), strings.Contains(lower, "volume node affinity conflict"),
		strings.Contains(lower, "didn't find available persistent volumes"), strings.Contains(lower, "persistentvolumeclaim") && strings.Contains(lower, "not found"),
		strings.Contains(lower, "waiting for first consumer") && strings.Contains(lower, "volume"):
		return "volume_binding", "", true
	}
	type term struct {
		mech  string
		n     int
		taint string
		pin   bool
	}
	var terms []term
	for _, m := range schedReasonRe.FindAllStringSubmatch(msg, -1) {
		n, _ := strconv.Atoi(m[1])
		t := strings.ToLower(m[2])
		switch {
		case strings.Contains(t, "insufficient cpu"):
			terms = append(terms, term{mech: "insufficient_cpu", n: n})
		case strings.Contains(t, "insufficient memory"):
			terms = append(terms, term{mech: "insufficient_memory", n: n})
		case strings.Contains(t, "were unschedulable"):
			terms = append(terms, term{mech: "node_cordoned", n: n})
		case strings.Contains(t, "taint"):
			key := ""
			if tm := taintRe.FindStringSubmatch(m[2]); tm != nil {
				key = strings.TrimSpace(tm[1])
			}
			switch key {
			case "node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master":
				continue // the control plane keeps workloads off by design
			case "node.kubernetes.io/unschedulable":
				terms = append(terms, term{mech: "node_cordoned", n: n})
			case "node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready":
				terms = append(terms, term{mech: "node_down", n: n, taint: key})
			default:
				terms = append(terms, term{mech: "taint_not_tolerated", n: n, taint: key})
			}
		case strings.Contains(t, "anti-affinity"):
			terms = append(terms, term{mech: "pod_anti_affinity", n: n, pin: true})
		case strings.Contains(t, "pod affinity"):
			terms = append(terms, term{mech: "node_affinity_mismatch", n: n, pin: true})
		case strings.Contains(t, "node affinity/selector"), strings.Contains(t, "node selector"), strings.Contains(t, "node affinity"):
			mech := "node_selector_mismatch"
			if pod != nil && strings.Contains(pod.Labels["affinity"], "node") && pod.Labels["node_selector"] == "" {
				mech = "node_affinity_mismatch"
			}
			terms = append(terms, term{mech: mech, n: n, pin: true})
		case strings.HasPrefix(t, "insufficient"), strings.HasPrefix(t, "too many"):
			terms = append(terms, term{mech: MechanismOther, n: n})
		case strings.Contains(t, "didn't have free ports"):
			terms = append(terms, term{mech: MechanismOther, n: n})
		}
	}
	if len(terms) == 0 {
		return "", "", false
	}
	best := -1
	for pass := 0; pass < 2 && best < 0; pass++ {
		for i, t := range terms {
			if pass == 0 && t.pin {
				continue
			}
			if best < 0 || t.n > terms[best].n {
				best = i
			}
		}
	}
	return terms[best].mech, terms[best].taint, true
}

// pendingFaults: pods the scheduler cannot place, by its own verdict (the
// pod's PodScheduled condition, else its FailedScheduling event).
func pendingFaults(c *cluster) []fault {
	var out []fault
	seen := map[string]bool{}
	podsKnown := false
	for _, p := range c.order {
		podsKnown = podsKnown || p.pending != nil || len(p.containers) > 0
	}
	for _, p := range c.order {
		msg, cite := "", p.pending
		switch {
		case p.pending != nil && p.pending.Labels["scheduled"] == "true":
			continue
		case p.pending != nil:
			msg = p.pending.Labels["message"]
		case podsKnown:
			continue // scheduled since its FailedScheduling events, or gone
		}
		for _, e := range p.events {
			if e.Labels["reason"] == "FailedScheduling" {
				if msg == "" {
					msg = e.Labels["message"]
				}
				if cite == nil {
					cite = e
				}
			}
		}
		if msg == "" {
			continue
		}
		mech, taint, ok := schedVerdict(msg, p.pending)
		if !ok || seen[p.workload+mech] {
			continue
		}
		seen[p.workload+mech] = true
		f := fault{cat: CategorySchedulingFailure, mech: mech, culprit: workloadCulprit(p.workload, p.ns, p.name), str: 0.9, cite: cite,
			affects: []string{"pod/" + p.name, p.workload}, onset: cite.At,
			what: fmt.Sprintf("pods of %s the scheduler cannot place (%s)", p.workload, strings.ReplaceAll(mech, "_", " "))}
		switch mech {
		case "node_cordoned":
			if n := c.cordoned(p); n != "" {
				f.culprit = Culprit{Kind: KindNode, Name: n}
			}
		case "volume_binding":
			if pvc := c.unboundClaim(p); pvc != "" {
				f.culprit = Culprit{Kind: KindPersistentVolumeClaim, Name: pvc, Namespace: p.ns}
			}
		case "node_down":
			f.cat, f.mech, f.str = CategoryNodeFailure, "node_not_ready", 0.7
			f.what = fmt.Sprintf("pods of %s kept off nodes tainted %s", p.workload, taint)
			if n := c.taintedNode(taint); n != "" {
				f.culprit = Culprit{Kind: KindNode, Name: n}
			}
		}
		if mech == MechanismOther {
			f.str = 0.7
		}
		out = append(out, f)
	}
	return out
}

// cordoned names the cordoned node a pending pod waits for: the one its
// node selector names, else the only cordoned node.
func (c *cluster) cordoned(p *kpod) string {
	var nodes []string
	for _, n := range c.nodes {
		if n.Labels["unschedulable"] == "true" || strings.Contains(n.Labels["taints"], "node.kubernetes.io/unschedulable") {
			nodes = append(nodes, n.Labels["node"])
		}
	}
	if p.pending != nil {
		for _, n := range nodes {
			if strings.Contains(p.pending.Labels["node_selector"], "="+n) {
				return n
			}
		}
	}
	if len(nodes) > 0 {
		return nodes[0]
	}
	return ""
}

func (c *cluster) taintedNode(taint string) string {
	for _, n := range c.nodes {
		if strings.Contains(n.Labels["taints"], taint) {
			return n.Labels["node"]
		}
	}
	return ""
}

// unboundClaim names the claim of a pod that is not Bound.
func (c *cluster) unboundClaim(p *kpod) string {
	var claims []string
	if p.pending != nil && p.pending.Labels["claims"] != "" {
		claims = strings.Split(p.pending.Labels["claims"], ",")
	}
	for _, cl := range c.claims {
		if cl.Value < 1 && (len(claims) == 0 || contains(claims, cl.Labels["pvc"])) {
			return cl.Labels["pvc"]
		}
	}
	if len(claims) > 0 {
		return claims[0]
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ---- admission ----------------------------------------------------------

// Refusals of the API server's admission chain, as the replicaset,
// statefulset, daemonset and job controllers report them in FailedCreate
// events and a Deployment's ReplicaFailure condition.
var (
	quotaExceededRe = regexp.MustCompile(`exceeded quota: ([a-z0-9][-a-z0-9.]*)`)
	quotaFailedRe   = regexp.MustCompile(`failed quota: ([a-z0-9][-a-z0-9.]*)`)
	saMissingRe     = regexp.MustCompile(`error looking up service account [a-z0-9-]+/([a-z0-9][-a-z0-9.]*)|serviceaccount "([a-z0-9][-a-z0-9.]*)" not found`)
	webhookRe       = regexp.MustCompile(`admission webhook "([^"]+)" denied the request|failed calling webhook "([^"]+)"`)
	policyRe        = regexp.MustCompile(`violates PodSecurity|(maximum|minimum) (cpu|memory|ephemeral-storage) usage per (Container|Pod)|security context constraint|is forbidden: .*(must not|not allowed|denied)`)
)

func admissionVerdict(msg string) (mech, object string, ok bool) {
	switch {
	case quotaExceededRe.MatchString(msg):
		return "quota_exceeded", quotaExceededRe.FindStringSubmatch(msg)[1], true
	case quotaFailedRe.MatchString(msg):
		return "quota_exceeded", quotaFailedRe.FindStringSubmatch(msg)[1], true
	case saMissingRe.MatchString(msg):
		m := saMissingRe.FindStringSubmatch(msg)
		return "service_account_missing", firstOr(m[1], m[2]), true
	case webhookRe.MatchString(msg):
		m := webhookRe.FindStringSubmatch(msg)
		return "webhook_denied", firstOr(m[1], m[2]), true
	case policyRe.MatchString(msg):
		return "policy_denied", "", true
	}
	return "", "", false
}

// admissionFaults: pods a controller could not create because admission
// refused them — a ResourceQuota, a missing ServiceAccount, a webhook, a
// policy — and ServiceAccounts a workload names that do not exist.
func admissionFaults(c *cluster) []fault {
	var out []fault
	seen := map[string]bool{}
	add := func(r *Reading, workload, ns, msg string) {
		mech, obj, ok := admissionVerdict(msg)
		if !ok || seen[workload+mech] {
			return
		}
		seen[workload+mech] = true
		f := fault{cat: CategoryAdmissionRejected, mech: mech, culprit: workloadCulprit(workload, ns, ""), str: 0.9, cite: r,
			affects: []string{workload}, onset: firstSeen(r), what: fmt.Sprintf("the API server refusing the pods of %s (%s)", workload, strings.ReplaceAll(mech, "_", " "))}
		switch mech {
		case "quota_exceeded":
			f.culprit = Culprit{Kind: KindResourceQuota, Name: obj, Namespace: ns}
		case "service_account_missing":
			f.culprit = Culprit{Kind: KindServiceAccount, Name: obj, Namespace: ns}
		case "policy_denied":
			f.str = 0.85
		}
		out = append(out, f)
	}
	for _, e := range c.events {
		if e.Labels["reason"] == "FailedCreate" {
			add(e, e.Labels["workload"], e.Labels["namespace"], e.Labels["message"])
		}
	}
	for _, w := range c.workloads {
		if w.Labels["condition"] == "ReplicaFailure=True" {
			add(w, w.Labels["workload"], w.Labels["namespace"], w.Labels["message"])
		}
		if w.Labels["serviceaccount_missing"] == "true" && w.Value < w.Limit && !seen[w.Labels["workload"]+"service_account_missing"] {
			seen[w.Labels["workload"]+"service_account_missing"] = true
			out = append(out, fault{cat: CategoryAdmissionRejected, mech: "service_account_missing", str: 0.8, cite: w,
				culprit: Culprit{Kind: KindServiceAccount, Name: w.Labels["serviceaccount"], Namespace: w.Labels["namespace"]},
				affects: []string{w.Labels["workload"]}, what: fmt.Sprintf("%s running as service account %s, which does not exist", w.Labels["workload"], w.Labels["serviceaccount"])})
		}
	}
	return out
}

func firstSeen(r *Reading) time.Time {
	if t, err := time.Parse(time.RFC3339, r.Labels["first"]); err == nil {
		return t
	}
	return r.At
}

// ---- containers -----------------------------------------------------------

// Image pull failures, as the kubelet reports containerd's and the
// registries' errors: a reference the registry does not have, a refused
// credential, a registry out of reach.
var (
	pullWaitingReasons = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true, "ImageInspectError": true}
	pullNotFoundRe     = regexp.MustCompile(`(?i)\bnot found\b|manifest unknown|code = NotFound|repository does not exist|name unknown|invalid reference format|couldn't parse image|InvalidImageName|failed to apply default image tag`)
	pullAuthRe         = regexp.MustCompile(`(?i)401 Unauthorized|403 Forbidden|unauthorized|authentication required|authorization failed|no basic auth credentials|access to the resource is denied|insufficient_scope|pull access denied`)
	pullReachRe        = regexp.MustCompile(`(?i)dial tcp|i/o timeout|no such host|connection refused|TLS handshake timeout|x509:|context deadline exceeded|server misbehaving|network is unreachable|503 Service Unavailable|connection reset`)
	configMissingRe    = regexp.MustCompile(`(?i)(configmap|secret) "[^"]+" not found|couldn't find key \S+ in (ConfigMap|Secret)`)
)

// podFaults: what a pod's containers show — an image that cannot be pulled,
// configuration it needs that is missing, the OOM killer's kills — one per
// workload and mechanism.
func podFaults(c *cluster) []fault {
	var out []fault
	seen := map[string]bool{}
	for _, p := range c.order {
		killedByProbe := p.killedByProbe()
		for _, r := range p.containers {
			l := r.Labels
			var f *fault
			switch {
			case pullWaitingReasons[l["waiting"]]:
				msgs := l["message"]
				secretMissing := false
				for _, e := range p.events {
					if strings.Contains(e.Labels["message"], "pull image") || strings.Contains(e.Labels["message"], "pulling image") {
						msgs += "\n" + e.Labels["message"]
					}
					secretMissing = secretMissing || e.Labels["reason"] == "FailedToRetrieveImagePullSecret"
				}
				mech, str := "image_not_found", 0.75
				switch {
				case secretMissing:
					mech, str = "pull_secret_missing", 0.9
				case pullNotFoundRe.MatchString(msgs) && !pullAuthRe.MatchString(msgs):
					mech, str = "image_not_found", 0.9
				case pullAuthRe.MatchString(msgs):
					mech, str = "pull_secret_missing", 0.88
				case pullReachRe.MatchString(msgs):
					mech, str = "registry_unreachable", 0.88
				case l["waiting"] == "InvalidImageName":
					mech, str = "image_not_found", 0.88
				}
				f = &fault{cat: CategoryImagePullFailure, mech: mech, str: str, what: fmt.Sprintf("image %s of %s that cannot be pulled", l["image"], p.workload)}
			case l["waiting"] == "CreateContainerConfigError" && configMissingRe.MatchString(l["message"]):
				f = &fault{cat: CategoryConfigChange, mech: MechanismOther, str: 0.82, what: fmt.Sprintf("configuration %s needs and that does not exist", p.workload)}
			case strings.EqualFold(l["reason"], "OOMKilled"):
				restarts, _ := strconv.ParseFloat(strconv.Itoa(int(r.Value)), 64)
				f = &fault{cat: CategoryMemoryExhaustion, mech: "oom_killed", str: ramp(restarts, 1, 5, 0.88, 0.93),
					what: fmt.Sprintf("container %s of %s terminated as OOMKilled (exit code %s) after %s restart(s)", l["container"], p.workload, firstOr(l["exit_code"], "137"), formatValue(r.Value, UnitCount, r.At))}
			case l["exit_code"] == "137" && !killedByProbe && r.Value >= 1:
				f = &fault{cat: CategoryMemoryExhaustion, mech: "oom_killed", str: 0.55,
					what: fmt.Sprintf("container %s of %s killed with exit code 137 (SIGKILL, as the OOM killer sends)", l["container"], p.workload)}
			}
			if f == nil || seen[p.workload+f.cat+f.mech] {
				continue
			}
			seen[p.workload+f.cat+f.mech] = true
			f.culprit, f.cite, f.affects, f.onset = workloadCulprit(p.workload, p.ns, p.name), r, []string{"pod/" + p.name, p.workload}, r.At
			out = append(out, *f)
		}
	}
	return out
}

// killedByProbe tells whether the kubelet restarted the pod's container for
// a failed liveness or startup probe (its Killing event), which explains an
// exit code 137 without the OOM killer.
func (p *kpod) killedByProbe() bool {
	for _, e := range p.events {
		m := e.Labels["message"]
		if e.Labels["reason"] == "Killing" && (strings.Contains(m, "failed liveness probe") || strings.Contains(m, "failed startup probe")) {
			return true
		}
		if e.Labels["reason"] == "Unhealthy" && (strings.HasPrefix(m, "Liveness probe failed") || strings.HasPrefix(m, "Startup probe failed")) {
			return true
		}
	}
	return false
}

// ---- probes ---------------------------------------------------------------

// The kubelet's probe results: "Liveness probe failed: Get
// \"http://10.244.1.5:8081/healthz\": dial tcp 10.244.1.5:8081: connect:
// connection refused", "Readiness probe failed: HTTP probe failed with
// statuscode: 404", "… context deadline exceeded (Client.Timeout exceeded
// while awaiting headers)".
var (
	probeKindRe   = regexp.MustCompile(`^(Liveness|Readiness|Startup) probe (?:failed|errored)`)
	probePortRe   = regexp.MustCompile(`(?:https?://|dial tcp |tcp )\[?[0-9a-f.:]*?\]?:(\d+)`)
	probeStatusRe = regexp.MustCompile(`statuscode: (\d+)`)
	probeSlowRe   = regexp.MustCompile(`(?i)context deadline exceeded|Client\.Timeout exceeded|awaiting headers|timed out|timeout: failed to connect|command timed out`)
	probeLossRe   = regexp.MustCompile(`(?i)i/o timeout|connection reset by peer|no route to host|broken pipe|\bEOF\b|network is unreachable|connection timed out`)
)

type probeSeen struct {
	kind        string // liveness, readiness, startup
	port        string
	refused     bool
	status      int
	slow, lossy int
	exec        bool
	n           int
	cite        *Reading
}

// probeFaults: a workload whose probe fails the way a wrong probe fails
// (nothing listens on the port it asks, a path the app does not serve, a
// command that does not exist), or the way a slowed or lossy network makes a
// right probe fail (timeouts, resets on the port the container serves).
func probeFaults(c *cluster) []fault {
	type acc struct {
		p      *kpod
		seen   map[string]*probeSeen
		ports  string
		probes map[string]string
		pods   []string
		last   time.Time
	}
	byWorkload := map[string]*acc{}
	var order []string
	for _, p := range c.order {
		for _, e := range p.events {
			m := e.Labels["message"]
			km := probeKindRe.FindStringSubmatch(m)
			if e.Labels["reason"] != "Unhealthy" || km == nil {
				continue
			}
			a := byWorkload[p.workload]
			if a == nil {
				a = &acc{p: p, seen: map[string]*probeSeen{}, probes: map[string]string{}}
				byWorkload[p.workload] = a
				order = append(order, p.workload)
			}
			if !contains(a.pods, p.name) {
				a.pods = append(a.pods, p.name)
			}
			for _, cr := range p.containers {
				if cr.Labels["ports"] != "" || cr.Labels["liveness"] != "" || cr.Labels["readiness"] != "" {
					a.ports = firstOr(a.ports, cr.Labels["ports"])
					for _, k := range []string{"liveness", "readiness", "startup"} {
						if cr.Labels[k] != "" {
							a.probes[k] = cr.Labels[k]
						}
					}
				}
			}
			if e.At.After(a.last) {
				a.last = e.At
			}
			kind := strings.ToLower(km[1])
			s := a.seen[kind]
			if s == nil {
				s = &probeSeen{kind: kind, cite: e}
				a.seen[kind] = s
			}
			n := int(e.Value)
			s.n += n
			if pm := probePortRe.FindStringSubmatch(m); pm != nil {
				s.port = pm[1]
			}
			switch {
			case strings.Contains(m, "connection refused"):
				s.refused = true
			case probeStatusRe.MatchString(m):
				s.status, _ = strconv.Atoi(probeStatusRe.FindStringSubmatch(m)[1])
			case probeSlowRe.MatchString(m) && !strings.Contains(m, "i/o timeout"):
				s.slow += n
			case probeLossRe.MatchString(m):
				s.lossy += n
			case strings.Contains(m, "exec") || strings.Contains(m, "No such file") || strings.Contains(m, "not found"):
				s.exec = true
			}
		}
	}
	var out []fault
	for _, wl := range order {
		a := byWorkload[wl]
		if c.recovered(a.pods) && c.before(a.last, probeStaleAfter) {
			continue // the probes failed once (a node's flap, a slow start) and the pods are fine since
		}
		kind := ""
		for _, k := range []string{"liveness", "startup", "readiness"} {
			if a.seen[k] != nil {
				kind = k
				break
			}
		}
		s := a.seen[kind]
		mech := "liveness_misconfigured"
		if kind == "readiness" {
			mech = "readiness_misconfigured"
		}
		f := fault{cat: CategoryProbeFailure, mech: mech, culprit: workloadCulprit(wl, a.p.ns, a.p.name), cite: s.cite, affects: append([]string{wl}, prefixed("pod/", a.pods)...), onset: firstSeen(s.cite)}
		exposed := a.ports == "" || s.port == "" || portListed(a.ports, s.port)
		slow, lossy := 0, 0
		for _, x := range a.seen {
			slow, lossy = slow+x.slow, lossy+x.lossy
		}
		switch {
		case s.port != "" && !exposed:
			f.str, f.what = 0.92, fmt.Sprintf("the %s probe of %s asking port %s, which its containers do not expose (%s)", kind, wl, s.port, a.ports)
		case s.exec:
			f.str, f.what = 0.85, fmt.Sprintf("the %s probe command of %s failing", kind, wl)
		case s.status == 404:
			f.str, f.what = 0.88, fmt.Sprintf("the %s probe of %s asking a path the app does not serve (404)", kind, wl)
		case s.refused:
			f.str, f.what = 0.78, fmt.Sprintf("the %s probe of %s refused on port %s", kind, wl, s.port)
		case s.status >= 400:
			f.str, f.what = 0.72, fmt.Sprintf("the %s probe of %s answered %d", kind, wl, s.status)
		case slow > 0 || lossy > 0:
			f.cat, f.mech, f.str = CategoryNetworkDegradation, "added_latency", 0.8
			f.what = fmt.Sprintf("probes of %s timing out on the port it serves, as traffic to it slows", wl)
			if lossy > slow {
				f.mech = "packet_loss"
				f.what = fmt.Sprintf("probes of %s losing connections (resets, dial timeouts) on the port it serves", wl)
			}
			if n := len(a.pods); n > 1 {
				f.str += 0.04
			}
		default:
			f.str, f.what = 0.6, fmt.Sprintf("the %s probe of %s failing", kind, wl)
		}
		out = append(out, f)
	}
	return out
}

// probeStaleAfter is how long before the readings' moment a probe must
// have last failed, on pods fine since, for its failures to be over.
const probeStaleAfter = 10 * time.Minute

// before tells whether t is more than d before the readings' moment; with
// no moment known, it is not.
func (c *cluster) before(t time.Time, d time.Duration) bool {
	return !c.now.IsZero() && !t.IsZero() && c.now.Sub(t) > d
}

// recovered tells pods whose containers run, ready and never restarted:
// whatever their probes reported in the past did not last.
func (c *cluster) recovered(pods []string) bool {
	for _, name := range pods {
		var p *kpod
		for _, x := range c.order {
			if x.name == name {
				p = x
			}
		}
		if p == nil || p.pending != nil || len(p.containers) == 0 {
			return false
		}
		for _, r := range p.containers {
			if r.Labels["ready"] != "true" || r.Value > 0 || r.Labels["waiting"] != "" {
				return false
			}
		}
	}
	return len(pods) > 0
}

func prefixed(prefix string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = prefix + x
	}
	return out
}

// portListed tells whether port is in a container reading's ports label
// ("http=8080/TCP,9090/TCP").
func portListed(ports, port string) bool {
	for _, p := range strings.Split(ports, ",") {
		if _, after, ok := strings.Cut(p, "="); ok {
			p = after
		}
		num, _, _ := strings.Cut(p, "/")
		if num == port {
			return true
		}
	}
	return false
}

// ---- Services and addresses ----------------------------------------------

// serviceFaults: Services that route nowhere: a selector no pod matches, a
// targetPort no selected container exposes, a protocol they do not speak.
func serviceFaults(c *cluster) []fault {
	var out []fault
	for _, s := range c.services {
		l := s.Labels
		mech, str := "", 0.0
		switch l["issue"] {
		case "selector":
			mech, str = "selector_mismatch", 0.9
		case "target_port":
			mech, str = "port_mismatch", 0.88
		case "protocol":
			mech, str = "protocol_mismatch", 0.85
		default:
			continue
		}
		f := fault{cat: CategoryServiceMisrouting, mech: mech, culprit: Culprit{Kind: KindService, Name: l["service"], Namespace: l["namespace"]}, str: str, cite: s,
			what: fmt.Sprintf("Service %s routing nowhere: %s", l["service"], l["detail"])}
		for _, e := range c.envs {
			if e.Labels["host"] == l["service"] {
				f.affects = append(f.affects, e.Labels["workload"])
			}
		}
		out = append(out, f)
	}
	return out
}

// envFaults: workloads configured with an address that names no Service of
// their namespace, or a port the Service does not serve; stronger when the
// workload is failing.
func envFaults(c *cluster) []fault {
	var out []fault
	seen := map[string]bool{}
	callers := map[string][]string{} // host → the workloads configured with it
	for _, e := range c.envs {
		if !contains(callers[e.Labels["host"]], e.Labels["workload"]) {
			callers[e.Labels["host"]] = append(callers[e.Labels["host"]], e.Labels["workload"])
		}
	}
	for _, e := range c.envs {
		wl := e.Labels["workload"]
		if seen[wl] {
			continue
		}
		seen[wl] = true
		// A port the Service does not serve is wrong outright; a name no
		// Service of the namespace has may be reached some other way (an
		// ExternalName elsewhere, a search domain), so it needs the caller
		// to fail; and a name another workload calls while healthy resolves.
		str := 0.72
		if e.Labels["issue"] == "port" {
			str = 0.8
		}
		if c.crashing(wl) {
			str = 0.88
		}
		for _, other := range callers[e.Labels["host"]] {
			if other != wl && !c.failing(other) {
				str = 0.5
			}
		}
		out = append(out, fault{cat: CategoryServiceMisrouting, mech: "wrong_address", culprit: workloadCulprit(wl, e.Labels["namespace"], e.Labels["pod"]), str: str, cite: e,
			affects: []string{wl}, what: fmt.Sprintf("%s configured to call %s: %s", wl, e.Labels["address"], e.Labels["detail"])})
	}
	return out
}

// crashing tells whether a workload's pods started and fail: restarting,
// or running and not ready — what a wrong address makes of a workload, and
// not a pod that never started (unscheduled, image not pulled).
func (c *cluster) crashing(workload string) bool {
	for _, p := range c.order {
		if p.workload != workload || p.pending != nil {
			continue
		}
		for _, r := range p.containers {
			w := r.Labels["waiting"]
			if pullWaitingReasons[w] || w == "CreateContainerConfigError" || w == "ContainerCreating" {
				continue
			}
			if w == "CrashLoopBackOff" || r.Labels["ready"] == "false" && r.Labels["phase"] == "Running" {
				return true
			}
		}
	}
	return false
}

// failing tells whether a workload's pods are in trouble: not ready,
// restarting or waiting.
func (c *cluster) failing(workload string) bool {
	for _, p := range c.order {
		if p.workload != workload {
			continue
		}
		if p.pending != nil {
			return true
		}
		for _, r := range p.containers {
			if r.Labels["ready"] == "false" || r.Labels["waiting"] != "" {
				return true
			}
		}
	}
	for _, w := range c.workloads {
		if w.Labels["workload"] == workload && w.Value < w.Limit {
			return true
		}
	}
	return false
}

// ---- nodes ------------------------------------------------------------------

// The kubelet's and node controller's words for a node that is down: the
// Ready condition Unknown when the kubelet stopped posting, False with the
// runtime's or the network plugin's complaint when it still posts.
var (
	runtimeDownRe = regexp.MustCompile(`(?i)container runtime is down|container runtime not ready|runtime is down|PLEG is not healthy|container runtime status check may not have completed|ContainerRuntimeNotReady|failed to get container runtime status`)
	cniDownRe     = regexp.MustCompile(`(?i)network plugin|NetworkPluginNotReady|cni (plugin|config)|NetworkReady=false`)
)

// nodeFaults: nodes not Ready, and the kube-system agents that keep nodes
// and the control plane working when one is down.
func nodeFaults(c *cluster) []fault {
	var out []fault
	for _, n := range c.nodes {
		l := n.Labels
		if l["ready"] == "True" {
			continue
		}
		f := fault{cat: CategoryNodeFailure, mech: "node_not_ready", culprit: Culprit{Kind: KindNode, Name: l["node"]}, str: 0.88, cite: n, onset: n.At}
		msg := l["reason"] + " " + l["message"]
		problems := l["problems"]
		switch {
		// A node whose kubelet stopped posting looks the same as a machine
		// that is gone, unless something else on it still reports: then it
		// is the kubelet (or the runtime) that died.
		case strings.Contains(problems, "ContainerRuntimeUnhealthy") || strings.Contains(problems, "FrequentContainerdRestart") || strings.Contains(problems, "FrequentDockerRestart"):
			f.mech, f.str = "container_runtime_down", 0.9
		case strings.Contains(problems, "KubeletUnhealthy") || strings.Contains(problems, "FrequentKubeletRestart"):
			f.mech, f.str = "kubelet_down", 0.9
		case l["ready"] == "Unknown" && l["alive"] == "true":
			f.mech, f.str = "kubelet_down", 0.88
		case runtimeDownRe.MatchString(msg):
			f.mech, f.str = "container_runtime_down", 0.9
		case cniDownRe.MatchString(msg):
			f.mech = "node_not_ready"
		}
		f.what = fmt.Sprintf("node %s not Ready (%s)", l["node"], strings.ReplaceAll(f.mech, "_", " "))
		f.affects = c.podsOn(l["node"])
		out = append(out, f)
	}
	down := map[string]bool{}
	for _, f := range out {
		down[f.culprit.Name] = true
	}
	for _, a := range c.agents {
		l := a.Labels
		if down[l["node"]] {
			continue // a node that is down takes its agents with it
		}
		comp := l["component"]
		f := fault{cat: CategoryNodeFailure, cite: a, str: 0.86, onset: a.At}
		switch comp {
		case "kube-proxy":
			f.mech, f.culprit = "kube_proxy_down", Culprit{Kind: KindNode, Name: l["node"]}
			f.affects = c.podsOn(l["node"])
		case "kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager":
			f.mech, f.culprit, f.str = "control_plane_down", Culprit{Kind: KindPod, Name: l["pod"], Namespace: "kube-system"}, 0.88
			if comp == "kube-scheduler" {
				for _, p := range c.order {
					if p.pending != nil && p.pending.Labels["scheduled"] == "unknown" {
						f.affects = append(f.affects, "pod/"+p.name)
						f.str = 0.92
					}
				}
			}
		case "coredns":
			f.cat, f.mech, f.culprit, f.str = CategoryDNSFailure, MechanismOther, workloadCulprit(firstOr(l["workload"], "deployment/coredns"), "kube-system", l["pod"]), 0.8
		default: // the network plugin's pod on a node
			f.mech, f.culprit, f.str = "node_not_ready", Culprit{Kind: KindNode, Name: l["node"]}, 0.78
			f.affects = c.podsOn(l["node"])
		}
		if f.culprit.Name == "" {
			continue
		}
		f.what = fmt.Sprintf("%s not running (%s)", comp, l["detail"])
		out = append(out, f)
	}
	return out
}

func (c *cluster) podsOn(node string) []string {
	var out []string
	for _, p := range c.order {
		if p.node == node && node != "" {
			out = append(out, "pod/"+p.name)
		}
	}
	return out
}

// ---- storage ----------------------------------------------------------------

// claimFaults: claims that do not bind, stronger when the StorageClass they
// ask for does not exist; a pod waiting on one is read by pendingFaults.
func claimFaults(c *cluster) []fault {
	var out []fault
	for _, cl := range c.claims {
		if cl.Value >= 1 {
			continue
		}
		str := 0.55
		if cl.Labels["issue"] != "" {
			str = 0.8
		}
		out = append(out, fault{cat: CategorySchedulingFailure, mech: "volume_binding", str: str, cite: cl,
			culprit: Culprit{Kind: KindPersistentVolumeClaim, Name: cl.Labels["pvc"], Namespace: cl.Labels["namespace"]},
			what:    fmt.Sprintf("claim %s not bound (%s)", cl.Labels["pvc"], firstOr(cl.Labels["issue"], cl.Labels["phase"]))})
	}
	return out
}

// ---- healthy state ----------------------------------------------------------

// healthyHits argue against each Kubernetes fault kind the readings show
// none of, citing a healthy object of that kind, so a healthy namespace
// rules them out rather than leaving them open.
func healthyHits(c *cluster, faults []fault, role string) []hit {
	found := map[string]bool{}
	for _, f := range faults {
		found[f.cat] = true
	}
	var out []hit
	refute := func(cat string, r *Reading, what string) {
		if found[cat] || r == nil || domainOf(cat) != role {
			return
		}
		out = append(out, hit{cat: cat, stance: StanceRefutes, str: 0.3, what: what, roles: []string{role}, citation: r.Line, stated: true})
	}
	var readyNode, routed, running *Reading
	for _, n := range c.nodes {
		if n.Labels["ready"] == "True" && readyNode == nil {
			readyNode = n
		}
	}
	allReady := readyNode != nil
	for _, n := range c.nodes {
		allReady = allReady && n.Labels["ready"] == "True"
	}
	if allReady && len(c.agents) == 0 {
		refute(CategoryNodeFailure, readyNode, "nodes down (every node Ready)")
	}
	for _, s := range c.services {
		if s.Labels["issue"] == "" && routed == nil {
			routed = s
		}
	}
	if len(c.envs) == 0 {
		refute(CategoryServiceMisrouting, routed, "Services routing nowhere")
	}
	pending := false
	for _, p := range c.order {
		pending = pending || p.pending != nil
		for _, r := range p.containers {
			if r.Labels["ready"] == "true" && r.Value == 0 && running == nil {
				running = r
			}
		}
	}
	if !pending {
		refute(CategorySchedulingFailure, running, "pods the scheduler cannot place")
		refute(CategoryImagePullFailure, running, "images that cannot be pulled")
	}
	return out
}

// ---- fault injection ----------------------------------------------------------

// The fault-injection tools' own words: Chaos Mesh's NetworkChaos events
// ("Successfully apply chaos for shop/checkout-…"), Litmus's experiments
// (pod-network-latency, pod-network-loss…) and the tc netem command its
// helper pods apply ("delay 2000ms", "loss 35").
var (
	chaosAppliedRe = regexp.MustCompile(`(?i)successfully apply chaos for ([a-z0-9-]+)/([a-z0-9.-]+)`)
	litmusNetRe    = regexp.MustCompile(`pod-network-(latency|loss|corruption|duplication)`)
	netemRe        = regexp.MustCompile(`(?i)\b(delay|loss|corrupt|duplicate)\b`)
)

// chaosMechanism reads added latency or packet loss out of a tool's words.
func chaosMechanism(s string) string {
	s = strings.ToLower(s)
	switch {
	case strings.Contains(s, "loss"), strings.Contains(s, "corrupt"), strings.Contains(s, "duplicat"):
		return "packet_loss"
	case strings.Contains(s, "delay"), strings.Contains(s, "latency"):
		return "added_latency"
	}
	return ""
}

// chaosFaults: a network fault a fault-injection tool applied to a
// workload's pods and left running: the traffic of that workload is
// degraded, by the experiment's own account.
func chaosFaults(c *cluster) []fault {
	targets := map[string]*Reading{} // workload → the reading naming it
	mech := map[string]string{}      // workload → mechanism, when the tool says
	var order []string
	target := func(wl string, r *Reading, m string) {
		if wl == "" {
			return
		}
		if _, ok := targets[wl]; !ok {
			targets[wl] = r
			order = append(order, wl)
		}
		if m != "" {
			mech[wl] = m
		}
	}
	var engineMech string
	for _, e := range c.events {
		switch e.Labels["kind"] {
		case "NetworkChaos":
			if m := chaosAppliedRe.FindStringSubmatch(e.Labels["message"]); m != nil {
				if p := c.pods[m[1]+"/"+m[2]]; p != nil {
					target(p.workload, e, chaosMechanism(e.Labels["name"]))
				}
			}
		case "ChaosEngine", "ChaosResult":
			if m := litmusNetRe.FindString(e.Labels["message"]); m != "" {
				engineMech = chaosMechanism(m)
			}
		}
	}
	for _, p := range c.order {
		for _, r := range p.containers {
			netem := r.Labels["netem"]
			if netem == "" || !netemRe.MatchString(netem) {
				continue
			}
			for _, t := range strings.Split(r.Labels["chaos_targets"], ";") {
				name, _, _ := strings.Cut(t, ":")
				if tp := c.pods[p.ns+"/"+strings.TrimSpace(name)]; tp != nil {
					target(tp.workload, r, chaosMechanism(netem))
				}
			}
			if _, app, ok := strings.Cut(r.Labels["chaos_app_label"], "="); ok {
				for _, wl := range c.workloadsNamed(app) {
					target(wl, r, chaosMechanism(netem))
				}
			}
		}
	}
	var out []fault
	for _, wl := range order {
		m := firstOr(mech[wl], engineMech)
		if m == "" {
			m = "added_latency"
			for _, e := range c.events {
				if e.Labels["workload"] == wl && probeLossRe.MatchString(e.Labels["message"]) {
					m = "packet_loss"
				}
			}
		}
		ns, _, _ := strings.Cut(targets[wl].Labels["namespace"], "/")
		out = append(out, fault{cat: CategoryNetworkDegradation, mech: m, culprit: workloadCulprit(wl, firstOr(ns, c.nsOf(wl)), ""), str: 0.9,
			cite: targets[wl], affects: []string{wl}, what: fmt.Sprintf("a fault-injection experiment degrading the traffic of %s (%s)", wl, strings.ReplaceAll(m, "_", " "))})
	}
	return out
}

// workloadsNamed lists the workloads of the cluster named name.
func (c *cluster) workloadsNamed(name string) []string {
	var out []string
	for _, p := range c.order {
		if _, n, _ := strings.Cut(p.workload, "/"); n == name && !contains(out, p.workload) {
			out = append(out, p.workload)
		}
	}
	return out
}

// nsOf is the namespace of a workload's pods.
func (c *cluster) nsOf(workload string) string {
	for _, p := range c.order {
		if p.workload == workload {
			return p.ns
		}
	}
	return ""
}
