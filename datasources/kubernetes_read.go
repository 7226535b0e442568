package datasources

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/clip"
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
	workloads, systemDaemonSets []workload
	services                    []service
	endpoints                   []endpoints
	slices                      []endpointSlice
	nodes                       []node
	quotas                      []resourceQuota
	claims                      []volumeClaim
	volumes, classes, accounts  []namedObject
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
		}
	case "events":
		if strings.Contains(query, "involvedObject.kind") {
			v.nodeEvents, err = decodeAll[event](items)
		} else {
			v.events, err = decodeAll[event](items)
		}
	case "replicasets":
		v.replicaSets, err = decodeAll[replicaSet](items)
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
	for _, s := range v.replicaSets {
		if s.Metadata.Name == rs {
			if d := s.Metadata.owner("Deployment"); d != "" {
				return "deployment/" + d
			}
			hash = s.Metadata.Labels["pod-template-hash"]
		}
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
		"phase": p.Status.Phase, "ready": strconv.FormatBool(cs.Ready), "node": p.Spec.NodeName, "replicaset": p.Metadata.owner("ReplicaSet")}
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
	if c, ok := p.container(cs.Name); ok {
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
	if c, ok := p.container(cs.Name); ok && trouble {
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

func optional(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func mapString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
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
				ev.Count = max(ev.count(), 1) + prev.count()
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
		line := ev.last().Format(time.RFC3339) + " " + ev.Type + " " + ev.Reason + " " + obj + optional(" (", wl) + map[bool]string{true: ")", false: ""}[wl != ""] +
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
	for _, p := range v.pods {
		if p.Metadata.Name == name {
			return v.workloadOf(p.Metadata, "Pod")
		}
	}
	// Pods deleted since keep their ReplicaSet's name before their suffix.
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return v.deploymentOf(name[:i], "")
	}
	return ""
}

// rolloutReadings reads the namespace's Deployments and, for each, its
// ReplicaSets: revision, images, when it was created (the rollout) and how
// many of its pods are ready. Newest revision first, the service's first.
func rolloutReadings(e PlanEntry, v *clusterView) Result {
	deps := map[string]bool{}
	for _, w := range v.workloads {
		if w.Kind == "Deployment" {
			deps[w.Metadata.Name] = true
		}
	}
	var rs []analyzer.Reading
	for _, s := range v.replicaSets {
		dep := s.Metadata.owner("Deployment")
		if !deps[dep] {
			continue
		}
		rev, err := strconv.Atoi(s.Metadata.Annotations["deployment.kubernetes.io/revision"])
		if err != nil {
			continue
		}
		var images []string
		for _, c := range s.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		desired := 0
		if s.Spec.Replicas != nil {
			desired = *s.Spec.Replicas
		}
		r := analyzer.Reading{Signal: e.Signal, Value: float64(rev), Unit: e.Unit, At: s.Metadata.CreationTimestamp.UTC(), Labels: map[string]string{
			"namespace": s.Metadata.Namespace, "deployment": dep, "replicaset": s.Metadata.Name, "image": clip.To(strings.Join(images, ","), 200),
			"ready": fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, desired),
		}}
		r.Render(e.What)
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no Deployment with ReplicaSets in namespace %s", v.namespace)}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].Labels["deployment"], rs[j].Labels["deployment"]
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

// serviceReadings: each Service of the namespace against the pods it
// selects — a selector no pod matches, a targetPort no selected container
// exposes, a protocol the containers do not speak, no ready endpoint — and
// the addresses workloads are configured with that name no Service of the
// namespace (or a port it does not serve).
func serviceReadings(e PlanEntry, v *clusterView) Result {
	var rs []analyzer.Reading
	for _, s := range v.services {
		if r, ok := serviceReading(v, s); ok {
			rs = append(rs, r)
		}
	}
	rs = append(rs, envAddressReadings(v)...)
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no Services in namespace %s", v.namespace)}
	}
	troubleFirst(rs, func(r analyzer.Reading) bool { return r.Labels["issue"] != "" },
		func(r analyzer.Reading) bool {
			return v.service != "" && (r.Labels["service"] == v.service || strings.HasSuffix(r.Labels["workload"], "/"+v.service))
		})
	return Result{Readings: rs}
}

func serviceReading(v *clusterView, s service) (analyzer.Reading, bool) {
	if len(s.Spec.Selector) == 0 || s.Spec.Type == "ExternalName" {
		return analyzer.Reading{}, false // endpoints managed by hand, or a DNS alias
	}
	var selected []pod
	readyPods := 0
	for _, p := range v.pods {
		if labelsMatch(s.Spec.Selector, p.Metadata.Labels) && p.Metadata.DeletionTimestamp == nil && p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed" {
			selected = append(selected, p)
			if p.ready() {
				readyPods++
			}
		}
	}
	ready, notReady, known := v.endpointCounts(s.Metadata.Name)
	name := s.Metadata.Namespace + "/" + s.Metadata.Name
	var ports []string
	for _, p := range s.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%d→%s/%s", p.Port, p.target(), p.protocol()))
	}
	labels := map[string]string{"namespace": s.Metadata.Namespace, "service": s.Metadata.Name, "selector": mapString(s.Spec.Selector),
		"matching": strconv.Itoa(len(selected)), "ready_pods": strconv.Itoa(readyPods), "ports": strings.Join(ports, ",")}
	line := fmt.Sprintf("Service %s (selector %s, ports %s): ", name, labels["selector"], labels["ports"])
	issue, detail := "", ""
	switch {
	case len(selected) == 0:
		issue, detail = "selector", "the selector matches no pod of the namespace"
		if near := nearestLabels(v.pods, s.Spec.Selector); near != "" {
			detail += " (pods nearby carry " + near + ")"
		}
	default:
		issue, detail = portIssue(s, selected)
	}
	if issue == "" && known && ready == 0 {
		issue, detail = "no_endpoints", fmt.Sprintf("no ready endpoint (%d not ready) behind %d selected pod(s)", notReady, len(selected))
	}
	labels["issue"], labels["detail"] = issue, detail
	if known {
		labels["ready_endpoints"], labels["notready_endpoints"] = strconv.Itoa(ready), strconv.Itoa(notReady)
		line += fmt.Sprintf("%d ready endpoint(s), %d not ready; ", ready, notReady)
	}
	line += fmt.Sprintf("selects %d pod(s), %d ready", len(selected), readyPods)
	if detail != "" {
		line += "; " + detail
	}
	value := float64(readyPods)
	if known {
		value = float64(ready)
	}
	return reading(analyzer.SignalServiceRouting, value, s.Metadata.CreationTimestamp.Time, line, labels), true
}

