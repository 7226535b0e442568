package opensre

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/replay"
)

// The eks suite's files, as OpenSRE's EKS tools return them.
type (
	podsFile struct {
		Pods []podFixture `json:"pods"`
	}
	podFixture struct {
		Name              string             `json:"name"`
		Namespace         string             `json:"namespace"`
		Phase             string             `json:"phase"`
		NodeName          string             `json:"node_name"`
		StartTime         string             `json:"start_time"`
		DeletionTimestamp string             `json:"deletion_timestamp"`
		Containers        []containerFixture `json:"containers"`
		Conditions        []struct {
			Type, Status, Reason, Message string
		} `json:"conditions"`
	}
	containerFixture struct {
		Name         string `json:"name"`
		Ready        bool   `json:"ready"`
		RestartCount int    `json:"restart_count"`
		State        struct {
			Running    bool   `json:"running"`
			Waiting    bool   `json:"waiting"`
			Terminated bool   `json:"terminated"`
			Reason     string `json:"reason"`
			Message    string `json:"message"`
			StartedAt  string `json:"started_at"`
			ExitCode   *int   `json:"exit_code"`
		} `json:"state"`
	}
	eventsFile struct {
		Events []struct {
			Namespace      string `json:"namespace"`
			Reason         string `json:"reason"`
			Message        string `json:"message"`
			Type           string `json:"type"`
			Count          int    `json:"count"`
			InvolvedObject string `json:"involved_object"`
			FirstTime      string `json:"first_time"`
			LastTime       string `json:"last_time"`
		} `json:"warning_events"`
	}
	deploymentsFile struct {
		Deployments []struct {
			Name        string `json:"name"`
			Namespace   string `json:"namespace"`
			Desired     int    `json:"desired"`
			Ready       int    `json:"ready"`
			Available   int    `json:"available"`
			Unavailable int    `json:"unavailable"`
		} `json:"deployments"`
	}
	nodesFile struct {
		Nodes []struct {
			Name              string `json:"name"`
			InternalIP        string `json:"internal_ip"`
			Ready             string `json:"ready"`
			MemoryPressure    string `json:"memory_pressure"`
			DiskPressure      string `json:"disk_pressure"`
			PIDPressure       string `json:"pid_pressure"`
			CapacityCPU       string `json:"capacity_cpu"`
			CapacityMemory    string `json:"capacity_memory"`
			AllocatableCPU    string `json:"allocatable_cpu"`
			AllocatableMemory string `json:"allocatable_memory"`
			InstanceType      string `json:"instance_type"`
		} `json:"nodes"`
	}
)

// eksEvidence reads the eks files the case's available_evidence lists.
type eksEvidence struct {
	pods        podsFile
	events      eventsFile
	deployments deploymentsFile
	nodes       nodesFile
	podLogs     *podLogsFile
	datadog     *datadogLogsFile
}

func readEvidence(meta metadata, files caseFiles, name string, v any) (bool, error) {
	if !meta.evidence(name) {
		return false, nil
	}
	p := files.path(name + ".json")
	if p == "" {
		return false, fmt.Errorf("%s.json is listed in available_evidence and missing", name)
	}
	return true, readJSON(p, v)
}

// loadKubernetes turns an eks case into a cluster's objects and the log
// streams a shipper would have stored.
func loadKubernetes(s *replay.Scenario, meta metadata, files caseFiles) error {
	var ev eksEvidence
	for name, v := range map[string]any{"eks_pods": &ev.pods, "eks_events": &ev.events,
		"eks_deployments": &ev.deployments, "eks_node_health": &ev.nodes} {
		if _, err := readEvidence(meta, files, name, v); err != nil {
			return err
		}
	}
	var logs podLogsFile
	if ok, err := readEvidence(meta, files, "eks_pod_logs", &logs); err != nil {
		return err
	} else if ok {
		ev.podLogs = &logs
	}
	var dd datadogLogsFile
	if ok, err := readEvidence(meta, files, "datadog_logs", &dd); err != nil {
		return err
	} else if ok {
		ev.datadog = &dd
	}
	k := newCluster(meta, ev)
	objects, err := k.objects()
	if err != nil {
		return err
	}
	s.Kubernetes = &replay.Cluster{Objects: objects}
	s.Logs, err = k.streams()
	return err
}

