package datasources

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/clip"
)

// TypeKubernetes is a Kubernetes API server.
const TypeKubernetes = "kubernetes"

// Kubernetes limits: one list call reads at most k8sListLimit objects, and
// an events answer keeps at most k8sEventLines lines.
const (
	k8sListLimit  = 500
	k8sEventLines = 40
	k8sMaxCABytes = 64 << 10
)

// namespaceRe is a valid namespace name (an RFC 1123 label).
var namespaceRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// k8sServiceLabels are the labels that name a workload's service, in the
// order Kubernetes' recommended labels, Helm charts and older manifests use.
var k8sServiceLabels = []string{"app.kubernetes.io/name", "app", "service", "k8s-app", "app.kubernetes.io/instance"}

func init() {
	register(kind{
		name:        TypeKubernetes,
		urlRequired: true,
		prepare: func(c *Connector, s *Spec) error {
			if err := c.checkHTTPURL(context.Background(), s.URL); err != nil {
				return err
			}
			if err := onlySettings(s.Settings, "namespace", "caBundle"); err != nil {
				return err
			}
			if v, ok := s.Settings["namespace"]; ok {
				ns, isString := v.(string)
				if !isString || !namespaceRe.MatchString(ns) {
					return fieldErr("settings.namespace", "must be a Kubernetes namespace name")
				}
			}
			if v, ok := s.Settings["caBundle"]; ok {
				pem, isString := v.(string)
				if !isString || len(pem) > k8sMaxCABytes || !x509.NewCertPool().AppendCertsFromPEM([]byte(pem)) {
					return fieldErr("settings.caBundle", "must be PEM-encoded CA certificates")
				}
			}
			s.URL = strings.TrimRight(s.URL, "/")
			return nil
		},
		plan: planKubernetes,
		open: func(c *Connector, cfg Config) (Client, error) {
			hc := c.http
			if pem, _ := cfg.Settings["caBundle"].(string); pem != "" {
				roots := x509.NewCertPool()
				if !roots.AppendCertsFromPEM([]byte(pem)) {
					return nil, fmt.Errorf("%w: settings.caBundle holds no certificate", ErrBadQuery)
				}
				hc = c.clientWithRoots(roots)
			}
			return &kubernetes{api: apiCall{client: hc, auth: cfg.Auth, explain: explainK8s}, base: strings.TrimRight(cfg.URL, "/"),
				namespace: setting(cfg.Settings, "namespace", "default"), maxSeries: c.opts.MaxSeries}, nil
		},
	})
}

// planKubernetes lists the service's pods, events and rollouts in the
// namespace the source is set to, else the one the alert names, else
// "default". The service travels as the query's target: the API has no
// selector for "any of these labels", so the client picks the service's
// objects out of the namespace's.
func planKubernetes(s Source, sc Scope, roles []string) ([]Query, []string) {
	if sc.Service == "" {
		return nil, []string{fmt.Sprintf("kubernetes source %q not queried: the alert names no service to scope its queries to", s.Name)}
	}
	ns := setting(s.Settings, "namespace", sc.Labels["namespace"])
	if ns == "" {
		ns = "default"
	}
	if !namespaceRe.MatchString(ns) {
		return nil, []string{fmt.Sprintf("kubernetes source %q not queried: the alert's namespace %q is not a namespace name", s.Name, clip.To(ns, 80))}
	}
	var qs []Query
	for _, e := range entriesFor(TypeKubernetes, roles) {
		var paths []string
		for _, p := range strings.Fields(e.Query) {
			paths = append(paths, "GET "+strings.ReplaceAll(p, "{namespace}", ns))
		}
		qs = append(qs, Query{Key: queryKey(s.ID, e.ID, sc.Service), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
			Text: strings.Join(paths, ", ") + " (objects of " + strconv.Quote(sc.Service) + ")", Roles: e.roles, Start: sc.Start, End: sc.End, Target: sc.Service})
	}
	return qs, nil
}