// portIssue checks each Service port against the selected pods' containers:
// a targetPort (number or name) none of them declares, or a protocol the
// declared port does not speak. Containers that declare no ports say
// nothing either way.
func portIssue(s service, selected []pod) (string, string) {
	for _, sp := range s.Spec.Ports {
		target := sp.target()
		declared, exposed, protocolOK := false, false, false
		var seen []string
		for _, p := range selected {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					declared = true
					seen = append(seen, strconv.Itoa(cp.ContainerPort)+"/"+cp.protocol())
					if strconv.Itoa(cp.ContainerPort) == target || (cp.Name != "" && cp.Name == target) {
						exposed = true
						protocolOK = protocolOK || cp.protocol() == sp.protocol()
					}
				}
			}
		}
		slices.Sort(seen)
		seen = slices.Compact(seen)
		switch {
		case !declared:
		case !exposed:
			return "target_port", fmt.Sprintf("targetPort %s is not a port of the selected containers (they expose %s)", target, strings.Join(seen, ","))
		case !protocolOK:
			return "protocol", fmt.Sprintf("port %d forwards %s to %s, but the containers expose it as %s", sp.Port, sp.protocol(), target, strings.Join(seen, ","))
		}
	}
	return "", ""
}

// endpointCounts counts a Service's ready and not-ready endpoints from its
// EndpointSlices, else its Endpoints; known is false when neither was read.
func (v *clusterView) endpointCounts(svc string) (ready, notReady int, known bool) {
	for _, es := range v.slices {
		if es.Metadata.Labels["kubernetes.io/service-name"] != svc {
			continue
		}
		known = true
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	if known {
		return ready, notReady, true
	}
	for _, ep := range v.endpoints {
		if ep.Metadata.Name != svc {
			continue
		}
		known = true
		for _, ss := range ep.Subsets {
			ready += len(ss.Addresses)
			notReady += len(ss.NotReadyAddresses)
		}
	}
	// A Service with no EndpointSlice and no Endpoints object at all is one
	// the lists do not cover (a partial snapshot, a list cut short): its
	// endpoints are unknown, not none.
	return ready, notReady, known
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, want := range selector {
		if labels[k] != want {
			return false
		}
	}
	return true
}

// nearestLabels names, for a selector no pod matches, the values pods carry
// for its keys, so a reader sees the typo: "app=cart".
func nearestLabels(pods []pod, selector map[string]string) string {
	var out []string
	for k := range selector {
		for _, p := range pods {
			if v, ok := p.Metadata.Labels[k]; ok && !slices.Contains(out, k+"="+v) {
				out = append(out, k+"="+v)
			}
		}
	}
	sort.Strings(out)
	if len(out) > 4 {
		out = out[:4]
	}
	return strings.Join(out, ", ")
}

// hostSchemes are the URL schemes whose host is a server to connect to (an
// s3:// or gs:// URL names a bucket, a file:// URL a path).
var hostSchemes = map[string]bool{"http": true, "https": true, "grpc": true, "grpcs": true, "h2c": true, "ws": true, "wss": true,
	"tcp": true, "udp": true, "redis": true, "rediss": true, "postgres": true, "postgresql": true, "mysql": true, "mariadb": true,
	"mongodb": true, "amqp": true, "amqps": true, "nats": true, "kafka": true, "memcached": true, "ldap": true, "ldaps": true,
	"smtp": true, "cassandra": true, "clickhouse": true, "elasticsearch": true, "jdbc": true}

// addressEnvSuffixes are the endings of environment variable names that
// hold an address by convention.
var addressEnvSuffixes = []string{"_HOST", "_HOSTNAME", "_ADDR", "_ADDRESS", "_URL", "_URI", "_ENDPOINT", "_SERVER", "_SERVICE", "_DSN", "_BROKERS", "_TARGET"}

// envAddressReadings checks the addresses each workload's containers are
// configured with (environment values that are URLs or host:port, or whose
// name says they hold a host) against the namespace's Services: a name that
// is the namespace's own (a bare name, name.namespace, or
// name.namespace.svc[.cluster.local]) must be a Service, and a port it names
// one the Service serves. Other names (outside the cluster, other
// namespaces) are not judged.
func envAddressReadings(v *clusterView) []analyzer.Reading {
	services := map[string]service{}
	for _, s := range v.services {
		services[s.Metadata.Name] = s
	}
	seen := map[string]bool{}
	var rs []analyzer.Reading
	for _, p := range v.pods {
		if p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue // a finished pod calls nothing any more
		}
		wl := v.workloadOf(p.Metadata, "Pod")
		for _, c := range p.Spec.Containers {
			for _, env := range c.Env {
				host, port, ok := clusterAddress(env.Name, env.Value, v.namespace)
				if !ok || seen[wl+c.Name+env.Name] {
					continue
				}
				seen[wl+c.Name+env.Name] = true
				issue, detail := "", ""
				if s, exists := services[host]; !exists {
					issue, detail = "no_service", fmt.Sprintf("no Service %s in namespace %s", host, v.namespace)
				} else if port != "" && !servesPort(s, port) {
					issue, detail = "port", fmt.Sprintf("Service %s serves %s, not %s", host, servicePorts(s), port)
				}
				if issue == "" {
					continue
				}
				line := fmt.Sprintf("%s in %s/%s container %s: %s=%s — %s", wl, p.Metadata.Namespace, p.Metadata.Name, c.Name, env.Name, clip.To(env.Value, 160), detail)
				rs = append(rs, reading(analyzer.SignalEnvAddress, 0, p.Metadata.CreationTimestamp.Time, line, map[string]string{
					"namespace": p.Metadata.Namespace, "workload": wl, "pod": p.Metadata.Name, "container": c.Name, "env": env.Name,
					"address": env.Value, "host": host, "port": port, "issue": issue, "detail": detail,
				}))
			}
		}
	}
	return rs
}

