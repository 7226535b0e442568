package analyzer

import (
	"sort"
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
	// readings counts the cluster readings collected.
	readings int
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

// clusterOf collects an agent's Kubernetes readings.
func clusterOf(readings []*Reading) *cluster {
	c := &cluster{pods: map[string]*kpod{}}
	for _, r := range readings {
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
		default:
			continue
		}
		c.readings++
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
func clusterHits(readings []*Reading, role string, in Input) []hit {
	c := clusterOf(readings)
	if c.readings == 0 {
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
		f.str = min(max(f.str, 0), maxClusterStrength)
	}
	sort.SliceStable(faults, func(i, j int) bool { return faults[i].str > faults[j].str })
}

// maxClusterStrength caps a ranked fault below certainty: the objects' state
// is strong evidence, never proof.
const maxClusterStrength = 0.97

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

// podByName resolves a fault's "pod/<name>" reference.
func (c *cluster) podByName(ref string) *kpod {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || kind != "pod" {
		return nil
	}
	return c.podNamed(name)
}

// podNamed is the readings' pod of that name.
func (c *cluster) podNamed(name string) *kpod {
	for _, p := range c.order {
		if p.name == name {
			return p
		}
	}
	return nil
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
