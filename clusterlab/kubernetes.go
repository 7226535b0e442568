// Package clusterlab serves the HTTP APIs of the log stores and the cluster
// Causeway's agents query and that cannot run in a test here: Kubernetes
// (core/v1 and apps/v1, as of v1.30), Loki (/loki/api/v1, as of 3.x) and
// Elasticsearch (the _search API, as of 8.x; OpenSearch 2.x answers the
// same). Each answers from the objects or lines a test gives it, evaluating
// the request it gets rather than replaying a canned answer, with the
// response and error bodies those systems send.
package clusterlab

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Pod is one single-container pod of a ReplicaSet.
type Pod struct {
	Name, ReplicaSet, Container, Phase string
	Ready                              bool
	Restarts                           int
	// Waiting is the container's waiting reason (CrashLoopBackOff), if any.
	Waiting string
	// LastReason, LastExit and LastFinished describe the last termination.
	LastReason   string
	LastExit     int
	LastFinished time.Time
	Started      time.Time
}

// ReplicaSet is one revision of a Deployment.
type ReplicaSet struct {
	Name, Deployment, Image string
	Revision                int
	Created                 time.Time
	Replicas, Ready         int
}

// Event is a core/v1 Event about an object of the namespace.
type Event struct {
	Kind, Name, Type, Reason, Message string
	Count                             int
	First, Last                       time.Time
}

// Cluster is what the fake API server holds: one namespace.
type Cluster struct {
	Namespace   string
	Token       string
	Deployments []string
	ReplicaSets []ReplicaSet
	Pods        []Pod
	Events      []Event
	// Forbidden lists resources the token may not list (403).
	Forbidden map[string]bool
}

// KubeServer is a running Kubernetes API replay.
type KubeServer struct {
	URL string
	// CABundle is the PEM of the CA that signed the server's certificate.
	CABundle string
	// API is the replay answering; its counters say what was asked
	// (API.Writes: requests that were not a GET, none of which may arrive).
	API   *KubeAPI
	close func()
}

// status writes a meta/v1 Status object, the body of every API error.
func status(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": message, "reason": reason, "code": code})
}

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// Kubernetes starts an API server over TLS holding c's objects; the test's
// cleanup stops it.
func Kubernetes(t testing.TB, c Cluster) *KubeServer {
	t.Helper()
	ks := StartKube(t, c.Token, c.Objects())
	for r := range c.Forbidden {
		ks.API.Forbid(r)
	}
	return ks
}

// StartKube starts the replay of raw objects behind token over TLS; the
// test's cleanup stops it.
func StartKube(t testing.TB, token string, objects []json.RawMessage) *KubeServer {
	t.Helper()
	api, err := NewKubeAPI(token, objects, 0)
	if err != nil {
		t.Fatal(err)
	}
	ks := ServeKube(api)
	t.Cleanup(ks.Close)
	return ks
}

// Objects renders the cluster as the API's objects, each with its kind.
func (c Cluster) Objects() []json.RawMessage {
	var out []json.RawMessage
	add := func(apiVersion, kind string, items []any) {
		for _, it := range items {
			m := it.(map[string]any)
			m["apiVersion"], m["kind"] = apiVersion, kind
			raw, _ := json.Marshal(m)
			out = append(out, raw)
		}
	}
	add("v1", "Pod", c.items("pods"))
	add("v1", "Event", c.items("events"))
	add("apps/v1", "Deployment", c.items("deployments"))
	add("apps/v1", "ReplicaSet", c.items("replicasets"))
	return out
}

func (c Cluster) items(resource string) []any {
	var out []any
	switch resource {
	case "pods":
		for _, p := range c.Pods {
			state := map[string]any{"running": map[string]any{"startedAt": ts(p.Started)}}
			if p.Waiting != "" {
				state = map[string]any{"waiting": map[string]any{"reason": p.Waiting, "message": "back-off 5m0s restarting failed container=" + p.Container + " pod=" + p.Name}}
			}
			last := map[string]any{}
			if p.LastReason != "" {
				last = map[string]any{"terminated": map[string]any{"exitCode": p.LastExit, "reason": p.LastReason,
					"startedAt": ts(p.LastFinished.Add(-time.Minute)), "finishedAt": ts(p.LastFinished), "containerID": "containerd://" + p.Name}}
			}
			out = append(out, map[string]any{
				"metadata": map[string]any{"name": p.Name, "namespace": c.Namespace, "uid": "uid-" + p.Name,
					"labels":            map[string]string{"app.kubernetes.io/name": p.Container, "pod-template-hash": p.ReplicaSet[len(p.ReplicaSet)-min(len(p.ReplicaSet), 9):]},
					"creationTimestamp": ts(p.Started.Add(-time.Minute)),
					"ownerReferences":   []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": p.ReplicaSet, "controller": true, "uid": "uid-" + p.ReplicaSet}}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": p.Container, "image": c.imageOf(p.ReplicaSet)}}},
				"status": map[string]any{"phase": p.Phase, "startTime": ts(p.Started),
					"containerStatuses": []any{map[string]any{"name": p.Container, "ready": p.Ready, "restartCount": p.Restarts, "started": p.Ready,
						"image": c.imageOf(p.ReplicaSet), "state": state, "lastState": last}}},
			})
		}
	case "events":
		for i, e := range c.Events {
			out = append(out, map[string]any{
				"metadata":       map[string]any{"name": e.Name + "." + strconv.Itoa(1000+i), "namespace": c.Namespace, "creationTimestamp": ts(e.First)},
				"involvedObject": map[string]any{"kind": e.Kind, "namespace": c.Namespace, "name": e.Name, "apiVersion": "v1"},
				"reason":         e.Reason, "message": e.Message, "type": e.Type, "count": e.Count,
				"source":         map[string]any{"component": "kubelet"},
				"firstTimestamp": ts(e.First), "lastTimestamp": ts(e.Last), "eventTime": nil,
			})
		}
	case "deployments":
		for _, d := range c.Deployments {
			out = append(out, map[string]any{
				"metadata": map[string]any{"name": d, "namespace": c.Namespace, "labels": map[string]string{"app.kubernetes.io/name": d}},
				"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]string{"app.kubernetes.io/name": d}}},
			})
		}
	case "replicasets":
		for _, s := range c.ReplicaSets {
			out = append(out, map[string]any{
				"metadata": map[string]any{"name": s.Name, "namespace": c.Namespace, "creationTimestamp": ts(s.Created),
					"annotations":     map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(s.Revision), "deployment.kubernetes.io/desired-replicas": strconv.Itoa(s.Replicas)},
					"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": s.Deployment, "controller": true}}},
				"spec":   map[string]any{"replicas": s.Replicas, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": s.Deployment, "image": s.Image}}}}},
				"status": map[string]any{"replicas": s.Replicas, "readyReplicas": s.Ready, "availableReplicas": s.Ready},
			})
		}
	}
	return out
}

func (c Cluster) imageOf(rs string) string {
	for _, s := range c.ReplicaSets {
		if s.Name == rs {
			return s.Image
		}
	}
	return ""
}