// clusterAddress reads an environment value as an address of a Service of
// namespace: the Service's name and the port it names, if any.
func clusterAddress(name, value, namespace string) (string, string, bool) {
	value = strings.TrimSpace(value)
	if value == "" || strings.ContainsAny(value, " \t,") {
		return "", "", false
	}
	host, port := "", ""
	if strings.Contains(value, "://") {
		u, err := url.Parse(value)
		if err != nil || u.Hostname() == "" || !hostSchemes[strings.ToLower(u.Scheme)] {
			return "", "", false
		}
		host, port = u.Hostname(), u.Port()
	} else {
		upper := strings.ToUpper(name)
		named := slices.ContainsFunc(addressEnvSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) })
		if h, p, err := net.SplitHostPort(value); err == nil {
			host, port = h, p
		} else if named {
			host = value
		} else {
			return "", "", false
		}
	}
	if net.ParseIP(host) != nil || host == "localhost" {
		return "", "", false
	}
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(host), "."), ".")
	switch {
	case len(labels) == 1:
	case len(labels) == 2 && labels[1] == namespace:
	case len(labels) == 3 && labels[1] == namespace && labels[2] == "svc":
	case len(labels) == 5 && labels[1] == namespace && labels[2] == "svc" && labels[3] == "cluster" && labels[4] == "local":
	default:
		return "", "", false
	}
	if !namespaceRe.MatchString(labels[0]) {
		return "", "", false
	}
	if _, err := strconv.Atoi(port); port != "" && err != nil {
		return "", "", false
	}
	return labels[0], port, true
}

