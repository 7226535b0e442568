package analyzer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

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
		ns := firstOr(targets[wl].Labels["namespace"], c.nsOf(wl))
		out = append(out, fault{cat: CategoryNetworkDegradation, mech: m, culprit: workloadCulprit(wl, ns, ""), str: 0.9,
			cite: targets[wl], affects: []string{wl}, what: fmt.Sprintf("a fault-injection experiment degrading the traffic of %s (%s)", wl, strings.ReplaceAll(m, "_", " "))})
	}
	return out
}

// workloadsNamed lists the workloads of the cluster named name.
func (c *cluster) workloadsNamed(name string) []string {
	var out []string
	for _, p := range c.order {
		if _, n, _ := strings.Cut(p.workload, "/"); n == name && !slices.Contains(out, p.workload) {
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