// cluster is an eks case being rendered as API objects.
type cluster struct {
	meta metadata
	ev   eksEvidence
	// deployments are the Deployment names the case names, longest first so
	// a pod's owner is the most specific prefix.
	deployments []string
	pods        map[string]podFixture
}

func newCluster(meta metadata, ev eksEvidence) *cluster {
	k := &cluster{meta: meta, ev: ev, pods: map[string]podFixture{}}
	for _, d := range ev.deployments.Deployments {
		k.deployments = append(k.deployments, d.Name)
	}
	if meta.str("workload_type") == "deployment" && meta.str("workload_name") != "" && !slices.Contains(k.deployments, meta.str("workload_name")) {
		k.deployments = append(k.deployments, meta.str("workload_name"))
	}
	sort.Slice(k.deployments, func(i, j int) bool { return len(k.deployments[i]) > len(k.deployments[j]) })
	for _, p := range ev.pods.Pods {
		k.pods[p.Name] = p
	}
	return k
}

// owner splits a Deployment's pod name, <deployment>-<pod-template-hash>-<suffix>:
// its ReplicaSet, Deployment and hash. The Deployment is the longest one the
// case names that prefixes the pod; else the name's own segments say.
func (k *cluster) owner(pod string) (rs, deployment, hash string, ok bool) {
	cut := strings.LastIndex(pod, "-")
	if cut <= 0 {
		return "", "", "", false
	}
	rs = pod[:cut]
	for _, d := range k.deployments {
		if strings.HasPrefix(rs, d+"-") {
			return rs, d, rs[len(d)+1:], true
		}
	}
	cut = strings.LastIndex(rs, "-")
	if cut <= 0 {
		return "", "", "", false
	}
	return rs, rs[:cut], rs[cut+1:], true
}

// scheduled tells whether the fixture places the pod on a node.
func scheduled(p podFixture) bool { return p.NodeName != "" && p.NodeName != "unscheduled" }

var (
	// lastTerminatedRe finds the reason a waiting message gives for the last
	// termination ("…; last terminated: reason=OOMKilled, exit_code=137").
	lastTerminatedRe = regexp.MustCompile(`last terminated: reason=([A-Za-z]+)`)
	// pullingImageRe finds the image a waiting message says is being pulled.
	pullingImageRe = regexp.MustCompile(`pulling image "([^"]+)"`)
)

// replicaSet is one ReplicaSet as the case's pods imply it.
type replicaSet struct {
	name, deployment, hash string
	pods                   []podFixture
	first                  time.Time
	revision               int
	containers             []string
	image                  string
}

// replicaSets groups the pods by the ReplicaSet their names imply and numbers
// each Deployment's ReplicaSets by their first pod's start, oldest first.
func (k *cluster) replicaSets() ([]*replicaSet, error) {
	by := map[string]*replicaSet{}
	var out []*replicaSet
	for _, p := range k.ev.pods.Pods {
		name, dep, hash, ok := k.owner(p.Name)
		if !ok {
			continue
		}
		start, err := parseTime(p.StartTime)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		rs := by[name]
		if rs == nil {
			rs = &replicaSet{name: name, deployment: dep, hash: hash, first: start}
			by[name] = rs
			out = append(out, rs)
		}
		rs.pods = append(rs.pods, p)
		if start.Before(rs.first) {
			rs.first = start
		}
		for _, c := range p.Containers {
			if !slices.Contains(rs.containers, c.Name) {
				rs.containers = append(rs.containers, c.Name)
			}
			if m := pullingImageRe.FindStringSubmatch(c.State.Message); m != nil && len(p.Containers) == 1 {
				rs.image = m[1]
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].first.Equal(out[j].first) {
			return out[i].first.Before(out[j].first)
		}
		return out[i].name < out[j].name
	})
	revisions := map[string]int{}
	for _, rs := range out {
		revisions[rs.deployment]++
		rs.revision = revisions[rs.deployment]
	}
	return out, nil
}