func servesPort(s service, port string) bool {
	for _, p := range s.Spec.Ports {
		if strconv.Itoa(p.Port) == port {
			return true
		}
	}
	return false
}

func servicePorts(s service) string {
	var out []string
	for _, p := range s.Spec.Ports {
		out = append(out, strconv.Itoa(p.Port))
	}
	return strings.Join(out, ",")
}

// nodeComponents are the kube-system pods that keep a node or the control
// plane working, by the labels their manifests give them.
var nodeComponents = []struct{ component, label, value string }{
	{"kube-proxy", "k8s-app", "kube-proxy"},
	{"kube-apiserver", "component", "kube-apiserver"},
	{"etcd", "component", "etcd"},
	{"kube-scheduler", "component", "kube-scheduler"},
	{"kube-controller-manager", "component", "kube-controller-manager"},
	{"coredns", "k8s-app", "kube-dns"},
	{"calico-node", "k8s-app", "calico-node"},
	{"cilium", "k8s-app", "cilium"},
	{"kube-flannel", "app", "flannel"},
	{"aws-node", "k8s-app", "aws-node"},
	{"kindnet", "app", "kindnet"},
	{"weave-net", "name", "weave-net"},
}

// componentOf names a kube-system pod's component, by its labels or, for a
// static pod, its name.
func componentOf(p pod) string {
	for _, c := range nodeComponents {
		if p.Metadata.Labels[c.label] == c.value {
			return c.component
		}
	}
	for _, c := range nodeComponents {
		if strings.HasPrefix(p.Metadata.Name, c.component+"-") {
			return c.component
		}
	}
	return ""
}

// controlPlane are the components of a self-managed control plane, each a
// static pod named <component>-<node> on the control-plane nodes.
var controlPlane = []string{"kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager"}

