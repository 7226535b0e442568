package analyzer

import "slices"

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