func podReady(p podFixture) bool {
	for _, c := range p.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// objects renders every object the case states: Pods, Events, Deployments,
// the ReplicaSets the pods imply, and Nodes.
func (k *cluster) objects() ([]json.RawMessage, error) {
	sets, err := k.replicaSets()
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	images := map[string]string{}
	for _, rs := range sets {
		images[rs.name] = rs.image
	}
	for _, p := range k.ev.pods.Pods {
		o, err := k.pod(p, images)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	for _, rs := range sets {
		objs = append(objs, k.replicaSet(rs))
	}
	for _, d := range k.ev.deployments.Deployments {
		objs = append(objs, k.deployment(d.Name, d.Namespace, d.Desired, d.Ready, d.Available, d.Unavailable, sets))
	}
	evs, err := k.events()
	if err != nil {
		return nil, err
	}
	objs = append(objs, evs...)
	for _, n := range k.ev.nodes.Nodes {
		conds := []any{}
		for _, c := range [][2]string{{"MemoryPressure", n.MemoryPressure}, {"DiskPressure", n.DiskPressure},
			{"PIDPressure", n.PIDPressure}, {"Ready", n.Ready}} {
			if c[1] != "" {
				conds = append(conds, map[string]any{"type": c[0], "status": c[1]})
			}
		}
		meta := map[string]any{"name": n.Name}
		if n.InstanceType != "" {
			meta["labels"] = map[string]string{"node.kubernetes.io/instance-type": n.InstanceType}
		}
		status := map[string]any{"conditions": conds,
			"capacity":    nonEmpty(map[string]string{"cpu": n.CapacityCPU, "memory": n.CapacityMemory}),
			"allocatable": nonEmpty(map[string]string{"cpu": n.AllocatableCPU, "memory": n.AllocatableMemory})}
		if n.InternalIP != "" {
			status["addresses"] = []any{map[string]any{"type": "InternalIP", "address": n.InternalIP}}
		}
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": map[string]any{}, "status": status})
	}
	out := make([]json.RawMessage, 0, len(objs))
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

func nonEmpty(m map[string]string) map[string]string {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// podLabels are a Deployment's pod labels: its selector and the template
// hash the ReplicaSet adds.
func podLabels(deployment, hash string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": deployment, "pod-template-hash": hash}
}

// pod renders one pod. An unscheduled pod has no node, start time or
// container statuses, as the API shows a pod no kubelet has taken.
func (k *cluster) pod(p podFixture, images map[string]string) (map[string]any, error) {
	start, err := parseTime(p.StartTime)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", p.Name, err)
	}
	meta := map[string]any{"name": p.Name, "namespace": p.Namespace, "creationTimestamp": apiTime(start)}
	image := ""
	if rs, dep, hash, ok := k.owner(p.Name); ok {
		meta["labels"] = podLabels(dep, hash)
		meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "controller": true, "blockOwnerDeletion": true}}
		image = images[rs]
	}
	if p.DeletionTimestamp != "" {
		del, err := parseTime(p.DeletionTimestamp)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		meta["deletionTimestamp"] = apiTime(del)
	}
	spec := map[string]any{}
	var containers []any
	for _, c := range p.Containers {
		containers = append(containers, withImage(map[string]any{"name": c.Name}, image))
	}
	spec["containers"] = containers
	var conds []any
	for _, c := range p.Conditions {
		cond := map[string]any{"type": c.Type, "status": c.Status}
		if c.Reason != "" {
			cond["reason"] = c.Reason
		}
		if c.Message != "" {
			cond["message"] = c.Message
		}
		conds = append(conds, cond)
	}
	status := map[string]any{"phase": p.Phase, "conditions": conds}
	if scheduled(p) {
		spec["nodeName"] = p.NodeName
		status["startTime"] = apiTime(start)
		var statuses []any
		for _, c := range p.Containers {
			cs, err := containerStatus(c, image)
			if err != nil {
				return nil, fmt.Errorf("pod %s: %w", p.Name, err)
			}
			statuses = append(statuses, cs)
		}
		status["containerStatuses"] = statuses
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}, nil
}

func withImage(m map[string]any, image string) map[string]any {
	if image != "" {
		m["image"] = image
	}
	return m
}

// containerStatus renders a container's state. An exit code beside a
// waiting or running state is the last termination's.
func containerStatus(c containerFixture, image string) (map[string]any, error) {
	st := c.State
	detail := map[string]any{}
	if st.Reason != "" {
		detail["reason"] = st.Reason
	}
	if st.Message != "" {
		detail["message"] = st.Message
	}
	state, last := map[string]any{}, map[string]any{}
	switch {
	case st.Terminated:
		if st.ExitCode != nil {
			detail["exitCode"] = *st.ExitCode
		}
		if err := addTime(detail, "startedAt", st.StartedAt); err != nil {
			return nil, err
		}
		state["terminated"] = detail
	case st.Waiting:
		state["waiting"] = detail
	case st.Running:
		running := map[string]any{}
		if err := addTime(running, "startedAt", st.StartedAt); err != nil {
			return nil, err
		}
		state["running"] = running
	}
	if st.ExitCode != nil && !st.Terminated {
		term := map[string]any{"exitCode": *st.ExitCode}
		if m := lastTerminatedRe.FindStringSubmatch(st.Message); m != nil {
			term["reason"] = m[1]
		}
		last["terminated"] = term
	}
	return withImage(map[string]any{"name": c.Name, "ready": c.Ready, "restartCount": c.RestartCount, "state": state, "lastState": last}, image), nil
}

func addTime(m map[string]any, key, s string) error {
	if s == "" {
		return nil
	}
	t, err := parseTime(s)
	if err != nil {
		return err
	}
	m[key] = apiTime(t)
	return nil
}

// replicaSet renders one ReplicaSet: its pods not being deleted are its
// replicas, the Ready ones its ready and available replicas.
func (k *cluster) replicaSet(rs *replicaSet) map[string]any {
	ns := rs.pods[0].Namespace
	replicas, ready := 0, 0
	for _, p := range rs.pods {
		if p.DeletionTimestamp != "" {
			continue
		}
		replicas++
		if podReady(p) {
			ready++
		}
	}
	labels := podLabels(rs.deployment, rs.hash)
	annotations := map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(rs.revision)}
	for _, d := range k.ev.deployments.Deployments {
		if d.Name == rs.deployment && d.Namespace == ns {
			annotations["deployment.kubernetes.io/desired-replicas"] = strconv.Itoa(d.Desired)
		}
	}
	var containers []any
	for _, c := range rs.containers {
		containers = append(containers, withImage(map[string]any{"name": c}, rs.image))
	}
	status := map[string]any{"replicas": replicas, "fullyLabeledReplicas": replicas}
	if ready > 0 {
		status["readyReplicas"], status["availableReplicas"] = ready, ready
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": rs.name, "namespace": ns, "creationTimestamp": apiTime(rs.first), "labels": labels,
			"annotations":     annotations,
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": rs.deployment, "controller": true, "blockOwnerDeletion": true}}},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"containers": containers}}},
		"status": status,
	}
}

