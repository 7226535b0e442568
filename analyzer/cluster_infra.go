package analyzer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

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
		if !slices.Contains(callers[e.Labels["host"]], e.Labels["workload"]) {
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

// podsOn lists the readings' pods placed on node.
func (c *cluster) podsOn(node string) []string {
	if node == "" {
		return nil
	}
	var out []string
	for _, p := range c.order {
		if p.node == node {
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
