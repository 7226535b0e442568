package datasources

import (
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
		line += parenthesized(strings.TrimPrefix(ready.Reason+optional(": ", clip.To(ready.Message, 240)), ": "))
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
		for _, res := range slices.Sorted(maps.Keys(q.Status.Hard)) {
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

// quantitySuffixes are a resource quantity's binary and decimal suffixes,
// binary first so "Mi" is not read as "M".
var quantitySuffixes = []struct {
	s string
	f float64
}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
	{"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}

// parseQuantity reads a Kubernetes resource quantity ("500m", "2", "4Gi",
// "1.5", "10k") as a number in base units.
func parseQuantity(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	mult := 1.0
	for _, x := range quantitySuffixes {
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
