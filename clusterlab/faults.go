package clusterlab

import (
	"fmt"
	"time"
)

// Faults of the storefront World, each as the cluster's own objects show it
// (the messages are those of the Kubernetes components of v1.30 and
// containerd 1.7). Each leaves the rest of the world healthy.

// pods of an app's current ReplicaSet.
func (w *World) podsOf(a App) []Obj { return w.All("Pod", a.Name+"-"+a.Hash+"-") }

func crashLoop(p Obj, reason string, exit, restarts int, finished string) {
	st := Status(p)
	st["restartCount"] = restarts
	st["started"] = false
	st["state"] = Obj{"waiting": Obj{"reason": "CrashLoopBackOff",
		"message": fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(uid-%s)", st["name"], meta(p)["name"], meta(p)["namespace"], meta(p)["name"])}}
	st["lastState"] = Obj{"terminated": Obj{"exitCode": exit, "reason": reason, "startedAt": finished, "finishedAt": finished,
		"containerID": "containerd://" + "9c2e41d7b8a3"}}
	SetNotReady(p, finished)
}

// QuotaExceeded: checkout was scaled from 2 to 4 replicas, and the
// namespace's ResourceQuota "compute" refuses the two new pods.
func QuotaExceeded(w *World) {
	d := w.Find("Deployment", "checkout")
	d["spec"].(Obj)["replicas"] = 4
	st := d["status"].(Obj)
	st["replicas"], st["unavailableReplicas"] = 2, 2
	st["conditions"] = append(st["conditions"].([]any), Obj{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
		"message":        `pods "checkout-7d9f8c6b5-q8wzn" is forbidden: exceeded quota: compute, requested: requests.cpu=250m, used: requests.cpu=8, limited: requests.cpu=8`,
		"lastUpdateTime": w.Ago(9 * time.Minute), "lastTransitionTime": w.Ago(9 * time.Minute)})
	w.Find("ReplicaSet", "checkout-7d9f8c6b5")["spec"].(Obj)["replicas"] = 4
	q := w.Find("ResourceQuota", "compute")["status"].(Obj)["used"].(Obj)
	q["requests.cpu"] = "8"
	w.Event("ReplicaSet", "checkout-7d9f8c6b5", "Warning", "FailedCreate",
		`Error creating: pods "checkout-7d9f8c6b5-q8wzn" is forbidden: exceeded quota: compute, requested: requests.cpu=250m, used: requests.cpu=8, limited: requests.cpu=8`,
		"replicaset-controller", 14, 9*time.Minute, 40*time.Second)
	w.Event("Deployment", "checkout", "Normal", "ScalingReplicaSet", "Scaled up replica set checkout-7d9f8c6b5 to 4 from 2", "deployment-controller", 1, 9*time.Minute, 9*time.Minute)
}

// NodeCordoned: cart runs only on disktype=ssd nodes; worker-2, the only
// one, was drained and left cordoned, and cart's pods cannot come back.
func NodeCordoned(w *World) {
	n := w.Find("Node", "worker-2")
	meta(n)["labels"].(map[string]string)["disktype"] = "ssd"
	n["spec"].(Obj)["unschedulable"] = true
	n["spec"].(Obj)["taints"] = []any{Obj{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": w.Ago(22 * time.Minute)}}
	w.Event("Node", "worker-2", "Normal", "NodeNotSchedulable", "Node worker-2 status is now: NodeNotSchedulable", "kubelet", 1, 22*time.Minute, 22*time.Minute)
	for _, p := range w.podsOf(Cart) {
		p["spec"].(Obj)["nodeSelector"] = map[string]string{"disktype": "ssd"}
		delete(p["spec"].(Obj), "nodeName")
		p["status"] = Obj{"phase": "Pending", "qosClass": "Burstable", "conditions": []any{Obj{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
			"lastProbeTime": nil, "lastTransitionTime": w.Ago(21 * time.Minute),
			"message": "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."}}}
		w.Event("Pod", meta(p)["name"].(string), "Warning", "FailedScheduling",
			"0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
			"default-scheduler", 6, 21*time.Minute, 2*time.Minute)
	}
	d := w.Find("Deployment", "cart")["status"].(Obj)
	d["readyReplicas"], d["availableReplicas"], d["unavailableReplicas"] = 0, 0, 2
	w.RefreshEndpoints()
}

// ImageNotFound: checkout was rolled out to 2.15.1, a tag the registry
// does not have; the new pod cannot pull it while revision 3 keeps serving.
func ImageNotFound(w *World) {
	a := Checkout
	a.Hash, a.Image = "58f6d9c7b4", "registry.example.com/shop/checkout:2.15.1"
	w.Rollout(a, 4, 7*time.Minute, 1, func(p Obj) {
		st := Status(p)
		st["image"], st["imageID"], st["started"] = a.Image, "", false
		st["state"] = Obj{"waiting": Obj{"reason": "ImagePullBackOff", "message": `Back-off pulling image "` + a.Image + `"`}}
		SetNotReady(p, w.Ago(7*time.Minute))
		name := meta(p)["name"].(string)
		w.Event("Pod", name, "Warning", "Failed", `Failed to pull image "`+a.Image+`": rpc error: code = NotFound desc = failed to pull and unpack image "`+a.Image+
			`": failed to resolve reference "`+a.Image+`": `+a.Image+`: not found`, "kubelet", 6, 7*time.Minute, time.Minute)
		w.Event("Pod", name, "Warning", "Failed", "Error: ErrImagePull", "kubelet", 6, 7*time.Minute, time.Minute)
		w.Event("Pod", name, "Normal", "BackOff", `Back-off pulling image "`+a.Image+`"`, "kubelet", 24, 7*time.Minute, 20*time.Second)
	})
	w.Event("Deployment", "checkout", "Normal", "ScalingReplicaSet", "Scaled up replica set checkout-58f6d9c7b4 to 1", "deployment-controller", 1, 7*time.Minute, 7*time.Minute)
	w.RefreshEndpoints()
}

// SelectorMismatch: cart's Service was edited to select app=cart-api,
// which no pod carries; checkout's calls to cart find no endpoint.
func SelectorMismatch(w *World) {
	s := w.Find("Service", "cart")
	s["spec"].(Obj)["selector"] = map[string]string{"app": "cart-api"}
	meta(s)["resourceVersion"] = "48101"
	w.RefreshEndpoints()
}

// KubeletDown: worker-3's kubelet stopped 12 minutes ago; the node
// controller marked it Unknown and tainted it unreachable, while
// node-problem-detector on the node reports the kubelet unhealthy.
func KubeletDown(w *World) {
	n := w.Find("Node", "worker-3")
	since, hb := w.Ago(11*time.Minute), w.Ago(12*time.Minute)
	var cs []any
	for _, typ := range []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} {
		cs = append(cs, Obj{"type": typ, "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status.",
			"lastHeartbeatTime": hb, "lastTransitionTime": since})
	}
	// node-problem-detector's health checker, a daemon of its own, still
	// reports from the node: the machine is up, its kubelet is not.
	cs = append(cs, Obj{"type": "KubeletUnhealthy", "status": "True", "reason": "KubeletUnhealthy", "message": "kubelet on the node is not functioning properly",
		"lastHeartbeatTime": w.Ago(20 * time.Second), "lastTransitionTime": w.Ago(11 * time.Minute)})
	n["status"].(Obj)["conditions"] = cs
	n["spec"].(Obj)["taints"] = []any{Obj{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": since},
		Obj{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since}}
	w.Event("Node", "worker-3", "Normal", "NodeNotReady", "Node worker-3 status is now: NodeNotReady", "node-controller", 1, 11*time.Minute, 11*time.Minute)
	for _, p := range w.objects {
		if p["kind"] == "Pod" && p["spec"].(Obj)["nodeName"] == "worker-3" {
			SetNotReady(p, since)
			if meta(p)["namespace"] == w.Namespace {
				w.Event("Pod", meta(p)["name"].(string), "Warning", "NodeNotReady", "Node is not ready", "node-controller", 1, 11*time.Minute, 11*time.Minute)
			}
		}
	}
	w.RefreshEndpoints()
}

// LivenessMisconfigured: checkout's liveness probe asks port 8081, where
// nothing listens (the app serves 8080); the kubelet kills it again and
// again.
func LivenessMisconfigured(w *World) {
	for _, p := range w.podsOf(Checkout) {
		Container(p)["livenessProbe"] = HTTPProbe("/healthz", 8081)
		ip := p["status"].(Obj)["podIP"].(string)
		crashLoop(p, "Error", 137, 6, w.Ago(90*time.Second))
		name := meta(p)["name"].(string)
		w.Event("Pod", name, "Warning", "Unhealthy", fmt.Sprintf(`Liveness probe failed: Get "http://%s:8081/healthz": dial tcp %s:8081: connect: connection refused`, ip, ip),
			"kubelet", 18, 14*time.Minute, 50*time.Second)
		w.Event("Pod", name, "Normal", "Killing", "Container checkout failed liveness probe, will be restarted", "kubelet", 6, 14*time.Minute, 95*time.Second)
		w.Event("Pod", name, "Warning", "BackOff", "Back-off restarting failed container checkout in pod "+name+"_shop(uid-"+name+")", "kubelet", 21, 12*time.Minute, 30*time.Second)
	}
	w.Find("Deployment", "checkout")["spec"].(Obj)["template"].(Obj)["spec"].(Obj)["containers"].([]any)[0].(Obj)["livenessProbe"] = HTTPProbe("/healthz", 8081)
	d := w.Find("Deployment", "checkout")["status"].(Obj)
	d["readyReplicas"], d["availableReplicas"], d["unavailableReplicas"] = 0, 0, 2
	w.RefreshEndpoints()
}

// NetworkLatency: traffic to checkout's pods is slowed (netem delay on
// their interfaces): the kubelet's probes on the right port and path time
// out, the pods drop out of their Service and back.
func NetworkLatency(w *World) {
	for i, p := range w.podsOf(Checkout) {
		ip := p["status"].(Obj)["podIP"].(string)
		name := meta(p)["name"].(string)
		if i == 0 {
			SetNotReady(p, w.Ago(40*time.Second))
		}
		w.Event("Pod", name, "Warning", "Unhealthy", fmt.Sprintf(`Readiness probe failed: Get "http://%s:8080/ready": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, ip),
			"kubelet", 31, 16*time.Minute, 20*time.Second)
		w.Event("Pod", name, "Warning", "Unhealthy", fmt.Sprintf(`Liveness probe failed: Get "http://%s:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, ip),
			"kubelet", 7, 15*time.Minute, 2*time.Minute)
	}
	w.RefreshEndpoints()
}

// OOMWithLaterRollout: cart's pods have been OOM-killed for 25 minutes; a
// rollout of cart 4 minutes ago changed nothing — its pod is killed too.
func OOMWithLaterRollout(w *World) {
	for _, p := range w.podsOf(Cart) {
		crashLoop(p, "OOMKilled", 137, 7, w.Ago(2*time.Minute))
		name := meta(p)["name"].(string)
		w.Event("Pod", name, "Warning", "BackOff", "Back-off restarting failed container cart in pod "+name+"_shop(uid-"+name+")", "kubelet", 30, 24*time.Minute, 30*time.Second)
	}
	a := Cart
	a.Hash, a.Image = "6f9b8d4c7", "registry.example.com/shop/cart:1.9.4"
	w.Rollout(a, 4, 4*time.Minute, 1, func(p Obj) {
		crashLoop(p, "OOMKilled", 137, 2, w.Ago(time.Minute))
	})
	w.Event("Deployment", "cart", "Normal", "ScalingReplicaSet", "Scaled up replica set cart-6f9b8d4c7 to 1", "deployment-controller", 1, 4*time.Minute, 4*time.Minute)
	d := w.Find("Deployment", "cart")["status"].(Obj)
	d["readyReplicas"], d["availableReplicas"], d["unavailableReplicas"] = 0, 0, 3
	w.RefreshEndpoints()
}

// NodeGone: worker-3 went away (powered off) 12 minutes ago: every
// condition stopped at once and the node controller marked it Unknown.
func NodeGone(w *World) {
	KubeletDown(w)
	n := w.Find("Node", "worker-3")
	conds := n["status"].(Obj)["conditions"].([]any)
	n["status"].(Obj)["conditions"] = conds[:len(conds)-1]
}

// RolloutCrashLoop: checkout's revision 6 (2.15.0) rolled out 6 minutes ago;
// its two pods exit with status 2 right after they start and are in
// CrashLoopBackOff, while revision 5's pods keep serving.
func RolloutCrashLoop(w *World) {
	a := Checkout
	a.Hash, a.Image = "5f4c7b9d8", "registry.example.com/shop/checkout:2.15.0"
	w.Rollout(a, 6, 6*time.Minute, 2, func(p Obj) {
		crashLoop(p, "Error", 2, 5, w.Ago(40*time.Second))
		name := meta(p)["name"].(string)
		w.Event("Pod", name, "Warning", "BackOff", "Back-off restarting failed container checkout in pod "+name+"_shop(uid-"+name+")", "kubelet", 18, 5*time.Minute, 20*time.Second)
	})
	w.Event("Deployment", "checkout", "Normal", "ScalingReplicaSet", "Scaled up replica set checkout-5f4c7b9d8 to 2", "deployment-controller", 1, 6*time.Minute, 6*time.Minute)
	d := w.Find("Deployment", "checkout")["status"].(Obj)
	d["updatedReplicas"], d["unavailableReplicas"] = 2, 2
	w.RefreshEndpoints()
}
