package analyzer

import (
	"net"
	"regexp"
	"slices"
	"strings"
)

// Culprit is the one object whose fault started the chain, named as the
// tenant's systems name it: the object an SRE changes to end the incident.
type Culprit struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Kinds of Culprit.
const (
	KindService               = "service"
	KindDeployment            = "deployment"
	KindStatefulSet           = "statefulset"
	KindDaemonSet             = "daemonset"
	KindPod                   = "pod"
	KindNode                  = "node"
	KindPersistentVolumeClaim = "persistentvolumeclaim"
	KindResourceQuota         = "resourcequota"
	KindServiceAccount        = "serviceaccount"
	KindDatabase              = "database"
	KindHost                  = "host"
	KindEndpoint              = "endpoint"
	KindChange                = "change"
	KindDependency            = "dependency"
)

// CulpritKinds lists every kind a culprit may have.
var CulpritKinds = []string{KindService, KindDeployment, KindStatefulSet, KindDaemonSet, KindPod, KindNode,
	KindPersistentVolumeClaim, KindResourceQuota, KindServiceAccount, KindDatabase, KindHost, KindEndpoint,
	KindChange, KindDependency}

// String renders the culprit the way the dashboard leads with it:
// "deployment shop/checkout".
func (c Culprit) String() string {
	name := c.Name
	if c.Namespace != "" {
		name = c.Namespace + "/" + name
	}
	return c.Kind + " " + name
}

// MechanismOther is the mechanism of an answer whose category has no list of
// mechanisms yet, or whose mechanism is none of its list.
const MechanismOther = "other"

// Mechanisms lists, per category, how that kind of fault comes about; an
// answer names one of its category's, or MechanismOther.
var Mechanisms = map[string][]string{
	CategorySchedulingFailure: {"insufficient_cpu", "insufficient_memory", "node_selector_mismatch", "node_affinity_mismatch",
		"taint_not_tolerated", "pod_anti_affinity", "node_cordoned", "volume_binding"},
	CategoryAdmissionRejected:  {"quota_exceeded", "service_account_missing", "webhook_denied", "policy_denied"},
	CategoryImagePullFailure:   {"image_not_found", "pull_secret_missing", "registry_unreachable"},
	CategoryProbeFailure:       {"liveness_misconfigured", "readiness_misconfigured"},
	CategoryServiceMisrouting:  {"selector_mismatch", "port_mismatch", "protocol_mismatch", "wrong_address"},
	CategoryNodeFailure:        {"node_not_ready", "kubelet_down", "container_runtime_down", "kube_proxy_down", "control_plane_down"},
	CategoryNetworkDegradation: {"added_latency", "packet_loss"},
	CategoryMemoryExhaustion:   {"oom_killed", "memory_leak"},
	CategoryCPUSaturation:      {"cpu_throttled", "cpu_overload"},
}

// ValidMechanism reports whether m is a mechanism of category (or other).
func ValidMechanism(category, m string) bool {
	return m == MechanismOther || slices.Contains(Mechanisms[category], m)
}

// ValidCulpritKind reports whether k is one of CulpritKinds.
func ValidCulpritKind(k string) bool { return slices.Contains(CulpritKinds, k) }

