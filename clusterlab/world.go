package clusterlab

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// World is a small cluster as the Kubernetes API holds it: one control-plane
// node and three workers with their kube-system agents, and namespace "shop"
// running a storefront (frontend → checkout → cart, postgres), its Services,
// EndpointSlices, ServiceAccounts and a ResourceQuota. Objects are kept as
// the API's JSON (maps), so a fault is a change to them in the API's own
// terms; Objects renders them for the replay.
type World struct {
	Now       time.Time
	Namespace string
	objects   []map[string]any
	seq       int
}

// Obj is one object of the world, as the API's JSON.
type Obj = map[string]any

// NewWorld builds the healthy storefront at now.
func NewWorld(now time.Time) *World {
	w := &World{Now: now.UTC().Truncate(time.Second), Namespace: "shop"}
	w.nodes()
	w.kubeSystem()
	w.shop()
	return w
}

// Objects renders the world for the replay, each object with its kind.
func (w *World) Objects() []json.RawMessage {
	out := make([]json.RawMessage, 0, len(w.objects))
	for _, o := range w.objects {
		raw, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		out = append(out, raw)
	}
	return out
}

// Find returns the object of kind and name (namespace aside), or nil.
func (w *World) Find(kind, name string) Obj {
	for _, o := range w.objects {
		if o["kind"] == kind && meta(o)["name"] == name {
			return o
		}
	}
	return nil
}

// All returns every object of kind whose name starts with prefix.
func (w *World) All(kind, prefix string) []Obj {
	var out []Obj
	for _, o := range w.objects {
		if o["kind"] == kind && strings.HasPrefix(meta(o)["name"].(string), prefix) {
			out = append(out, o)
		}
	}
	return out
}

// Add puts an object into the world.
func (w *World) Add(o Obj) { w.objects = append(w.objects, o) }

// Remove deletes the object of kind and name.
func (w *World) Remove(kind, name string) {
	out := w.objects[:0]
	for _, o := range w.objects {
		if !(o["kind"] == kind && meta(o)["name"] == name) {
			out = append(out, o)
		}
	}
	w.objects = out
}

func meta(o Obj) map[string]any { return o["metadata"].(map[string]any) }

// Ago is a timestamp d before now, as the API writes it.
func (w *World) Ago(d time.Duration) string { return w.Now.Add(-d).Format(time.RFC3339) }

func (w *World) uid() string {
	w.seq++
	return fmt.Sprintf("5f1c%04x-8d2e-4b7a-9c3f-%012x", w.seq, w.seq*7919)
}

func (w *World) metaOf(name, namespace string, created time.Duration, labels map[string]string) map[string]any {
	m := map[string]any{"name": name, "uid": w.uid(), "resourceVersion": strconv.Itoa(40000 + w.seq), "creationTimestamp": w.Ago(created)}
	if namespace != "" {
		m["namespace"] = namespace
	}
	if labels != nil {
		m["labels"] = labels
	}
	return m
}

var workers = []string{"worker-1", "worker-2", "worker-3"}