// deployment renders a Deployment with the counts the fixture gives. Its
// Progressing condition is False with ProgressDeadlineExceeded when an event
// says the deadline passed and not all its replicas are available since.
func (k *cluster) deployment(name, ns string, desired, ready, available, unavailable int, sets []*replicaSet) map[string]any {
	selector := map[string]string{"app.kubernetes.io/name": name}
	var newest *replicaSet
	replicas := 0
	for _, rs := range sets {
		if rs.deployment != name {
			continue
		}
		if newest == nil || rs.revision > newest.revision {
			newest = rs
		}
		for _, p := range rs.pods {
			if p.DeletionTimestamp == "" {
				replicas++
			}
		}
	}
	meta := map[string]any{"name": name, "namespace": ns}
	template := map[string]any{"metadata": map[string]any{"labels": selector}}
	if newest != nil {
		meta["annotations"] = map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(newest.revision)}
		var containers []any
		for _, c := range newest.containers {
			containers = append(containers, withImage(map[string]any{"name": c}, newest.image))
		}
		template["spec"] = map[string]any{"containers": containers}
	}
	status := map[string]any{}
	for key, n := range map[string]int{"replicas": replicas, "readyReplicas": ready, "availableReplicas": available, "unavailableReplicas": unavailable} {
		if n > 0 {
			status[key] = n
		}
	}
	if available < desired {
		for _, e := range k.ev.events.Events {
			if e.Reason == "ProgressDeadlineExceeded" && e.InvolvedObject == "Deployment/"+name && e.Namespace == ns {
				if at, err := parseTime(e.FirstTime); err == nil {
					status["conditions"] = []any{map[string]any{"type": "Progressing", "status": "False", "reason": e.Reason,
						"message": e.Message, "lastUpdateTime": apiTime(at), "lastTransitionTime": apiTime(at)}}
				}
			}
		}
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec":   map[string]any{"replicas": desired, "selector": map[string]any{"matchLabels": selector}, "template": template},
		"status": status}
}