// nodeReadings: every node (Ready and why not, cordoned, taints, pressure),
// the kube-system pods that run nodes and the control plane when one is not
// running and ready, the node agents a DaemonSet should run on a node but
// does not, and the control-plane components missing from a node that runs
// the others. Nodes in trouble first.
func nodeReadings(e PlanEntry, v *clusterView) Result {
	var rs []analyzer.Reading
	for _, n := range v.nodes {
		rs = append(rs, nodeReading(n))
	}
	rs = append(rs, agentReadings(v)...)
	if len(rs) == 0 {
		return Result{Note: "no nodes readable"}
	}
	troubleFirst(rs, func(r analyzer.Reading) bool {
		return r.Value < 1 || r.Labels["unschedulable"] == "true" || r.Labels["pressure"] != ""
	},
		func(r analyzer.Reading) bool { return r.Signal == analyzer.SignalNodeStatus })
	return Result{Readings: rs}
}

func nodeReading(n node) analyzer.Reading {
	ready, _ := conditionOf(n.Status.Conditions, "Ready")
	status := firstNonEmpty(ready.Status, "Unknown")
	var pressure, taints, problems []string
	alive := false
	for _, c := range n.Status.Conditions {
		switch {
		case c.Type != "Ready" && c.Status == "True" && strings.HasSuffix(c.Type, "Pressure") || c.Type == "NetworkUnavailable" && c.Status == "True":
			pressure = append(pressure, c.Type)
		case kubeletConditions[c.Type]:
		default:
			// node-problem-detector's conditions (FrequentKubeletRestart,
			// KubeletUnhealthy, ContainerRuntimeUnhealthy, KernelDeadlock…):
			// posted by a daemon of its own, so still fresh on a machine
			// whose kubelet stopped.
			if c.Status == "True" {
				problems = append(problems, c.Type)
			}
			alive = alive || (ready.Status != "True" && c.LastHeartbeatTime.After(ready.LastTransitionTime.Time))
		}
	}
	for _, t := range n.Spec.Taints {
		taints = append(taints, t.Key+optional("=", t.Value)+":"+t.Effect)
	}
	line := fmt.Sprintf("Node %s: Ready=%s", n.Metadata.Name, status)
	if status != "True" {
		line += optional(" (", ready.Reason+optional(": ", clip.To(ready.Message, 240))) + map[bool]string{true: ")", false: ""}[ready.Reason != ""]
		if !ready.LastTransitionTime.IsZero() {
			line += " since " + ready.LastTransitionTime.Format(time.RFC3339)
		}
	}
	if n.Spec.Unschedulable {
		line += "; cordoned (unschedulable)"
	}
	if len(pressure) > 0 {
		line += "; " + strings.Join(pressure, ",")
	}
	if len(problems) > 0 {
		line += "; node problems " + strings.Join(problems, ",")
	}
	if alive {
		line += "; its node-problem-detector still reports"
	}
	if len(taints) > 0 {
		line += "; taints " + strings.Join(taints, ",")
	}
	value := 0.0
	if status == "True" {
		value = 1
	}
	return reading(analyzer.SignalNodeStatus, value, ready.LastTransitionTime.Time, line, map[string]string{
		"node": n.Metadata.Name, "ready": status, "reason": ready.Reason, "message": ready.Message,
		"since": ready.LastTransitionTime.Format(time.RFC3339), "heartbeat": ready.LastHeartbeatTime.Format(time.RFC3339),
		"unschedulable": strconv.FormatBool(n.Spec.Unschedulable), "taints": strings.Join(taints, ","), "pressure": strings.Join(pressure, ","),
		"problems": strings.Join(problems, ","), "alive": strconv.FormatBool(alive),
		"control_plane": strconv.FormatBool(hasKey(n.Metadata.Labels, "node-role.kubernetes.io/control-plane") || hasKey(n.Metadata.Labels, "node-role.kubernetes.io/master")),
	})
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// kubeletConditions are the node conditions the kubelet itself posts.
var kubeletConditions = map[string]bool{"Ready": true, "MemoryPressure": true, "DiskPressure": true, "PIDPressure": true, "NetworkUnavailable": true}

// agentReadings reads kube-system: every node-agent and control-plane pod
// that is not running and ready, every node a node-agent DaemonSet misses,
// and every control-plane component missing beside the others.
func agentReadings(v *clusterView) []analyzer.Reading {
	var rs []analyzer.Reading
	onNode := map[string]map[string]bool{} // component → nodes it runs on
	for _, p := range v.systemPods {
		comp := componentOf(p)
		if comp == "" {
			continue
		}
		if onNode[comp] == nil {
			onNode[comp] = map[string]bool{}
		}
		onNode[comp][p.Spec.NodeName] = true
		issue, detail := "", ""
		for _, cs := range p.Status.ContainerStatuses {
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				issue, detail = "waiting", fmt.Sprintf("container %s waiting %s%s; %d restarts", cs.Name, cs.State.Waiting.Reason, optional(": ", clip.To(cs.State.Waiting.Message, 160)), cs.RestartCount)
			case !cs.Ready && issue == "":
				issue, detail = "not_ready", fmt.Sprintf("container %s not ready; %d restarts", cs.Name, cs.RestartCount)
			}
		}
		if issue == "" && (p.Status.Phase != "Running" || !p.ready()) {
			issue, detail = "not_ready", "pod "+firstNonEmpty(p.Status.Phase, "Unknown")+", not ready"+optional(": ", p.Status.Reason)
		}
		if issue == "" {
			continue
		}
		line := fmt.Sprintf("Pod kube-system/%s (%s on node %s): %s", p.Metadata.Name, comp, p.Spec.NodeName, detail)
		rs = append(rs, reading(analyzer.SignalNodeAgent, 0, p.Metadata.CreationTimestamp.Time, line, map[string]string{
			"component": comp, "pod": p.Metadata.Name, "namespace": "kube-system", "node": p.Spec.NodeName, "issue": issue, "detail": detail,
			"workload": v.workloadOf(p.Metadata, "Pod"),
		}))
	}
	for _, ds := range v.systemDaemonSets {
		comp := ""
		for _, c := range nodeComponents {
			if ds.Metadata.Name == c.component || ds.Spec.Selector.MatchLabels[c.label] == c.value {
				comp = c.component
			}
		}
		if comp == "" || ds.Status.DesiredNumberScheduled == 0 {
			continue
		}
		for _, n := range v.nodes {
			if onNode[comp][n.Metadata.Name] || !tolerates(ds, n) {
				continue
			}
			detail := fmt.Sprintf("no %s pod on node %s (DaemonSet %s: %d desired, %d ready)", comp, n.Metadata.Name, ds.Metadata.Name, ds.Status.DesiredNumberScheduled, ds.Status.NumberReady)
			rs = append(rs, reading(analyzer.SignalNodeAgent, 0, ds.Metadata.CreationTimestamp.Time, "kube-system: "+detail, map[string]string{
				"component": comp, "node": n.Metadata.Name, "namespace": "kube-system", "issue": "missing", "detail": detail, "workload": "daemonset/" + ds.Metadata.Name,
			}))
		}
	}
	// A self-managed control plane runs each component as a static pod on
	// each control-plane node; one missing where the others run is down.
	for _, n := range v.nodes {
		present := 0
		for _, comp := range controlPlane {
			if onNode[comp][n.Metadata.Name] {
				present++
			}
		}
		if present == 0 || present == len(controlPlane) {
			continue
		}
		for _, comp := range controlPlane {
			if onNode[comp][n.Metadata.Name] {
				continue
			}
			podName := comp + "-" + n.Metadata.Name
			detail := fmt.Sprintf("no %s pod on control-plane node %s, where the other control-plane components run", comp, n.Metadata.Name)
			rs = append(rs, reading(analyzer.SignalNodeAgent, 0, time.Time{}, "kube-system: "+detail+" (static pod "+podName+" absent)", map[string]string{
				"component": comp, "pod": podName, "namespace": "kube-system", "node": n.Metadata.Name, "issue": "missing", "detail": detail,
			}))
		}
	}
	return rs
}

