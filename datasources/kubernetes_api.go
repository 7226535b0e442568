package datasources

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The Kubernetes objects the kubernetes source reads, in the fields it reads,
// as the API (v1.27 and later) returns them.

// kTime is a metav1.Time or MicroTime; null and "" are the zero time.
type kTime struct{ time.Time }

func (t *kTime) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil // a malformed time reads as unknown, never as a failed list
	}
	t.Time = v.UTC()
	return nil
}

// intOrString is an IntOrString port: a number or a port name.
type intOrString string

func (p *intOrString) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*p = intOrString(strconv.Itoa(n))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*p = intOrString(s)
	return nil
}

type ownerRef struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Controller *bool  `json:"controller"`
}

// objectMeta is the metadata every Kubernetes object carries.
type objectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	CreationTimestamp kTime             `json:"creationTimestamp"`
	DeletionTimestamp *kTime            `json:"deletionTimestamp"`
	OwnerReferences   []ownerRef        `json:"ownerReferences"`
}

func (m objectMeta) owner(kind string) string {
	for _, o := range m.OwnerReferences {
		if o.Kind == kind {
			return o.Name
		}
	}
	return ""
}

type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime kTime  `json:"lastTransitionTime"`
	LastHeartbeatTime  kTime  `json:"lastHeartbeatTime"`
}

func conditionOf(cs []condition, typ string) (condition, bool) {
	for _, c := range cs {
		if c.Type == typ {
			return c, true
		}
	}
	return condition{}, false
}

type containerPort struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

func (p containerPort) protocol() string { return protocolOr(p.Protocol) }

// protocolOr is a port's protocol; the API's default is TCP.
func protocolOr(p string) string {
	if p == "" {
		return "TCP"
	}
	return p
}

type probe struct {
	HTTPGet *struct {
		Path   string      `json:"path"`
		Port   intOrString `json:"port"`
		Scheme string      `json:"scheme"`
	} `json:"httpGet"`
	TCPSocket *struct {
		Port intOrString `json:"port"`
	} `json:"tcpSocket"`
	GRPC *struct {
		Port int `json:"port"`
	} `json:"grpc"`
	Exec *struct {
		Command []string `json:"command"`
	} `json:"exec"`
	InitialDelaySeconds int `json:"initialDelaySeconds"`
	TimeoutSeconds      int `json:"timeoutSeconds"`
	PeriodSeconds       int `json:"periodSeconds"`
	FailureThreshold    int `json:"failureThreshold"`
}

