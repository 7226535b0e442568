package analyzer

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

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
		if cl.Value < 1 && (len(claims) == 0 || slices.Contains(claims, cl.Labels["pvc"])) {
			return cl.Labels["pvc"]
		}
	}
	if len(claims) > 0 {
		return claims[0]
	}
	return ""
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

// admissionVerdict reads a refusal: its mechanism and the object it names
// (the quota, the service account, the webhook).
func admissionVerdict(msg string) (mech, object string, ok bool) {
	if m := quotaExceededRe.FindStringSubmatch(msg); m != nil {
		return "quota_exceeded", m[1], true
	}
	if m := quotaFailedRe.FindStringSubmatch(msg); m != nil {
		return "quota_exceeded", m[1], true
	}
	if m := saMissingRe.FindStringSubmatch(msg); m != nil {
		return "service_account_missing", firstOr(m[1], m[2]), true
	}
	if m := webhookRe.FindStringSubmatch(msg); m != nil {
		return "webhook_denied", firstOr(m[1], m[2]), true
	}
	if policyRe.MatchString(msg) {
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
				f = &fault{cat: CategoryMemoryExhaustion, mech: "oom_killed", str: ramp(math.Trunc(r.Value), 1, 5, 0.88, 0.93),
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
// a failed liveness or startup probe, which explains an exit code 137
// without the OOM killer.
func (p *kpod) killedByProbe() bool {
	return slices.ContainsFunc(p.events, probeKill)
}

// probeKill tells a kubelet event that restarts a container for a failed
// liveness or startup probe: its Killing ("Container checkout failed
// liveness probe, will be restarted"), or the Unhealthy result of such a
// probe.
func probeKill(e *Reading) bool {
	m := e.Labels["message"]
	switch e.Labels["reason"] {
	case "Killing":
		return strings.Contains(m, "failed liveness probe") || strings.Contains(m, "failed startup probe")
	case "Unhealthy":
		return strings.HasPrefix(m, "Liveness probe failed") || strings.HasPrefix(m, "Startup probe failed")
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
	byWorkload, order := failingProbes(c)
	var out []fault
	for _, wl := range order {
		a := byWorkload[wl]
		if c.recovered(a.pods) && c.before(a.last, probeStaleAfter) {
			continue // the probes failed once (a node's flap, a slow start) and the pods are fine since
		}
		out = append(out, a.fault(wl))
	}
	return out
}

// probeAcc is what a workload's Unhealthy events and its containers' probe
// and port declarations say, gathered over its pods.
type probeAcc struct {
	p      *kpod
	seen   map[string]*probeSeen
	ports  string
	probes map[string]string
	pods   []string
	last   time.Time
}

// failingProbes gathers the kubelet's Unhealthy events by workload, in the
// order the workloads first fail.
func failingProbes(c *cluster) (map[string]*probeAcc, []string) {
	byWorkload := map[string]*probeAcc{}
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
				a = &probeAcc{p: p, seen: map[string]*probeSeen{}, probes: map[string]string{}}
				byWorkload[p.workload] = a
				order = append(order, p.workload)
			}
			if !slices.Contains(a.pods, p.name) {
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
			s.read(m, int(e.Value))
		}
	}
	return byWorkload, order
}

// read takes in one Unhealthy event's message (the kubelet's prober words)
// seen n times.
func (s *probeSeen) read(m string, n int) {
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

// fault is the verdict on workload wl's failing probes: a probe asking what
// the app does not serve, or, when the app answers slowly or drops
// connections on the port it serves, the network in between.
func (a *probeAcc) fault(wl string) fault {
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
	return f
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
		p := c.podNamed(name)
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