func (w *World) nodes() {
	for i, name := range append([]string{"cp-1"}, workers...) {
		labels := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"topology.kubernetes.io/zone": "eu-west-1" + string(rune('a'+i%3))}
		var taints []any
		if name == "cp-1" {
			labels["node-role.kubernetes.io/control-plane"] = ""
			taints = append(taints, Obj{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"})
		}
		spec := Obj{"podCIDR": fmt.Sprintf("10.244.%d.0/24", i), "providerID": "kind://docker/lab/" + name}
		if taints != nil {
			spec["taints"] = taints
		}
		w.Add(Obj{"apiVersion": "v1", "kind": "Node", "metadata": w.metaOf(name, "", 40*24*time.Hour, labels), "spec": spec,
			"status": Obj{
				"capacity":    Obj{"cpu": "4", "memory": "16331212Ki", "pods": "110", "ephemeral-storage": "102625208Ki"},
				"allocatable": Obj{"cpu": "4", "memory": "16228812Ki", "pods": "110", "ephemeral-storage": "102625208Ki"},
				"conditions":  nodeConditions(w, true, "", ""),
				"addresses":   []any{Obj{"type": "InternalIP", "address": fmt.Sprintf("172.18.0.%d", 2+i)}, Obj{"type": "Hostname", "address": name}},
				"nodeInfo": Obj{"kubeletVersion": "v1.30.4", "kubeProxyVersion": "v1.30.4", "containerRuntimeVersion": "containerd://1.7.18",
					"osImage": "Debian GNU/Linux 12 (bookworm)", "kernelVersion": "6.1.0-25-amd64", "operatingSystem": "linux", "architecture": "amd64"},
			}})
	}
}

// nodeConditions are a node's conditions as the kubelet reports them.
func nodeConditions(w *World, ready bool, reason, message string) []any {
	hb := w.Ago(10 * time.Second)
	since := w.Ago(40 * 24 * time.Hour)
	c := func(typ, status, reason, message string) Obj {
		return Obj{"type": typ, "status": status, "reason": reason, "message": message, "lastHeartbeatTime": hb, "lastTransitionTime": since}
	}
	readyC := c("Ready", "True", "KubeletReady", "kubelet is posting ready status")
	if !ready {
		readyC = c("Ready", "False", reason, message)
	}
	return []any{
		c("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		c("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		c("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		readyC,
	}
}

// PodSpec describes one pod the world builds.
type PodSpec struct {
	Name, Namespace, Node, Image, Container string
	Labels                                  map[string]string
	Owner                                   [2]string // kind, name
	Ports                                   []int
	Env                                     map[string]string
	Liveness, Readiness                     Obj
	Started                                 time.Duration
	IP                                      string
}

// Pod builds a running, ready pod.
func (w *World) Pod(s PodSpec) Obj {
	container := Obj{"name": s.Container, "image": s.Image, "imagePullPolicy": "IfNotPresent",
		"resources":                Obj{"requests": Obj{"cpu": "250m", "memory": "256Mi"}, "limits": Obj{"memory": "512Mi"}},
		"terminationMessagePath":   "/dev/termination-log",
		"terminationMessagePolicy": "File"}
	var ports []any
	for _, p := range s.Ports {
		ports = append(ports, Obj{"name": "http", "containerPort": p, "protocol": "TCP"})
	}
	if len(ports) == 1 && s.Ports[0] == 5432 {
		ports[0].(Obj)["name"] = "postgres"
	}
	if ports != nil {
		container["ports"] = ports
	}
	if len(s.Env) > 0 {
		var env []any
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, Obj{"name": k, "value": s.Env[k]})
		}
		container["env"] = env
	}
	if s.Liveness != nil {
		container["livenessProbe"] = s.Liveness
	}
	if s.Readiness != nil {
		container["readinessProbe"] = s.Readiness
	}
	m := w.metaOf(s.Name, s.Namespace, s.Started+30*time.Second, s.Labels)
	if s.Owner[0] != "" {
		m["ownerReferences"] = []any{Obj{"apiVersion": ownerAPIVersion(s.Owner[0]), "kind": s.Owner[0], "name": s.Owner[1], "uid": "uid-" + s.Owner[1],
			"controller": true, "blockOwnerDeletion": true}}
	}
	started := w.Ago(s.Started)
	cond := func(typ string) Obj {
		return Obj{"type": typ, "status": "True", "lastProbeTime": nil, "lastTransitionTime": started}
	}
	return Obj{"apiVersion": "v1", "kind": "Pod", "metadata": m,
		"spec": Obj{"containers": []any{container}, "nodeName": s.Node, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
			"serviceAccountName": "default", "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
			"tolerations": []any{
				Obj{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
				Obj{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}}},
		"status": Obj{"phase": "Running", "hostIP": "172.18.0.3", "podIP": s.IP, "podIPs": []any{Obj{"ip": s.IP}}, "startTime": started, "qosClass": "Burstable",
			"conditions": []any{cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")},
			"containerStatuses": []any{Obj{"name": s.Container, "image": s.Image, "imageID": s.Image + "@sha256:9b2c41e0f3a8d5c7",
				"containerID": "containerd://" + strings.Repeat(s.Name[:1], 8) + "5e1a", "ready": true, "started": true, "restartCount": 0,
				"state": Obj{"running": Obj{"startedAt": started}}, "lastState": Obj{}}}}}
}

func ownerAPIVersion(kind string) string {
	if kind == "Node" {
		return "v1"
	}
	return "apps/v1"
}

// App is a Deployment the world runs: its ReplicaSet, pods and Service.
type App struct {
	Name, Image, Hash string
	Replicas, Port    int
	Env               map[string]string
	Liveness          Obj
	Readiness         Obj
}

// HTTPProbe is an httpGet probe of path on port.
func HTTPProbe(path string, port int) Obj {
	return Obj{"httpGet": Obj{"path": path, "port": port, "scheme": "HTTP"}, "initialDelaySeconds": 5, "timeoutSeconds": 1,
		"periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
}

var podSuffixes = []string{"x2k4q", "p9m3z", "h7r2k", "w8n5t", "c4v6b", "z9q2m"}

// Deploy adds a Deployment with its current ReplicaSet (revision rev,
// created created ago), ready pods spread over the workers, and a Service
// of the same name selecting app=<name>.
func (w *World) Deploy(a App, rev int, created time.Duration) {
	ns := w.Namespace
	labels := map[string]string{"app": a.Name, "app.kubernetes.io/name": a.Name}
	rs := a.Name + "-" + a.Hash
	podLabels := map[string]string{"app": a.Name, "app.kubernetes.io/name": a.Name, "pod-template-hash": a.Hash}
	w.Add(Obj{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": withAnnotations(w.metaOf(a.Name, ns, 120*24*time.Hour, labels), map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(rev)}),
		"spec": Obj{"replicas": a.Replicas, "selector": Obj{"matchLabels": map[string]string{"app": a.Name}},
			"strategy": Obj{"type": "RollingUpdate", "rollingUpdate": Obj{"maxSurge": "25%", "maxUnavailable": "25%"}},
			"template": Obj{"metadata": Obj{"labels": map[string]string{"app": a.Name, "app.kubernetes.io/name": a.Name}},
				"spec": Obj{"containers": []any{Obj{"name": a.Name, "image": a.Image}}}}},
		"status": Obj{"observedGeneration": rev, "replicas": a.Replicas, "updatedReplicas": a.Replicas, "readyReplicas": a.Replicas, "availableReplicas": a.Replicas,
			"conditions": []any{
				Obj{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.", "lastUpdateTime": w.Ago(created), "lastTransitionTime": w.Ago(created)},
				Obj{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs), "lastUpdateTime": w.Ago(created), "lastTransitionTime": w.Ago(created)}}}})
	w.replicaSet(a, rs, rev, created, a.Replicas)
	for i := 0; i < a.Replicas; i++ {
		w.Add(w.Pod(PodSpec{Name: rs + "-" + podSuffixes[i], Namespace: ns, Node: workers[i%len(workers)], Image: a.Image, Container: a.Name,
			Labels: podLabels, Owner: [2]string{"ReplicaSet", rs}, Ports: []int{a.Port}, Env: a.Env, Liveness: a.Liveness, Readiness: a.Readiness,
			Started: created - 20*time.Second, IP: fmt.Sprintf("10.244.%d.%d", 1+i%3, 10+w.seq%200)}))
	}
	w.Service(a.Name, map[string]string{"app": a.Name}, a.Port, a.Port)
}

func (w *World) replicaSet(a App, rs string, rev int, created time.Duration, replicas int) {
	w.Add(Obj{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": func() map[string]any {
			m := withAnnotations(w.metaOf(rs, w.Namespace, created, map[string]string{"app": a.Name, "pod-template-hash": a.Hash}),
				map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(rev), "deployment.kubernetes.io/desired-replicas": strconv.Itoa(a.Replicas),
					"deployment.kubernetes.io/max-replicas": strconv.Itoa(a.Replicas + 1)})
			m["ownerReferences"] = []any{Obj{"apiVersion": "apps/v1", "kind": "Deployment", "name": a.Name, "uid": "uid-" + a.Name, "controller": true, "blockOwnerDeletion": true}}
			return m
		}(),
		"spec": Obj{"replicas": replicas, "selector": Obj{"matchLabels": map[string]string{"app": a.Name, "pod-template-hash": a.Hash}},
			"template": Obj{"metadata": Obj{"labels": map[string]string{"app": a.Name, "pod-template-hash": a.Hash}},
				"spec": Obj{"containers": []any{Obj{"name": a.Name, "image": a.Image}}}}},
		"status": Obj{"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "observedGeneration": 1}})
}

// Rollout adds revision rev of app a's Deployment: a new ReplicaSet created
// created ago with replicas pods built by pod, and the Deployment pointed at it.
func (w *World) Rollout(a App, rev int, created time.Duration, replicas int, pod func(p Obj)) {
	rs := a.Name + "-" + a.Hash
	w.replicaSet(a, rs, rev, created, replicas)
	set := w.Find("ReplicaSet", rs)
	set["status"] = Obj{"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": 0, "availableReplicas": 0, "observedGeneration": 1}
	for i := 0; i < replicas; i++ {
		p := w.Pod(PodSpec{Name: rs + "-" + podSuffixes[len(podSuffixes)-1-i], Namespace: w.Namespace, Node: workers[(i+1)%len(workers)], Image: a.Image,
			Container: a.Name, Labels: map[string]string{"app": a.Name, "app.kubernetes.io/name": a.Name, "pod-template-hash": a.Hash},
			Owner: [2]string{"ReplicaSet", rs}, Ports: []int{a.Port}, Env: a.Env, Started: created - 10*time.Second, IP: fmt.Sprintf("10.244.2.%d", 100+i)})
		if pod != nil {
			pod(p)
		}
		w.Add(p)
	}
	d := w.Find("Deployment", a.Name)
	meta(d)["annotations"].(map[string]string)["deployment.kubernetes.io/revision"] = strconv.Itoa(rev)
	d["spec"].(Obj)["template"].(Obj)["spec"].(Obj)["containers"] = []any{Obj{"name": a.Name, "image": a.Image}}
}

func withAnnotations(m map[string]any, a map[string]string) map[string]any {
	m["annotations"] = a
	return m
}

// Service adds a ClusterIP Service and the EndpointSlice the endpoint
// controller keeps for it: the ready pods its selector matches.
func (w *World) Service(name string, selector map[string]string, port, target int) {
	ns := w.Namespace
	w.seq++
	w.Add(Obj{"apiVersion": "v1", "kind": "Service", "metadata": w.metaOf(name, ns, 120*24*time.Hour, map[string]string{"app": name}),
		"spec": Obj{"type": "ClusterIP", "clusterIP": fmt.Sprintf("10.96.%d.%d", 10+w.seq%50, 20+w.seq%200), "selector": selector, "sessionAffinity": "None",
			"ports": []any{Obj{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}}}})
	w.Add(w.endpointSlice(name, selector, target))
	w.Add(w.endpointsOf(name))
}

// endpointsOf is the v1 Endpoints the endpoints controller keeps beside a
// Service's EndpointSlice, from the same addresses.
func (w *World) endpointsOf(svc string) Obj {
	var slice Obj
	for _, o := range w.objects {
		if o["kind"] == "EndpointSlice" && meta(o)["labels"].(map[string]string)["kubernetes.io/service-name"] == svc {
			slice = o
		}
	}
	var ready, notReady []any
	port := 0
	if slice != nil {
		port, _ = slice["ports"].([]any)[0].(Obj)["port"].(int)
		for _, e := range slice["endpoints"].([]any) {
			e := e.(Obj)
			addr := Obj{"ip": e["addresses"].([]any)[0], "nodeName": e["nodeName"], "targetRef": e["targetRef"]}
			if e["conditions"].(Obj)["ready"] == true {
				ready = append(ready, addr)
			} else {
				notReady = append(notReady, addr)
			}
		}
	}
	ep := Obj{"apiVersion": "v1", "kind": "Endpoints", "metadata": w.metaOf(svc, w.Namespace, 120*24*time.Hour, map[string]string{"app": svc})}
	if len(ready)+len(notReady) > 0 {
		subset := Obj{"ports": []any{Obj{"name": "http", "port": port, "protocol": "TCP"}}}
		if ready != nil {
			subset["addresses"] = ready
		}
		if notReady != nil {
			subset["notReadyAddresses"] = notReady
		}
		ep["subsets"] = []any{subset}
	}
	return ep
}

func (w *World) endpointSlice(svc string, selector map[string]string, port int) Obj {
	var eps []any
	for _, p := range w.objects {
		if p["kind"] != "Pod" || meta(p)["namespace"] != w.Namespace {
			continue
		}
		labels, _ := meta(p)["labels"].(map[string]string)
		ok := true
		for k, v := range selector {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		st := p["status"].(Obj)
		eps = append(eps, Obj{"addresses": []any{st["podIP"]}, "conditions": Obj{"ready": podReady(p), "serving": podReady(p), "terminating": false},
			"nodeName": p["spec"].(Obj)["nodeName"], "targetRef": Obj{"kind": "Pod", "name": meta(p)["name"], "namespace": w.Namespace}})
	}
	if eps == nil {
		eps = []any{}
	}
	return Obj{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": func() map[string]any {
			m := w.metaOf(svc+"-"+podSuffixes[w.seq%len(podSuffixes)], w.Namespace, 120*24*time.Hour,
				map[string]string{"kubernetes.io/service-name": svc, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})
			m["ownerReferences"] = []any{Obj{"apiVersion": "v1", "kind": "Service", "name": svc, "uid": "uid-" + svc, "controller": true, "blockOwnerDeletion": true}}
			return m
		}(),
		"addressType": "IPv4", "endpoints": eps, "ports": []any{Obj{"name": "http", "port": port, "protocol": "TCP"}}}
}

// RefreshEndpoints rebuilds every EndpointSlice from the pods as they are
// now, as the endpoint controller would after a change.
func (w *World) RefreshEndpoints() {
	var svcs []Obj
	for _, o := range w.objects {
		if o["kind"] == "Service" && meta(o)["namespace"] == w.Namespace {
			svcs = append(svcs, o)
		}
	}
	out := w.objects[:0]
	for _, o := range w.objects {
		if (o["kind"] != "EndpointSlice" && o["kind"] != "Endpoints") || meta(o)["namespace"] != w.Namespace {
			out = append(out, o)
		}
	}
	w.objects = out
	for _, s := range svcs {
		spec := s["spec"].(Obj)
		sel, _ := spec["selector"].(map[string]string)
		port := spec["ports"].([]any)[0].(Obj)["targetPort"]
		n, _ := port.(int)
		w.Add(w.endpointSlice(meta(s)["name"].(string), sel, n))
		w.Add(w.endpointsOf(meta(s)["name"].(string)))
	}
}

func podReady(p Obj) bool {
	for _, c := range p["status"].(Obj)["conditions"].([]any) {
		if c.(Obj)["type"] == "Ready" {
			return c.(Obj)["status"] == "True"
		}
	}
	return false
}

// SetNotReady marks a pod's Ready and ContainersReady conditions False, as
// the kubelet does for a failing container.
func SetNotReady(p Obj, since string) {
	for _, c := range p["status"].(Obj)["conditions"].([]any) {
		c := c.(Obj)
		if c["type"] == "Ready" || c["type"] == "ContainersReady" {
			c["status"], c["reason"], c["lastTransitionTime"] = "False", "ContainersNotReady", since
			c["message"] = "containers with unready status: [" + Container(p)["name"].(string) + "]"
		}
	}
	cs := Status(p)
	cs["ready"] = false
}

// Container is a pod's first container spec; Status its first container status.
func Container(p Obj) Obj { return p["spec"].(Obj)["containers"].([]any)[0].(Obj) }

// Status is a pod's first container status.
func Status(p Obj) Obj { return p["status"].(Obj)["containerStatuses"].([]any)[0].(Obj) }

// Event adds an event about an object, as its component reports it.
func (w *World) Event(kind, name, typ, reason, message, component string, count int, first, last time.Duration) {
	ns := w.Namespace
	if kind == "Node" {
		ns = "default"
	}
	w.seq++
	w.Add(Obj{"apiVersion": "v1", "kind": "Event",
		"metadata":       Obj{"name": fmt.Sprintf("%s.%x", name, 0x17e2b3c4d5e6f000+w.seq), "namespace": ns, "uid": w.uid(), "resourceVersion": strconv.Itoa(50000 + w.seq), "creationTimestamp": w.Ago(first)},
		"involvedObject": Obj{"kind": kind, "namespace": ns, "name": name, "apiVersion": ownerAPIVersion(kind), "uid": "uid-" + name},
		"reason":         reason, "message": message, "type": typ, "count": count,
		"source": Obj{"component": component}, "firstTimestamp": w.Ago(first), "lastTimestamp": w.Ago(last),
		"eventTime": nil, "reportingComponent": component, "reportingInstance": ""})
}

func (w *World) kubeSystem() {
	ns := w.Namespace
	w.Namespace = "kube-system"
	defer func() { w.Namespace = ns }()
	for _, comp := range []string{"kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager"} {
		p := w.Pod(PodSpec{Name: comp + "-cp-1", Namespace: "kube-system", Node: "cp-1", Image: "registry.k8s.io/" + comp + ":v1.30.4", Container: comp,
			Labels: map[string]string{"component": comp, "tier": "control-plane"}, Owner: [2]string{"Node", "cp-1"}, Started: 40 * 24 * time.Hour, IP: "172.18.0.2"})
		if comp == "etcd" {
			Container(p)["image"] = "registry.k8s.io/etcd:3.5.12-0"
		}
		w.Add(p)
	}
	nodes := append([]string{"cp-1"}, workers...)
	for _, ds := range []struct{ name, label, image string }{{"kube-proxy", "kube-proxy", "registry.k8s.io/kube-proxy:v1.30.4"}, {"calico-node", "calico-node", "docker.io/calico/node:v3.28.1"}} {
		w.Add(Obj{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": w.metaOf(ds.name, "kube-system", 40*24*time.Hour, map[string]string{"k8s-app": ds.label}),
			"spec": Obj{"selector": Obj{"matchLabels": map[string]string{"k8s-app": ds.label}},
				"template": Obj{"metadata": Obj{"labels": map[string]string{"k8s-app": ds.label}},
					"spec": Obj{"containers": []any{Obj{"name": ds.name, "image": ds.image}}, "tolerations": []any{Obj{"operator": "Exists"}}}}},
			"status": Obj{"currentNumberScheduled": len(nodes), "desiredNumberScheduled": len(nodes), "numberAvailable": len(nodes), "numberReady": len(nodes),
				"numberMisscheduled": 0, "updatedNumberScheduled": len(nodes), "observedGeneration": 1}})
		for i, n := range nodes {
			w.Add(w.Pod(PodSpec{Name: ds.name + "-" + []string{"b7x2f", "k9p4s", "m2w8d", "t5r6g"}[i], Namespace: "kube-system", Node: n, Image: ds.image, Container: ds.name,
				Labels: map[string]string{"k8s-app": ds.label, "controller-revision-hash": "6d4b9f8c7"}, Owner: [2]string{"DaemonSet", ds.name},
				Started: 40 * 24 * time.Hour, IP: fmt.Sprintf("172.18.0.%d", 2+i)}))
		}
	}
	w.Deploy(App{Name: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.11.1", Hash: "7db6d8ff4d", Replicas: 2, Port: 53}, 1, 40*24*time.Hour)
	for _, p := range w.All("Pod", "coredns-") {
		meta(p)["labels"].(map[string]string)["k8s-app"] = "kube-dns"
	}
}

// The storefront's apps.
var (
	Frontend = App{Name: "frontend", Image: "registry.example.com/shop/frontend:4.2.0", Hash: "6c9d7b5f8", Replicas: 2, Port: 8080,
		Env: map[string]string{"CHECKOUT_URL": "http://checkout:8080", "LOG_LEVEL": "info"}, Readiness: HTTPProbe("/ready", 8080)}
	Checkout = App{Name: "checkout", Image: "registry.example.com/shop/checkout:2.14.0", Hash: "7d9f8c6b5", Replicas: 2, Port: 8080,
		Env:      map[string]string{"CART_ADDR": "cart:9090", "DB_HOST": "postgres", "PAYMENT_API": "https://api.payments.example.net/v2"},
		Liveness: HTTPProbe("/healthz", 8080), Readiness: HTTPProbe("/ready", 8080)}
	Cart = App{Name: "cart", Image: "registry.example.com/shop/cart:1.9.3", Hash: "5b8c9d7f6", Replicas: 2, Port: 9090,
		Env: map[string]string{"REDIS_URL": "redis://cart-cache:6379/0"}, Readiness: HTTPProbe("/ready", 9090)}
	CartCache = App{Name: "cart-cache", Image: "docker.io/library/redis:7.2.5", Hash: "84f6c9b7d", Replicas: 1, Port: 6379}
)

func (w *World) shop() {
	for _, a := range []App{Frontend, Checkout, Cart, CartCache} {
		w.Deploy(a, 3, 9*24*time.Hour)
	}
	w.postgres()
	w.Add(Obj{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": w.metaOf("default", w.Namespace, 200*24*time.Hour, nil)})
	w.Add(Obj{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": w.metaOf("compute", w.Namespace, 200*24*time.Hour, nil),
		"spec":   Obj{"hard": Obj{"requests.cpu": "8", "requests.memory": "16Gi", "pods": "30"}},
		"status": Obj{"hard": Obj{"requests.cpu": "8", "requests.memory": "16Gi", "pods": "30"}, "used": Obj{"requests.cpu": "1750m", "requests.memory": "1792Mi", "pods": "7"}}})
	w.Event("Deployment", "frontend", "Normal", "ScalingReplicaSet", "Scaled up replica set frontend-6c9d7b5f8 to 2", "deployment-controller", 1, 9*24*time.Hour, 9*24*time.Hour)
	w.Event("Pod", "cart-5b8c9d7f6-x2k4q", "Normal", "Pulled", `Container image "registry.example.com/shop/cart:1.9.3" already present on machine`, "kubelet", 1, 40*time.Minute, 40*time.Minute)
}

// postgres is the storefront's database: a StatefulSet of one pod with its
// volume claim, and its Service.
func (w *World) postgres() {
	ns := w.Namespace
	labels := map[string]string{"app": "postgres", "app.kubernetes.io/name": "postgres"}
	w.Add(Obj{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": w.metaOf("postgres", ns, 200*24*time.Hour, labels),
		"spec": Obj{"replicas": 1, "serviceName": "postgres", "selector": Obj{"matchLabels": map[string]string{"app": "postgres"}},
			"template": Obj{"metadata": Obj{"labels": labels}, "spec": Obj{"containers": []any{Obj{"name": "postgres", "image": "docker.io/library/postgres:16.4"}}}}},
		"status": Obj{"replicas": 1, "readyReplicas": 1, "currentReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
			"currentRevision": "postgres-6b9f7c8d5", "updateRevision": "postgres-6b9f7c8d5", "observedGeneration": 2}})
	p := w.Pod(PodSpec{Name: "postgres-0", Namespace: ns, Node: "worker-3", Image: "docker.io/library/postgres:16.4", Container: "postgres",
		Labels: map[string]string{"app": "postgres", "app.kubernetes.io/name": "postgres", "statefulset.kubernetes.io/pod-name": "postgres-0"},
		Owner:  [2]string{"StatefulSet", "postgres"}, Ports: []int{5432}, Started: 30 * 24 * time.Hour, IP: "10.244.3.40"})
	p["spec"].(Obj)["volumes"] = []any{Obj{"name": "data", "persistentVolumeClaim": Obj{"claimName": "data-postgres-0"}}}
	w.Add(p)
	w.Add(Obj{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": w.metaOf("data-postgres-0", ns, 200*24*time.Hour, labels),
		"spec":   Obj{"accessModes": []any{"ReadWriteOnce"}, "resources": Obj{"requests": Obj{"storage": "20Gi"}}, "storageClassName": "standard", "volumeName": "pvc-3f6e2a1b", "volumeMode": "Filesystem"},
		"status": Obj{"phase": "Bound", "accessModes": []any{"ReadWriteOnce"}, "capacity": Obj{"storage": "20Gi"}}})
	w.Add(Obj{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": w.metaOf("pvc-3f6e2a1b", "", 200*24*time.Hour, nil),
		"spec": Obj{"capacity": Obj{"storage": "20Gi"}, "accessModes": []any{"ReadWriteOnce"}, "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "standard",
			"claimRef": Obj{"kind": "PersistentVolumeClaim", "namespace": ns, "name": "data-postgres-0"}, "hostPath": Obj{"path": "/var/local-path-provisioner/pvc-3f6e2a1b"}},
		"status": Obj{"phase": "Bound"}})
	w.Add(Obj{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": w.metaOf("standard", "", 200*24*time.Hour, nil),
		"provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"})
	w.Service("postgres", map[string]string{"app": "postgres"}, 5432, 5432)
}