// target renders where the probe looks: "http :8081/healthz", "tcp :5432",
// "grpc :9090", "exec cat /tmp/healthy".
func (p *probe) target() string {
	switch {
	case p == nil:
		return ""
	case p.HTTPGet != nil:
		scheme := "http"
		if strings.EqualFold(p.HTTPGet.Scheme, "HTTPS") {
			scheme = "https"
		}
		return scheme + " :" + string(p.HTTPGet.Port) + p.HTTPGet.Path
	case p.TCPSocket != nil:
		return "tcp :" + string(p.TCPSocket.Port)
	case p.GRPC != nil:
		return "grpc :" + strconv.Itoa(p.GRPC.Port)
	case p.Exec != nil:
		return "exec " + strings.Join(p.Exec.Command, " ")
	}
	return ""
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type container struct {
	Name           string          `json:"name"`
	Image          string          `json:"image"`
	Ports          []containerPort `json:"ports"`
	Env            []envVar        `json:"env"`
	LivenessProbe  *probe          `json:"livenessProbe"`
	ReadinessProbe *probe          `json:"readinessProbe"`
	StartupProbe   *probe          `json:"startupProbe"`
}

type podSpec struct {
	NodeName           string            `json:"nodeName"`
	ServiceAccountName string            `json:"serviceAccountName"`
	NodeSelector       map[string]string `json:"nodeSelector"`
	Affinity           *struct {
		NodeAffinity    json.RawMessage `json:"nodeAffinity"`
		PodAffinity     json.RawMessage `json:"podAffinity"`
		PodAntiAffinity json.RawMessage `json:"podAntiAffinity"`
	} `json:"affinity"`
	Containers     []container `json:"containers"`
	InitContainers []container `json:"initContainers"`
	Tolerations    []struct {
		Key      string `json:"key"`
		Operator string `json:"operator"`
		Effect   string `json:"effect"`
	} `json:"tolerations"`
	ImagePullSecrets []struct {
		Name string `json:"name"`
	} `json:"imagePullSecrets"`
	Volumes []struct {
		Name                  string `json:"name"`
		PersistentVolumeClaim *struct {
			ClaimName string `json:"claimName"`
		} `json:"persistentVolumeClaim"`
	} `json:"volumes"`
}

type stateWaiting struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type stateTerminated struct {
	ExitCode   int    `json:"exitCode"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	StartedAt  kTime  `json:"startedAt"`
	FinishedAt kTime  `json:"finishedAt"`
}

type containerState struct {
	Waiting *stateWaiting `json:"waiting"`
	Running *struct {
		StartedAt kTime `json:"startedAt"`
	} `json:"running"`
	Terminated *stateTerminated `json:"terminated"`
}

type containerStatus struct {
	Name         string         `json:"name"`
	Ready        bool           `json:"ready"`
	RestartCount int            `json:"restartCount"`
	Image        string         `json:"image"`
	State        containerState `json:"state"`
	LastState    containerState `json:"lastState"`
}

type pod struct {
	Metadata objectMeta `json:"metadata"`
	Spec     podSpec    `json:"spec"`
	Status   struct {
		Phase                 string            `json:"phase"`
		Reason                string            `json:"reason"`
		Message               string            `json:"message"`
		Conditions            []condition       `json:"conditions"`
		ContainerStatuses     []containerStatus `json:"containerStatuses"`
		InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
		StartTime             kTime             `json:"startTime"`
	} `json:"status"`
}

func (p pod) ready() bool {
	c, _ := conditionOf(p.Status.Conditions, "Ready")
	return c.Status == "True"
}

// container is the pod's declared container (or init container) of that name.
func (p pod) container(name string) (container, bool) {
	for _, list := range [][]container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range list {
			if c.Name == name {
				return c, true
			}
		}
	}
	return container{}, false
}

type event struct {
	Metadata       objectMeta `json:"metadata"`
	InvolvedObject struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"involvedObject"`
	Reason         string `json:"reason"`
	Message        string `json:"message"`
	Type           string `json:"type"`
	Count          int    `json:"count"`
	FirstTimestamp kTime  `json:"firstTimestamp"`
	LastTimestamp  kTime  `json:"lastTimestamp"`
	EventTime      kTime  `json:"eventTime"`
	Series         *struct {
		Count            int   `json:"count"`
		LastObservedTime kTime `json:"lastObservedTime"`
	} `json:"series"`
	Source struct {
		Component string `json:"component"`
		Host      string `json:"host"`
	} `json:"source"`
}

// last is when the event was last seen, from whichever field the emitter set.
func (e event) last() time.Time {
	for _, t := range []kTime{e.LastTimestamp, seriesLast(e), e.EventTime, e.FirstTimestamp, e.Metadata.CreationTimestamp} {
		if !t.IsZero() {
			return t.Time
		}
	}
	return time.Time{}
}

func (e event) first() time.Time {
	for _, t := range []kTime{e.FirstTimestamp, e.EventTime, e.Metadata.CreationTimestamp} {
		if !t.IsZero() {
			return t.Time
		}
	}
	return e.last()
}

func (e event) count() int {
	if e.Series != nil && e.Series.Count > e.Count {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

func seriesLast(e event) kTime {
	if e.Series == nil {
		return kTime{}
	}
	return e.Series.LastObservedTime
}

type workload struct {
	Kind     string
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Replicas *int `json:"replicas"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Template struct {
			Metadata objectMeta `json:"metadata"`
			Spec     podSpec    `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas               int         `json:"replicas"`
		ReadyReplicas          int         `json:"readyReplicas"`
		AvailableReplicas      int         `json:"availableReplicas"`
		UpdatedReplicas        int         `json:"updatedReplicas"`
		UnavailableReplicas    int         `json:"unavailableReplicas"`
		Conditions             []condition `json:"conditions"`
		DesiredNumberScheduled int         `json:"desiredNumberScheduled"`
		NumberReady            int         `json:"numberReady"`
		NumberUnavailable      int         `json:"numberUnavailable"`
		CurrentRevision        string      `json:"currentRevision"`
		UpdateRevision         string      `json:"updateRevision"`
	} `json:"status"`
}

// desired is how many pods the workload asks for.
func (w workload) desired() int {
	if w.Kind == "DaemonSet" {
		return w.Status.DesiredNumberScheduled
	}
	if w.Spec.Replicas == nil {
		return 1
	}
	return *w.Spec.Replicas
}

func (w workload) ready() int {
	if w.Kind == "DaemonSet" {
		return w.Status.NumberReady
	}
	return w.Status.ReadyReplicas
}

type replicaSet struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Replicas *int `json:"replicas"`
		Template struct {
			Spec podSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas      int `json:"replicas"`
		ReadyReplicas int `json:"readyReplicas"`
	} `json:"status"`
}

// controllerRevision is a StatefulSet's (or DaemonSet's) snapshot of its pod
// template at one revision; data holds the template as the controller
// patches it in.
type controllerRevision struct {
	Metadata objectMeta `json:"metadata"`
	Revision int64      `json:"revision"`
	Data     struct {
		Spec struct {
			Template struct {
				Spec podSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	} `json:"data"`
}

type servicePort struct {
	Name       string      `json:"name"`
	Port       int         `json:"port"`
	TargetPort intOrString `json:"targetPort"`
	Protocol   string      `json:"protocol"`
}

func (p servicePort) protocol() string { return protocolOr(p.Protocol) }

// target is the port the Service forwards to: its targetPort, else its port.
func (p servicePort) target() string {
	if p.TargetPort == "" || p.TargetPort == "0" {
		return strconv.Itoa(p.Port)
	}
	return string(p.TargetPort)
}

type service struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Type         string            `json:"type"`
		Selector     map[string]string `json:"selector"`
		Ports        []servicePort     `json:"ports"`
		ClusterIP    string            `json:"clusterIP"`
		ExternalName string            `json:"externalName"`
	} `json:"spec"`
}

type endpoints struct {
	Metadata objectMeta `json:"metadata"`
	Subsets  []struct {
		Addresses         []json.RawMessage `json:"addresses"`
		NotReadyAddresses []json.RawMessage `json:"notReadyAddresses"`
	} `json:"subsets"`
}

type endpointSlice struct {
	Metadata  objectMeta `json:"metadata"`
	Endpoints []struct {
		Conditions struct {
			Ready *bool `json:"ready"`
		} `json:"conditions"`
	} `json:"endpoints"`
}

type node struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Unschedulable bool `json:"unschedulable"`
		Taints        []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Effect string `json:"effect"`
		} `json:"taints"`
	} `json:"spec"`
	Status struct {
		Conditions  []condition       `json:"conditions"`
		Allocatable map[string]string `json:"allocatable"`
	} `json:"status"`
}

type resourceQuota struct {
	Metadata objectMeta `json:"metadata"`
	Status   struct {
		Hard map[string]string `json:"hard"`
		Used map[string]string `json:"used"`
	} `json:"status"`
}

type volumeClaim struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		StorageClassName *string `json:"storageClassName"`
		VolumeName       string  `json:"volumeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

type namedObject struct {
	Metadata objectMeta `json:"metadata"`
}

// list is a Kubernetes list of T.
type list[T any] struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []T `json:"items"`
}