// The names the controllers give pods: a Deployment's
// (<deployment>-<template hash>-<suffix>) and a StatefulSet's
// (<statefulset>-<ordinal>).
var (
	deploymentPodRe  = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{5,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	statefulSetPodRe = regexp.MustCompile(`^(.+)-\d+$`)
)

// PodWorkload names the workload a pod most likely belongs to, by the names
// its controller gives pods; a pod named otherwise is its own culprit.
func PodWorkload(pod, namespace string) Culprit {
	if m := deploymentPodRe.FindStringSubmatch(pod); m != nil {
		return Culprit{Kind: KindDeployment, Name: m[1], Namespace: namespace}
	}
	if m := statefulSetPodRe.FindStringSubmatch(pod); m != nil {
		return Culprit{Kind: KindStatefulSet, Name: m[1], Namespace: namespace}
	}
	return Culprit{Kind: KindPod, Name: pod, Namespace: namespace}
}

// readingCulprit names the object a measured reading is about, by the
// labels its exporter gives the series: a container's pod (its workload),
// a node_exporter instance (the host), a volume claim, a probed endpoint,
// a database server, a consumer group. Nil when the labels name none.
func readingCulprit(r *Reading) *Culprit {
	l := r.Labels
	hostOf := func(instance string) string {
		if h, _, err := net.SplitHostPort(instance); err == nil {
			return h
		}
		return instance
	}
	switch {
	case l["dimension_DBInstanceIdentifier"] != "":
		return &Culprit{Kind: KindDatabase, Name: l["dimension_DBInstanceIdentifier"]}
	case l["workload"] != "":
		c := workloadCulprit(l["workload"], l["namespace"], l["pod"])
		return &c
	case l["persistentvolumeclaim"] != "":
		return &Culprit{Kind: KindPersistentVolumeClaim, Name: l["persistentvolumeclaim"], Namespace: l["namespace"]}
	case l["pod"] != "":
		c := PodWorkload(l["pod"], l["namespace"])
		return &c
	case l["consumergroup"] != "":
		return &Culprit{Kind: KindService, Name: l["consumergroup"]}
	}
	switch r.Signal {
	case SignalDBConnections, SignalRoleConnections, SignalLockWait, SignalLockWaits, SignalSlowStatement, SignalStatementMeanTime, SignalCacheUp, SignalCacheEvictions, SignalCacheHitRatio:
		if name := firstOr(l["server"], firstOr(l["instance"], l["dimension_DBInstanceIdentifier"])); name != "" {
			return &Culprit{Kind: KindDatabase, Name: hostOf(name)}
		}
		if l["database"] != "" {
			return &Culprit{Kind: KindDatabase, Name: l["database"]}
		}
	case SignalProbeSuccess, SignalProbeResolved, SignalCertExpiry, SignalDNSLookup, SignalTCPConnect, SignalTLSHandshake:
		if name := firstOr(l["instance"], firstOr(l["target"], l["host"])); name != "" {
			return &Culprit{Kind: KindEndpoint, Name: name}
		}
	case SignalFilesystemFree, SignalInodesFree, SignalMemoryUsage, SignalCPUUsage:
		if l["instance"] != "" {
			return &Culprit{Kind: KindHost, Name: hostOf(l["instance"])}
		}
	}
	return nil
}

// fallbackCulprit names the culprit of an answer whose findings blame no
// object: the alert's service, else the object its labels name.
func fallbackCulprit(in Input, category string) *Culprit {
	if in.Service != "" {
		return &Culprit{Kind: KindService, Name: in.Service, Namespace: in.Tags["namespace"]}
	}
	for _, k := range []struct{ tag, kind string }{{"service", KindService}, {"app", KindService}, {"deployment", KindDeployment},
		{"pod", KindPod}, {"instance", KindHost}, {"host", KindHost}, {"job", KindService}} {
		if v := in.Tags[k.tag]; v != "" {
			ns := ""
			if k.kind == KindDeployment || k.kind == KindPod {
				ns = in.Tags["namespace"]
			}
			return &Culprit{Kind: k.kind, Name: v, Namespace: ns}
		}
	}
	if ns := in.Tags["namespace"]; ns != "" {
		return &Culprit{Kind: KindService, Name: ns}
	}
	return &Culprit{Kind: KindService, Name: firstOr(strings.TrimSpace(in.Title), category)}
}

// culpritNamed reports whether the input names the culprit: an object the
// answer blames must be one the evidence shows, never an invented one.
func culpritNamed(in Input, c *Culprit) bool {
	if c == nil {
		return true
	}
	if !ValidCulpritKind(c.Kind) || strings.TrimSpace(c.Name) == "" {
		return false
	}
	if c.Kind == KindChange {
		for _, ch := range in.Changes {
			if ch.ID == c.Name {
				return true
			}
		}
		return false
	}
	if in.Service == c.Name {
		return true
	}
	for _, v := range in.Tags {
		if v == c.Name {
			return true
		}
	}
	return holds(in, squash(c.Name))
}