// kubernetes reads the Kubernetes API with plain list calls (GET only).
type kubernetes struct {
	api       apiCall
	base      string
	namespace string
	maxSeries int
}

// Test reads the server's version, then lists one pod of the source's
// namespace, which proves the credential may read what the queries read.
func (k *kubernetes) Test(ctx context.Context) (string, error) {
	raw, err := k.api.do(ctx, http.MethodGet, k.base+"/version", "", nil)
	if err != nil {
		return "", err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.GitVersion == "" {
		return "", fmt.Errorf("the answer is not a Kubernetes /version")
	}
	if _, err := k.api.do(ctx, http.MethodGet, k.base+"/api/v1/namespaces/"+k.namespace+"/pods?limit=1", "", nil); err != nil {
		return "", err
	}
	return "Kubernetes " + v.GitVersion + " answered; pods of namespace " + k.namespace + " are readable", nil
}

var k8sPathRe = regexp.MustCompile(`GET (/(?:api/v1|apis/apps/v1)/namespaces/[a-z0-9-]+/(?:pods|events|deployments|replicasets))\b`)

// Run runs one planned list (or two, for rollouts).
func (k *kubernetes) Run(ctx context.Context, q Query) (Result, error) {
	e, ok := entry(TypeKubernetes, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no kubernetes plan entry %q", ErrBadQuery, q.Entry)
	}
	var lists [][]byte
	truncated := false
	for _, m := range k8sPathRe.FindAllStringSubmatch(q.Text, -1) {
		raw, err := k.api.do(ctx, http.MethodGet, k.base+m[1]+"?limit="+strconv.Itoa(k8sListLimit), "", nil)
		if err != nil {
			return Result{}, err
		}
		var meta struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &meta)
		truncated = truncated || meta.Metadata.Continue != ""
		lists = append(lists, raw)
	}
	if len(lists) == 0 {
		return Result{}, fmt.Errorf("%w: not a Kubernetes list path", ErrBadQuery)
	}
	var res Result
	var err error
	switch e.ID {
	case "pods":
		res, err = k.pods(e, lists[0], q.Target)
	case "events":
		res, err = k.events(lists[0], q)
	case "rollouts":
		if len(lists) != 2 {
			return Result{}, fmt.Errorf("%w: rollouts read deployments and replicasets", ErrBadQuery)
		}
		res, err = k.rollouts(e, lists[0], lists[1], q.Target)
	}
	if err == nil && truncated {
		res.Note = strings.TrimPrefix(res.Note+"; ", "; ") + fmt.Sprintf("the namespace holds more than %d objects; the first %d were read", k8sListLimit, k8sListLimit)
	}
	return res, err
}

// objectMeta is the metadata every Kubernetes object carries.
type objectMeta struct {
	Name              string            `json:"name"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	CreationTimestamp time.Time         `json:"creationTimestamp"`
	OwnerReferences   []struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"ownerReferences"`
}

func (m objectMeta) owner(kind string) string {
	for _, o := range m.OwnerReferences {
		if o.Kind == kind {
			return o.Name
		}
	}
	return ""
}

// ofService tells whether an object belongs to the service: one of its
// service labels names it, or its name is the service's or starts with it
// followed by a dash (a Deployment's ReplicaSets and pods).
func ofService(m objectMeta, service string) bool {
	if m.Name == service || strings.HasPrefix(m.Name, service+"-") {
		return true
	}
	for _, l := range k8sServiceLabels {
		if m.Labels[l] == service {
			return true
		}
	}
	return false
}

type containerState struct {
	Waiting *struct {
		Reason string `json:"reason"`
	} `json:"waiting"`
	Running *struct {
		StartedAt time.Time `json:"startedAt"`
	} `json:"running"`
	Terminated *struct {
		ExitCode   int       `json:"exitCode"`
		Reason     string    `json:"reason"`
		FinishedAt time.Time `json:"finishedAt"`
	} `json:"terminated"`
}

