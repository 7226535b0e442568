package datasources

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
)

// clusterView is what one query read of a cluster: the decoded lists, by
// kind, and notes on what could not be read.
type clusterView struct {
	namespace, service string
	// start and end are the pass's window, which events are read in.
	start, end time.Time
	notes      []string
	read       map[string]bool

	pods, systemPods            []pod
	events, nodeEvents          []event
	replicaSets                 []replicaSet
	revisions                   []controllerRevision
	workloads, systemDaemonSets []workload
	services                    []service
	endpoints                   []endpoints
	slices                      []endpointSlice
	nodes                       []node
	quotas                      []resourceQuota
	claims                      []volumeClaim
	volumes, classes, accounts  []namedObject

	// podByName and replicaSetByName index pods and replicaSets, which
	// every pod's and event's workload is looked up in.
	podByName        map[string]*pod
	replicaSetByName map[string]*replicaSet
}

// add decodes one list into the view, by the resource its path names.
func (v *clusterView) add(path string, items []json.RawMessage) error {
	p, query, _ := strings.Cut(path, "?")
	plural := p[strings.LastIndexByte(p, '/')+1:]
	system := strings.Contains(p, "/namespaces/kube-system/") && v.namespace != "kube-system"
	if v.read == nil {
		v.read = map[string]bool{}
	}
	v.read[plural] = true
	var err error
	switch plural {
	case "pods":
		if system {
			v.systemPods, err = decodeAll[pod](items)
		} else {
			v.pods, err = decodeAll[pod](items)
			v.podByName = make(map[string]*pod, len(v.pods))
			for i := range v.pods {
				v.podByName[v.pods[i].Metadata.Name] = &v.pods[i]
			}
		}
	case "events":
		if strings.Contains(query, "involvedObject.kind") {
			v.nodeEvents, err = decodeAll[event](items)
		} else {
			v.events, err = decodeAll[event](items)
		}
	case "replicasets":
		v.replicaSets, err = decodeAll[replicaSet](items)
		v.replicaSetByName = make(map[string]*replicaSet, len(v.replicaSets))
		for i := range v.replicaSets {
			v.replicaSetByName[v.replicaSets[i].Metadata.Name] = &v.replicaSets[i]
		}
	case "controllerrevisions":
		v.revisions, err = decodeAll[controllerRevision](items)
	case "deployments", "statefulsets", "daemonsets":
		var ws []workload
		ws, err = decodeAll[workload](items)
		kind := map[string]string{"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}[plural]
		for i := range ws {
			ws[i].Kind = kind
		}
		if system {
			v.systemDaemonSets = append(v.systemDaemonSets, ws...)
		} else {
			v.workloads = append(v.workloads, ws...)
		}
	case "services":
		v.services, err = decodeAll[service](items)
	case "endpoints":
		v.endpoints, err = decodeAll[endpoints](items)
	case "endpointslices":
		v.slices, err = decodeAll[endpointSlice](items)
	case "nodes":
		v.nodes, err = decodeAll[node](items)
	case "resourcequotas":
		v.quotas, err = decodeAll[resourceQuota](items)
	case "persistentvolumeclaims":
		v.claims, err = decodeAll[volumeClaim](items)
	case "persistentvolumes":
		v.volumes, err = decodeAll[namedObject](items)
	case "storageclasses":
		v.classes, err = decodeAll[namedObject](items)
	case "serviceaccounts":
		v.accounts, err = decodeAll[namedObject](items)
	default:
		return fmt.Errorf("%w: no reader for %s", ErrBadQuery, plural)
	}
	if err != nil {
		return fmt.Errorf("the answer of %s is not a list of %s: %v", path, plural, err)
	}
	return nil
}

func decodeAll[T any](items []json.RawMessage) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, raw := range items {
		var x T
		if err := json.Unmarshal(raw, &x); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// workloadOf names the workload that owns an object: a pod's ReplicaSet's
// Deployment (the ReplicaSet's name is the Deployment's plus the pod
// template hash), StatefulSet, DaemonSet or Job; an object no controller
// owns is its own.
func (v *clusterView) workloadOf(m objectMeta, kind string) string {
	for _, o := range m.OwnerReferences {
		switch o.Kind {
		case "ReplicaSet":
			return v.deploymentOf(o.Name, m.Labels["pod-template-hash"])
		case "StatefulSet", "DaemonSet", "Job", "Deployment":
			return strings.ToLower(o.Kind) + "/" + o.Name
		}
	}
	return strings.ToLower(kind) + "/" + m.Name
}

// deploymentOf names the Deployment of a ReplicaSet, from the ReplicaSet
// list when it was read, else from its name and pod template hash.
func (v *clusterView) deploymentOf(rs, hash string) string {
	if s := v.replicaSetByName[rs]; s != nil {
		if d := s.Metadata.owner("Deployment"); d != "" {
			return "deployment/" + d
		}
		hash = s.Metadata.Labels["pod-template-hash"]
	}
	if hash != "" && strings.HasSuffix(rs, "-"+hash) {
		return "deployment/" + strings.TrimSuffix(rs, "-"+hash)
	}
	if i := strings.LastIndexByte(rs, '-'); i > 0 && podHashRe.MatchString(rs[i+1:]) {
		return "deployment/" + rs[:i]
	}
	return "replicaset/" + rs
}

// reading builds one Kubernetes reading: its line is written by the caller
// (what a reader checks), its labels carry the same facts for the analyzer,
// every value cut short.
func reading(signal string, value float64, at time.Time, line string, labels map[string]string) analyzer.Reading {
	for k, val := range labels {
		if val == "" {
			delete(labels, k)
		} else {
			labels[k] = clip.To(squashSpace(val), 400)
		}
	}
	return analyzer.Reading{Signal: signal, Value: value, At: at.UTC(), Labels: labels, Line: clip.To(squashSpace(line), 480)}
}

func squashSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// troubleFirst orders readings: those in trouble, then the service's, each
// group in the order given.
func troubleFirst(rs []analyzer.Reading, trouble, mine func(analyzer.Reading) bool) {
	rank := func(r analyzer.Reading) int {
		n := 0
		if !trouble(r) {
			n += 2
		}
		if !mine(r) {
			n++
		}
		return n
	}
	sort.SliceStable(rs, func(i, j int) bool { return rank(rs[i]) < rank(rs[j]) })
}

// k8sReducers turn a query's lists into readings, by plan entry.
var k8sReducers = map[string]func(PlanEntry, *clusterView) Result{
	"pods":      podReadings,
	"events":    eventReadings,
	"rollouts":  rolloutReadings,
	"workloads": workloadReadings,
	"services":  serviceReadings,
	"nodes":     nodeReadings,
	"quotas":    quotaReadings,
	"volumes":   claimReadings,
}

// podReadings: one reading per container of every pod of the namespace
// (restarts, waiting reason and message, last termination), and one per pod
// that is not running (the scheduler's verdict). Containers in trouble come
// first, the service's before others. A container in trouble also shows its
// probes and ports, so a probe can be checked against what the container
// exposes.
func podReadings(e PlanEntry, v *clusterView) Result {
	var rs []analyzer.Reading
	for _, p := range v.pods {
		wl := v.workloadOf(p.Metadata, "Pod")
		if r, ok := pendingReading(v, p, wl); ok {
			rs = append(rs, r)
			continue
		}
		for _, cs := range append(append([]containerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			rs = append(rs, containerReading(e, p, wl, cs))
		}
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no pods in namespace %s", v.namespace)}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Value > rs[j].Value })
	troubleFirst(rs, func(r analyzer.Reading) bool {
		return r.Signal == analyzer.SignalPodPending || r.Labels["waiting"] != "" || r.Labels["ready"] == "false" || r.Value > 0
	}, func(r analyzer.Reading) bool {
		return strings.HasSuffix(r.Labels["workload"], "/"+v.service) || strings.HasPrefix(r.Labels["pod"], v.service+"-")
	})
	return Result{Readings: rs}
}

// pendingReading is a pod that has not started: where the scheduler left
// it and why.
func pendingReading(v *clusterView, p pod, wl string) (analyzer.Reading, bool) {
	if p.Status.Phase != "Pending" || len(p.Status.ContainerStatuses) > 0 {
		return analyzer.Reading{}, false
	}
	sched, _ := conditionOf(p.Status.Conditions, "PodScheduled")
	var claims []string
	for _, vol := range p.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil {
			claims = append(claims, vol.PersistentVolumeClaim.ClaimName)
		}
	}
	var affinity []string
	if a := p.Spec.Affinity; a != nil {
		for name, raw := range map[string]json.RawMessage{"node": a.NodeAffinity, "pod": a.PodAffinity, "anti": a.PodAntiAffinity} {
			if len(raw) > 0 && string(raw) != "null" {
				affinity = append(affinity, name)
			}
		}
		sort.Strings(affinity)
	}
	scheduled := "unknown"
	switch {
	case p.Spec.NodeName != "" || sched.Status == "True":
		scheduled = "true"
	case sched.Status == "False":
		scheduled = "false"
	}
	line := fmt.Sprintf("Pod %s/%s (%s): Pending", p.Metadata.Namespace, p.Metadata.Name, wl)
	switch {
	case scheduled == "false":
		line += ", not scheduled: " + firstNonEmpty(sched.Message, sched.Reason)
	case scheduled == "unknown":
		line += ", not yet scheduled (no scheduler verdict)"
	default:
		line += " on node " + p.Spec.NodeName
	}
	if len(claims) > 0 {
		line += "; claims " + strings.Join(claims, ",")
	}
	at := sched.LastTransitionTime.Time
	if at.IsZero() {
		at = p.Metadata.CreationTimestamp.Time
	}
	return reading(analyzer.SignalPodPending, 1, at, line, map[string]string{
		"namespace": p.Metadata.Namespace, "pod": p.Metadata.Name, "workload": wl, "phase": p.Status.Phase, "scheduled": scheduled,
		"reason": sched.Reason, "message": sched.Message, "claims": strings.Join(claims, ","), "node": p.Spec.NodeName,
		"node_selector": mapString(p.Spec.NodeSelector), "affinity": strings.Join(affinity, ","),
		"created": p.Metadata.CreationTimestamp.UTC().Format(time.RFC3339),
	}), true
}

// containerReading is one container's state: restarts, waiting reason and
// message, last termination, readiness, and for a container in trouble its
// image, probes and ports.
func containerReading(e PlanEntry, p pod, wl string, cs containerStatus) analyzer.Reading {
	labels := map[string]string{"namespace": p.Metadata.Namespace, "pod": p.Metadata.Name, "container": cs.Name, "workload": wl,
		"phase": p.Status.Phase, "ready": strconv.FormatBool(cs.Ready), "node": p.Spec.NodeName, "replicaset": revisionOf(p)}
	at := p.Metadata.CreationTimestamp.Time
	var parts []string
	if cs.State.Running != nil {
		at = cs.State.Running.StartedAt.Time
		parts = append(parts, "running since "+at.Format(time.RFC3339))
	}
	if w := cs.State.Waiting; w != nil && w.Reason != "" {
		labels["waiting"], labels["message"] = w.Reason, w.Message
		parts = append(parts, "waiting "+w.Reason+optional(": ", clip.To(w.Message, 200)))
	}
	term := cs.LastState.Terminated
	if cs.State.Terminated != nil {
		term = cs.State.Terminated
	}
	if term != nil {
		labels["reason"], labels["exit_code"] = term.Reason, strconv.Itoa(term.ExitCode)
		if term.Message != "" && labels["message"] == "" {
			labels["message"] = term.Message
		}
		if !term.FinishedAt.IsZero() {
			at = term.FinishedAt.Time
			labels["finished"] = term.FinishedAt.Format(time.RFC3339)
		}
		parts = append(parts, fmt.Sprintf("last terminated %s (exit code %d)%s", firstNonEmpty(term.Reason, "with no reason"), term.ExitCode,
			optional(" at ", labels["finished"])))
	}
	parts = append(parts, fmt.Sprintf("%d restarts", cs.RestartCount))
	if !cs.Ready {
		parts = append(parts, "not ready")
	}
	trouble := !cs.Ready || cs.RestartCount > 0 || labels["waiting"] != ""
	c, declared := p.container(cs.Name)
	if declared {
		// A fault-injection helper (Litmus's network experiments) carries
		// the tc netem command it applies and the pods it targets.
		for _, env := range c.Env {
			switch env.Name {
			case "NETEM_COMMAND":
				labels["netem"] = env.Value
			case "TARGETS", "APP_LABEL":
				labels["chaos_"+strings.ToLower(env.Name)] = env.Value
			}
		}
		if labels["netem"] != "" {
			parts = append(parts, "injects netem "+clip.To(labels["netem"], 80)+optional(" into ", clip.To(firstNonEmpty(labels["chaos_targets"], labels["chaos_app_label"]), 160)))
		}
	}
	if declared && trouble {
		labels["image"] = c.Image
		var ports []string
		for _, pt := range c.Ports {
			ports = append(ports, optional("", pt.Name+"=")+strconv.Itoa(pt.ContainerPort)+"/"+pt.protocol())
		}
		labels["ports"] = strings.Join(ports, ",")
		labels["liveness"], labels["readiness"], labels["startup"] = c.LivenessProbe.target(), c.ReadinessProbe.target(), c.StartupProbe.target()
		if strings.Contains(labels["waiting"], "Image") {
			parts = append(parts, "image "+c.Image)
		}
		for _, pr := range [][2]string{{"liveness", labels["liveness"]}, {"readiness", labels["readiness"]}} {
			if pr[1] != "" {
				parts = append(parts, pr[0]+" probe "+pr[1])
			}
		}
		if len(ports) > 0 {
			parts = append(parts, "ports "+labels["ports"])
		}
	}
	line := fmt.Sprintf("Pod %s/%s (%s", p.Metadata.Namespace, p.Metadata.Name, wl) + optional(", node ", p.Spec.NodeName) +
		") container " + cs.Name + ": " + strings.Join(parts, "; ")
	return reading(e.Signal, float64(cs.RestartCount), at, line, labels)
}

// optional is prefix and s, or nothing when s is empty.
func optional(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// parenthesized is " (s)", or nothing when s is empty.
func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// mapString renders a label map as "k=v,…" in key order.
func mapString(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// k8sNormalReasons are the Normal events worth reading: they date a
// rollout, a kill by the kubelet, a node going down or being cordoned.
var k8sNormalReasons = map[string]bool{"Killing": true, "ScalingReplicaSet": true, "NodeNotReady": true, "NodeNotSchedulable": true,
	"Preempted": true, "SuccessfulDelete": true, "TaintManagerEviction": true, "RemovingNode": true, "Rebooted": true}

// tellingReasons are the event reasons whose message says why something failed:
// the scheduler's and the controllers' refusals, the kubelet's pull, probe
// and mount failures, a node going down, a fault injected.
var tellingReasons = map[string]bool{"FailedScheduling": true, "FailedCreate": true, "Failed": true, "Unhealthy": true, "Killing": true,
	"FailedMount": true, "FailedAttachVolume": true, "FailedToRetrieveImagePullSecret": true, "NodeNotReady": true, "Evicted": true,
	"ProvisioningFailed": true, "FailedCreatePodSandBox": true, "ProgressDeadlineExceeded": true, "Applied": true, "ChaosInject": true}

// chaosKinds are the objects of fault-injection tools (Chaos Mesh, Litmus)
// whose events, Normal ones included, say a fault was injected and where:
// an experiment left running is a cause like any other.
var chaosKinds = map[string]bool{"NetworkChaos": true, "PodChaos": true, "StressChaos": true, "IOChaos": true, "DNSChaos": true,
	"HTTPChaos": true, "TimeChaos": true, "ChaosEngine": true, "ChaosResult": true}

// eventReadings: the namespace's Warning events, and the Normal ones of
// k8sNormalReasons, one reading per object and reason (the latest), the
// service's and the latest first.
func eventReadings(e PlanEntry, v *clusterView) Result {
	// One reading per object, reason and kind of message: the kubelet's
	// Failed carries both "Failed to pull image …: <why>" and "Error:
	// ErrImagePull", and the first says why.
	type key struct{ kind, name, reason, shape string }
	best := map[key]event{}
	var order []key
	all := append(append([]event(nil), v.events...), v.nodeEvents...)
	from, to := eventWindow(all, v.start, v.end)
	for _, ev := range all {
		if ev.Type != "Warning" && !k8sNormalReasons[ev.Reason] && !chaosKinds[ev.InvolvedObject.Kind] {
			continue
		}
		if at := ev.last(); !from.IsZero() && (at.Before(from) || at.After(to)) {
			continue
		}
		k := key{ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, eventShape(ev.Message)}
		prev, seen := best[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || ev.last().After(prev.last()) {
			if seen {
				ev.Count = ev.count() + prev.count()
				if prev.first().Before(ev.first()) {
					ev.FirstTimestamp = kTime{prev.first()}
				}
			}
			best[k] = ev
		}
	}
	var rs []analyzer.Reading
	for _, k := range order {
		ev := best[k]
		obj := ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name
		wl := ""
		switch ev.InvolvedObject.Kind {
		case "Pod":
			wl = v.podWorkload(ev.InvolvedObject.Name)
		case "ReplicaSet":
			wl = v.deploymentOf(ev.InvolvedObject.Name, "")
		case "Deployment", "StatefulSet", "DaemonSet", "Job":
			wl = strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name
		}
		line := ev.last().Format(time.RFC3339) + " " + ev.Type + " " + ev.Reason + " " + obj + parenthesized(wl) +
			": " + clip.To(squashSpace(ev.Message), 300)
		if n := ev.count(); n > 1 {
			line += fmt.Sprintf(" (x%d since %s)", n, ev.first().Format(time.RFC3339))
		}
		rs = append(rs, reading(analyzer.SignalK8sEvent, float64(ev.count()), ev.last(), line, map[string]string{
			"namespace": firstNonEmpty(ev.InvolvedObject.Namespace, ev.Metadata.Namespace), "object": obj, "kind": ev.InvolvedObject.Kind,
			"name": ev.InvolvedObject.Name, "workload": wl, "type": ev.Type, "reason": ev.Reason, "message": ev.Message,
			"first": ev.first().Format(time.RFC3339), "component": ev.Source.Component,
		}))
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no warning events in namespace %s", v.namespace)}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].At.After(rs[j].At) })
	troubleFirst(rs, func(r analyzer.Reading) bool { return r.Labels["type"] == "Warning" || chaosKinds[r.Labels["kind"]] },
		func(r analyzer.Reading) bool {
			return v.service != "" && strings.Contains(r.Labels["object"]+r.Labels["workload"], "/"+v.service)
		})
	// The answer is cut to the result cap: the events that say why come
	// before the ones that only say something failed (BackOff, Pulling).
	sort.SliceStable(rs, func(i, j int) bool {
		return tellingReasons[rs[i].Labels["reason"]] && !tellingReasons[rs[j].Labels["reason"]]
	})
	return Result{Readings: rs}
}

// eventShape is the start of an event's message, up to its first quote or colon:
// what kind of message it is, without the particulars.
func eventShape(m string) string {
	if i := strings.IndexAny(m, `":`); i >= 0 {
		m = m[:i]
	}
	return clip.To(m, 40)
}

// eventWindow is the span events are read in: the pass's window, unless the
// cluster's own clock (its latest event) is behind the window's start — a
// snapshot read long after it was taken, or a cluster whose clock lags — and
// then the window's length ending at the cluster's latest event.
func eventWindow(events []event, start, end time.Time) (time.Time, time.Time) {
	if start.IsZero() || end.IsZero() {
		return time.Time{}, time.Time{}
	}
	var latest time.Time
	for _, ev := range events {
		if at := ev.last(); at.After(latest) {
			latest = at
		}
	}
	if !latest.IsZero() && latest.Before(start) {
		return latest.Add(-end.Sub(start)), latest.Add(time.Minute)
	}
	return start, end.Add(time.Minute)
}

// podWorkload names the workload of a pod of the view by its name.
func (v *clusterView) podWorkload(name string) string {
	if p := v.podByName[name]; p != nil {
		return v.workloadOf(p.Metadata, "Pod")
	}
	// Pods deleted since keep their ReplicaSet's name before their suffix.
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return v.deploymentOf(name[:i], "")
	}
	return ""
}

// rolloutReadings reads the namespace's Deployments and StatefulSets and,
// for each, its revisions (a Deployment's ReplicaSets, a StatefulSet's
// ControllerRevisions): revision, images, when it was created (the rollout)
// and how many of its pods are ready. Newest revision first, the service's
// first.
func rolloutReadings(e PlanEntry, v *clusterView) Result {
	kinds := map[string]string{}
	for _, w := range v.workloads {
		if w.Kind == "Deployment" || w.Kind == "StatefulSet" {
			kinds[w.Kind+"/"+w.Metadata.Name] = w.Kind
		}
	}
	var rs []analyzer.Reading
	add := func(kind, owner string, m objectMeta, rev int, images []string, ready string) {
		r := analyzer.Reading{Signal: e.Signal, Value: float64(rev), Unit: e.Unit, At: m.CreationTimestamp.UTC(), Labels: map[string]string{
			"namespace": m.Namespace, strings.ToLower(kind): owner, "replicaset": m.Name, "image": clip.To(strings.Join(images, ","), 200), "ready": ready,
		}}
		what := e.What
		if kind == "StatefulSet" {
			what = "StatefulSet revision"
		}
		r.Render(what)
		rs = append(rs, r)
	}
	for _, s := range v.replicaSets {
		dep := s.Metadata.owner("Deployment")
		if kinds["Deployment/"+dep] == "" {
			continue
		}
		rev, err := strconv.Atoi(s.Metadata.Annotations["deployment.kubernetes.io/revision"])
		if err != nil {
			continue
		}
		desired := 0
		if s.Spec.Replicas != nil {
			desired = *s.Spec.Replicas
		}
		add("Deployment", dep, s.Metadata, rev, containerImages(s.Spec.Template.Spec), fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, desired))
	}
	for _, cr := range v.revisions {
		sts := cr.Metadata.owner("StatefulSet")
		if kinds["StatefulSet/"+sts] == "" {
			continue
		}
		// A StatefulSet's pods name their revision in the
		// controller-revision-hash label; its status counts only replicas.
		ready, total := 0, 0
		for _, p := range v.pods {
			if p.Metadata.owner("StatefulSet") == sts && p.Metadata.Labels["controller-revision-hash"] == cr.Metadata.Name {
				total++
				if p.ready() {
					ready++
				}
			}
		}
		add("StatefulSet", sts, cr.Metadata, int(cr.Revision), containerImages(cr.Data.Spec.Template.Spec), fmt.Sprintf("%d/%d", ready, total))
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no Deployment or StatefulSet with revisions in namespace %s", v.namespace)}
	}
	owner := func(r analyzer.Reading) string { return r.Labels["deployment"] + r.Labels["statefulset"] }
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := owner(rs[i]), owner(rs[j])
		if (a == v.service) != (b == v.service) {
			return a == v.service
		}
		if a != b {
			return a < b
		}
		return rs[i].Value > rs[j].Value
	})
	return Result{Readings: rs}
}

// containerImages lists a pod template's container images.
func containerImages(tmpl podSpec) []string {
	var images []string
	for _, c := range tmpl.Containers {
		images = append(images, c.Image)
	}
	return images
}

// revisionOf names the revision a pod runs: its ReplicaSet, or the
// ControllerRevision its StatefulSet labelled it with.
func revisionOf(p pod) string {
	if rs := p.Metadata.owner("ReplicaSet"); rs != "" {
		return rs
	}
	if p.Metadata.owner("StatefulSet") != "" {
		return p.Metadata.Labels["controller-revision-hash"]
	}
	return ""
}

// workloadReadings: each Deployment, StatefulSet and DaemonSet: ready pods
// against desired, the first condition that fails (a ReplicaFailure names
// the admission error; Progressing False the stalled rollout), and whether
// the service account its pods run as exists.
func workloadReadings(e PlanEntry, v *clusterView) Result {
	accounts := map[string]bool{}
	for _, a := range v.accounts {
		accounts[a.Metadata.Name] = true
	}
	var rs []analyzer.Reading
	for _, w := range v.workloads {
		name := strings.ToLower(w.Kind) + "/" + w.Metadata.Name
		labels := map[string]string{"namespace": w.Metadata.Namespace, "workload": name}
		line := fmt.Sprintf("%s %s/%s: %d of %d ready", w.Kind, w.Metadata.Namespace, w.Metadata.Name, w.ready(), w.desired())
		at := w.Metadata.CreationTimestamp.Time
		for _, c := range w.Status.Conditions {
			failing := (c.Type == "ReplicaFailure" && c.Status == "True") || ((c.Type == "Progressing" || c.Type == "Available") && c.Status == "False")
			if failing && labels["condition"] == "" {
				labels["condition"] = c.Type + "=" + c.Status
				labels["reason"], labels["message"] = c.Reason, c.Message
				line += "; " + c.Type + "=" + c.Status + " " + c.Reason + optional(": ", clip.To(c.Message, 240))
				if !c.LastTransitionTime.IsZero() {
					at = c.LastTransitionTime.Time
				}
			}
		}
		tmpl := w.Spec.Template.Spec
		// The service account controller creates "default" in every
		// namespace; a list without it is not the whole list.
		if sa := firstNonEmpty(tmpl.ServiceAccountName, "default"); v.read["serviceaccounts"] && accounts["default"] {
			labels["serviceaccount"] = sa
			if !accounts[sa] {
				labels["serviceaccount_missing"] = "true"
				line += "; its pods run as service account " + sa + ", which does not exist"
			}
		}
		var images []string
		for _, c := range tmpl.Containers {
			images = append(images, c.Image)
		}
		labels["images"] = strings.Join(images, ",")
		rs = append(rs, reading(analyzer.SignalWorkload, float64(w.ready()), at, line, labels))
		rs[len(rs)-1].Limit = float64(w.desired())
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no workloads in namespace %s", v.namespace)}
	}
	troubleFirst(rs, func(r analyzer.Reading) bool {
		return r.Value < r.Limit || r.Labels["condition"] != "" || r.Labels["serviceaccount_missing"] != ""
	}, func(r analyzer.Reading) bool { return strings.HasSuffix(r.Labels["workload"], "/"+v.service) })
	return Result{Readings: rs}
}