// tolerates tells whether a DaemonSet's pods may run on a node: a node
// tainted NoSchedule needs a toleration of that taint, or one tolerating
// everything.
func tolerates(ds workload, n node) bool {
	for _, t := range n.Spec.Taints {
		if t.Effect != "NoSchedule" && t.Effect != "NoExecute" {
			continue
		}
		ok := false
		for _, x := range ds.Spec.Template.Spec.Tolerations {
			ok = ok || (x.Key == "" && x.Operator == "Exists") || x.Key == t.Key
		}
		if !ok {
			return false
		}
	}
	return true
}

// quotaReadings: each resource of each ResourceQuota, used against hard,
// fullest first.
func quotaReadings(e PlanEntry, v *clusterView) Result {
	var rs []analyzer.Reading
	for _, q := range v.quotas {
		for _, res := range sortedKeysOf(q.Status.Hard) {
			hard, okH := parseQuantity(q.Status.Hard[res])
			used, okU := parseQuantity(q.Status.Used[res])
			if !okH || !okU {
				continue
			}
			line := fmt.Sprintf("ResourceQuota %s/%s %s: used %s of %s", q.Metadata.Namespace, q.Metadata.Name, res, q.Status.Used[res], q.Status.Hard[res])
			if hard > 0 {
				line += fmt.Sprintf(" (%.0f%%)", 100*used/hard)
			}
			r := reading(analyzer.SignalQuota, used, q.Metadata.CreationTimestamp.Time, line, map[string]string{
				"namespace": q.Metadata.Namespace, "resourcequota": q.Metadata.Name, "resource": res,
			})
			r.Limit = hard
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no ResourceQuota in namespace %s", v.namespace)}
	}
	sort.SliceStable(rs, func(i, j int) bool { return ratioOf(rs[i]) > ratioOf(rs[j]) })
	return Result{Readings: rs}
}

func ratioOf(r analyzer.Reading) float64 {
	if r.Limit <= 0 {
		if r.Value > 0 {
			return 2
		}
		return 0
	}
	return r.Value / r.Limit
}

func sortedKeysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseQuantity reads a Kubernetes resource quantity ("500m", "2", "4Gi",
// "1.5", "10k") as a number in base units.
func parseQuantity(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	suffixes := []struct {
		s string
		f float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
		{"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}
	mult := 1.0
	for _, x := range suffixes {
		if strings.HasSuffix(s, x.s) {
			s, mult = strings.TrimSuffix(s, x.s), x.f
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f * mult, true
}

// claimReadings: each PersistentVolumeClaim: bound or not, and whether the
// StorageClass it asks for and the volume it names exist.
func claimReadings(e PlanEntry, v *clusterView) Result {
	classes, volumes := map[string]bool{}, map[string]bool{}
	for _, c := range v.classes {
		classes[c.Metadata.Name] = true
	}
	for _, pv := range v.volumes {
		volumes[pv.Metadata.Name] = true
	}
	var rs []analyzer.Reading
	for _, c := range v.claims {
		class := ""
		if c.Spec.StorageClassName != nil {
			class = *c.Spec.StorageClassName
		}
		phase := firstNonEmpty(c.Status.Phase, "Pending")
		line := fmt.Sprintf("PersistentVolumeClaim %s/%s: %s", c.Metadata.Namespace, c.Metadata.Name, phase) + optional(", storageClass ", class) +
			optional(", volume ", c.Spec.VolumeName)
		issue := ""
		switch {
		case class != "" && v.read["storageclasses"] && !classes[class]:
			issue = "no_class"
			line += "; StorageClass " + class + " does not exist"
		case c.Spec.VolumeName != "" && v.read["persistentvolumes"] && !volumes[c.Spec.VolumeName]:
			issue = "no_volume"
			line += "; PersistentVolume " + c.Spec.VolumeName + " does not exist"
		}
		value := 0.0
		if phase == "Bound" {
			value = 1
		}
		rs = append(rs, reading(analyzer.SignalVolumeClaim, value, c.Metadata.CreationTimestamp.Time, line, map[string]string{
			"namespace": c.Metadata.Namespace, "pvc": c.Metadata.Name, "phase": phase, "storageclass": class, "issue": issue,
		}))
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no PersistentVolumeClaims in namespace %s", v.namespace)}
	}
	troubleFirst(rs, func(r analyzer.Reading) bool { return r.Value < 1 }, func(analyzer.Reading) bool { return false })
	return Result{Readings: rs}
}