// eventSources are the components that emit an event about each kind; a
// pod's scheduling events come from the scheduler, the rest from its kubelet.
var eventSources = map[string]string{"Pod": "kubelet", "ReplicaSet": "replicaset-controller",
	"Deployment": "deployment-controller", "Node": "node-controller"}

var schedulerReasons = map[string]bool{"FailedScheduling": true, "Scheduled": true}

// apiVersions of the kinds events are about.
var apiVersions = map[string]string{"Pod": "v1", "Node": "v1", "ResourceQuota": "v1", "ReplicaSet": "apps/v1", "Deployment": "apps/v1"}

// events renders the Warning (and other) events. An event's name is its
// object's and the hex of its first time in nanoseconds, as the API names
// them.
func (k *cluster) events() ([]map[string]any, error) {
	var out []map[string]any
	seen := map[string]bool{}
	for i, e := range k.ev.events.Events {
		kind, name, ok := strings.Cut(e.InvolvedObject, "/")
		if !ok {
			return nil, fmt.Errorf("event %d: involved_object %q is not Kind/name", i, e.InvolvedObject)
		}
		first, err := parseTime(e.FirstTime)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		last, err := parseTime(e.LastTime)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		id := first.UnixNano()
		for seen[e.Namespace+"/"+name+strconv.FormatInt(id, 16)] {
			id++
		}
		seen[e.Namespace+"/"+name+strconv.FormatInt(id, 16)] = true
		involved := map[string]any{"kind": kind, "name": name}
		if v, ok := apiVersions[kind]; ok {
			involved["apiVersion"] = v
		}
		if kind != "Node" {
			involved["namespace"] = e.Namespace
		}
		ev := map[string]any{"apiVersion": "v1", "kind": "Event",
			"metadata":       map[string]any{"name": name + "." + strconv.FormatInt(id, 16), "namespace": e.Namespace, "creationTimestamp": apiTime(first)},
			"involvedObject": involved, "reason": e.Reason, "message": e.Message, "type": e.Type, "count": e.Count,
			"firstTimestamp": apiTime(first), "lastTimestamp": apiTime(last)}
		source := map[string]any{}
		if c, ok := eventSources[kind]; ok {
			source["component"] = c
		}
		if kind == "Pod" {
			if schedulerReasons[e.Reason] {
				source["component"] = "default-scheduler"
			} else if p, ok := k.pods[name]; ok && scheduled(p) {
				source["host"] = p.NodeName
			}
		}
		if len(source) > 0 {
			ev["source"] = source
		}
		out = append(out, ev)
	}
	return out, nil
}