// pods turns the service's pods into one reading per container: restarts,
// the waiting reason, and the last termination's reason and exit code.
// Containers in trouble come first.
func (k *kubernetes) pods(e PlanEntry, raw []byte, service string) (Result, error) {
	var list struct {
		Items []struct {
			Metadata objectMeta `json:"metadata"`
			Status   struct {
				Phase             string `json:"phase"`
				ContainerStatuses []struct {
					Name         string         `json:"name"`
					Ready        bool           `json:"ready"`
					RestartCount int            `json:"restartCount"`
					State        containerState `json:"state"`
					LastState    containerState `json:"lastState"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return Result{}, fmt.Errorf("the answer is not a v1 PodList: %v", err)
	}
	var rs []analyzer.Reading
	for _, p := range list.Items {
		if !ofService(p.Metadata, service) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			labels := map[string]string{"pod": p.Metadata.Name, "container": cs.Name, "phase": p.Status.Phase, "ready": strconv.FormatBool(cs.Ready)}
			if o := p.Metadata.owner("ReplicaSet"); o != "" {
				labels["replicaset"] = o
			}
			at := p.Metadata.CreationTimestamp
			if cs.State.Running != nil {
				at = cs.State.Running.StartedAt
			}
			if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
				labels["waiting"] = cs.State.Waiting.Reason
			}
			term := cs.LastState.Terminated
			if cs.State.Terminated != nil {
				term = cs.State.Terminated
			}
			if term != nil {
				labels["reason"] = term.Reason
				labels["exit_code"] = strconv.Itoa(term.ExitCode)
				if !term.FinishedAt.IsZero() {
					at = term.FinishedAt
				}
			}
			for k, v := range labels {
				if v == "" {
					delete(labels, k)
				} else {
					labels[k] = clip.To(v, 120)
				}
			}
			r := analyzer.Reading{Signal: e.Signal, Value: float64(cs.RestartCount), Unit: e.Unit, At: at.UTC(), Labels: labels}
			r.Render(e.What)
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no pods of %q in namespace %s", service, k.namespace)}, nil
	}
	trouble := func(r analyzer.Reading) bool { return r.Labels["waiting"] != "" || r.Labels["ready"] == "false" }
	sort.SliceStable(rs, func(i, j int) bool {
		if ti, tj := trouble(rs[i]), trouble(rs[j]); ti != tj {
			return ti
		}
		return rs[i].Value > rs[j].Value
	})
	if len(rs) > k.maxSeries {
		rs = rs[:k.maxSeries]
	}
	return Result{Readings: rs}, nil
}

// events renders the namespace's events about the service's objects in the
// window, earliest first: "<time> Warning BackOff Pod/checkout-…: Back-off
// restarting failed container (x12)".
func (k *kubernetes) events(raw []byte, q Query) (Result, error) {
	var list struct {
		Items []struct {
			InvolvedObject struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"involvedObject"`
			Reason         string    `json:"reason"`
			Message        string    `json:"message"`
			Type           string    `json:"type"`
			Count          int       `json:"count"`
			FirstTimestamp time.Time `json:"firstTimestamp"`
			LastTimestamp  time.Time `json:"lastTimestamp"`
			EventTime      time.Time `json:"eventTime"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return Result{}, fmt.Errorf("the answer is not a v1 EventList: %v", err)
	}
	var lines []LogLine
	for _, ev := range list.Items {
		name := ev.InvolvedObject.Name
		if name != q.Target && !strings.HasPrefix(name, q.Target+"-") {
			continue
		}
		at := ev.LastTimestamp
		if at.IsZero() {
			at = ev.EventTime
		}
		if at.IsZero() {
			at = ev.FirstTimestamp
		}
		if at.Before(q.Start) || at.After(q.End.Add(time.Minute)) {
			continue
		}
		text := ev.Type + " " + ev.Reason + " " + ev.InvolvedObject.Kind + "/" + name + ": " + ev.Message
		if ev.Count > 1 {
			text += fmt.Sprintf(" (x%d since %s)", ev.Count, ev.FirstTimestamp.UTC().Format(time.RFC3339))
		}
		lines = append(lines, LogLine{At: at.UTC(), Text: text})
	}
	if len(lines) == 0 {
		return Result{Note: fmt.Sprintf("no events about %q in namespace %s in the window", q.Target, k.namespace)}, nil
	}
	if len(lines) > k8sEventLines {
		// The latest events: the earliest are often the previous episode's.
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].At.After(lines[j].At) })
		lines = lines[:k8sEventLines]
	}
	return Result{Text: renderLogLines(lines, k8sEventLines)}, nil
}

// rollouts reads the service's Deployments and, for each, its ReplicaSets:
// revision, images, when it was created (the rollout) and how many of its
// pods are ready. Newest revision first.
func (k *kubernetes) rollouts(e PlanEntry, depRaw, rsRaw []byte, service string) (Result, error) {
	var deps struct {
		Items []struct {
			Metadata objectMeta `json:"metadata"`
			Spec     struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(depRaw, &deps); err != nil {
		return Result{}, fmt.Errorf("the answer is not an apps/v1 DeploymentList: %v", err)
	}
	var sets struct {
		Items []struct {
			Metadata objectMeta `json:"metadata"`
			Spec     struct {
				Replicas *int `json:"replicas"`
				Template struct {
					Spec struct {
						Containers []struct {
							Image string `json:"image"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
			Status struct {
				ReadyReplicas int `json:"readyReplicas"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(rsRaw, &sets); err != nil {
		return Result{}, fmt.Errorf("the answer is not an apps/v1 ReplicaSetList: %v", err)
	}
	mine := map[string]bool{}
	for _, d := range deps.Items {
		m := d.Metadata
		for _, l := range k8sServiceLabels {
			if d.Spec.Selector.MatchLabels[l] == service {
				m.Labels = map[string]string{l: service}
			}
		}
		if ofService(m, service) || ofService(d.Metadata, service) {
			mine[d.Metadata.Name] = true
		}
	}
	var rs []analyzer.Reading
	for _, s := range sets.Items {
		dep := s.Metadata.owner("Deployment")
		if !mine[dep] {
			continue
		}
		rev, err := strconv.Atoi(s.Metadata.Annotations["deployment.kubernetes.io/revision"])
		if err != nil {
			continue
		}
		var images []string
		for _, c := range s.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		desired := 0
		if s.Spec.Replicas != nil {
			desired = *s.Spec.Replicas
		}
		r := analyzer.Reading{Signal: e.Signal, Value: float64(rev), Unit: e.Unit, At: s.Metadata.CreationTimestamp.UTC(), Labels: map[string]string{
			"deployment": dep, "replicaset": s.Metadata.Name, "image": clip.To(strings.Join(images, ","), 200),
			"ready": fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, desired),
		}}
		r.Render(e.What)
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no Deployment of %q in namespace %s", service, k.namespace)}, nil
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Labels["deployment"] != rs[j].Labels["deployment"] {
			return rs[i].Labels["deployment"] < rs[j].Labels["deployment"]
		}
		return rs[i].Value > rs[j].Value
	})
	if len(rs) > k.maxSeries {
		rs = rs[:k.maxSeries]
	}
	return Result{Readings: rs}, nil
}

// explainK8s is a Status object's reason and message ("Forbidden: pods is
// forbidden: User … cannot list resource \"pods\" …").
func explainK8s(_ int, body []byte) string {
	var st struct {
		Kind    string `json:"kind"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return strings.TrimPrefix(st.Reason+": "+st.Message, ": ")
	}
	return string(body)
}
