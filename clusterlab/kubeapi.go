package clusterlab

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// resource is one kind the replay serves: where it lives in the API and
// whether its objects belong to a namespace.
type resource struct {
	group, version, plural, kind string
	namespaced                   bool
}

func (r resource) apiVersion() string {
	if r.group == "" {
		return r.version
	}
	return r.group + "/" + r.version
}

// resources are the kinds a cluster snapshot may hold (docs/scenarios.md):
// the ones the kubernetes source reads, and a few a snapshot carries along.
var resources = []resource{
	{"", "v1", "pods", "Pod", true},
	{"", "v1", "events", "Event", true},
	{"", "v1", "services", "Service", true},
	{"", "v1", "endpoints", "Endpoints", true},
	{"", "v1", "resourcequotas", "ResourceQuota", true},
	{"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true},
	{"", "v1", "serviceaccounts", "ServiceAccount", true},
	{"", "v1", "configmaps", "ConfigMap", true},
	{"", "v1", "limitranges", "LimitRange", true},
	{"", "v1", "nodes", "Node", false},
	{"", "v1", "persistentvolumes", "PersistentVolume", false},
	{"", "v1", "namespaces", "Namespace", false},
	{"apps", "v1", "deployments", "Deployment", true},
	{"apps", "v1", "replicasets", "ReplicaSet", true},
	{"apps", "v1", "statefulsets", "StatefulSet", true},
	{"apps", "v1", "daemonsets", "DaemonSet", true},
	{"apps", "v1", "controllerrevisions", "ControllerRevision", true},
	{"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true},
	{"storage.k8s.io", "v1", "storageclasses", "StorageClass", false},
}

func resourceOfKind(apiVersion, kind string) (resource, bool) {
	for _, r := range resources {
		if r.kind == kind && r.apiVersion() == apiVersion {
			return r, true
		}
	}
	return resource{}, false
}

// object is one stored object: its resource, namespace, name and JSON body.
type object struct {
	res       resource
	namespace string
	name      string
	body      map[string]any
}

// CheckObjects tells whether every object of a snapshot is one the replay can
// serve: a known apiVersion and kind, a name, and a namespace exactly when its
// kind is namespaced. The error names the object at fault.
func CheckObjects(raw []json.RawMessage) error {
	_, err := parseObjects(raw, 0)
	return err
}

func parseObjects(raw []json.RawMessage, shift time.Duration) ([]object, error) {
	out := make([]object, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		var body map[string]any
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil || body == nil {
			return nil, fmt.Errorf("object %d: not a JSON object", i)
		}
		apiVersion, _ := body["apiVersion"].(string)
		kind, _ := body["kind"].(string)
		res, ok := resourceOfKind(apiVersion, kind)
		if !ok {
			return nil, fmt.Errorf("object %d: %s %q is not a kind the replay serves", i, apiVersion, kind)
		}
		meta, _ := body["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		switch {
		case name == "":
			return nil, fmt.Errorf("object %d (%s): metadata.name is required", i, kind)
		case res.namespaced && ns == "":
			return nil, fmt.Errorf("%s %s: metadata.namespace is required", kind, name)
		case !res.namespaced && ns != "":
			return nil, fmt.Errorf("%s %s: a cluster-scoped object has no metadata.namespace", kind, name)
		}
		key := res.plural + "/" + ns + "/" + name
		if seen[key] {
			return nil, fmt.Errorf("%s %s/%s appears twice", kind, ns, name)
		}
		seen[key] = true
		if shift != 0 {
			body = shiftTimes(body, shift).(map[string]any)
		}
		out = append(out, object{res: res, namespace: ns, name: name, body: body})
	}
	return out, nil
}

// timeLayouts are the two forms the API writes times in: metav1.Time
// (seconds) and metav1.MicroTime (an event's eventTime).
var timeLayouts = []string{"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.000000Z07:00"}

// shiftTimes moves every timestamp of v by d, keeping its layout, so a
// snapshot taken long ago reads as taken now.
func shiftTimes(v any, d time.Duration) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = shiftTimes(e, d)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = shiftTimes(e, d)
		}
		return x
	case string:
		if len(x) < 20 || x[4] != '-' || x[10] != 'T' {
			return x
		}
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return x
		}
		layout := timeLayouts[0]
		if frac := strings.IndexByte(x, '.'); frac > 0 {
			layout = timeLayouts[1]
			if len(x)-frac != len(".000000Z") {
				layout = time.RFC3339Nano
			}
		}
		return t.Add(d).UTC().Format(layout)
	}
	return v
}

// KubeAPI serves a set of objects through the Kubernetes API's read paths
// (v1.30): lists of a namespace or of the cluster, single objects, label and
// field selectors, paging with limit and continue, and the Status bodies of
// its errors (401 without the bearer token, 403 where RBAC would refuse, 404,
// 405 for anything but GET). It answers from the objects as they are, never a
// canned answer, so whatever a client asks it gets what a cluster holding
// those objects would send.
type KubeAPI struct {
	token   string
	objects []object
	// mu guards forbidden.
	mu        sync.Mutex
	forbidden map[string]bool
	// Requests counts authenticated requests; Writes any that was not a GET.
	Requests, Writes atomic.Int64
	// paths records the paths asked for, for tests.
	paths sync.Map
}

// NewKubeAPI builds the replay of objects (raw API JSON, each with apiVersion
// and kind) behind token; shift moves every timestamp of the objects.
func NewKubeAPI(token string, objects []json.RawMessage, shift time.Duration) (*KubeAPI, error) {
	objs, err := parseObjects(objects, shift)
	if err != nil {
		return nil, err
	}
	// A list is in namespace and name order, as etcd's keys are.
	sort.SliceStable(objs, func(i, j int) bool {
		return objs[i].namespace+"/"+objs[i].name < objs[j].namespace+"/"+objs[j].name
	})
	return &KubeAPI{token: token, objects: objs, forbidden: map[string]bool{}}, nil
}

// Forbid makes the token's RBAC refuse plural ("nodes", "pods", …), as a
// ClusterRole without it would.
func (k *KubeAPI) Forbid(plural string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forbidden[plural] = true
}

// Asked reports whether a request for path (without its query) arrived.
func (k *KubeAPI) Asked(path string) bool {
	_, ok := k.paths.Load(path)
	return ok
}

func (k *KubeAPI) isForbidden(plural string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.forbidden[plural]
}

// The user the replay's token stands for, as RBAC messages name it.
const replayUser = "system:serviceaccount:monitoring:causeway"

func (k *KubeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+k.token {
		status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	k.Requests.Add(1)
	k.paths.Store(r.URL.Path, true)
	if r.Method != http.MethodGet {
		k.Writes.Add(1)
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource")
		return
	}
	if r.URL.Path == "/version" {
		writeJSON(w, map[string]string{"major": "1", "minor": "30", "gitVersion": "v1.30.4", "gitCommit": "a51b3b711150f57ffc1f526a640ec058514ed596",
			"buildDate": "2024-08-14T19:04:19Z", "goVersion": "go1.22.5", "compiler": "gc", "platform": "linux/amd64"})
		return
	}
	res, ns, name, ok := route(r.URL.Path)
	if !ok {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	verb := "list"
	if name != "" {
		verb = "get"
	}
	if k.isForbidden(res.plural) {
		group := res.group
		scope := "at the cluster scope"
		if ns != "" {
			scope = fmt.Sprintf("in the namespace %q", ns)
		}
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(`%s is forbidden: User %q cannot %s resource %q in API group %q %s`,
			res.plural, replayUser, verb, res.plural, group, scope))
		return
	}
	if name != "" {
		for _, o := range k.objects {
			if o.res == res && o.namespace == ns && o.name == name {
				writeJSON(w, o.body)
				return
			}
		}
		singular := strings.ToLower(res.kind)
		notFound(w, fmt.Sprintf("%ss %q not found", singular, name), res, name)
		return
	}
	k.list(w, r, res, ns)
}

// route splits an API path into the resource, namespace and object name.
func route(path string) (resource, string, string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group, version string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, version, parts = parts[1], parts[2], parts[3:]
	default:
		return resource{}, "", "", false
	}
	ns := ""
	if len(parts) >= 3 && parts[0] == "namespaces" {
		ns, parts = parts[1], parts[2:]
	}
	if len(parts) == 0 || len(parts) > 2 {
		return resource{}, "", "", false
	}
	for _, r := range resources {
		if r.group == group && r.version == version && r.plural == parts[0] {
			if ns != "" && !r.namespaced {
				return resource{}, "", "", false
			}
			name := ""
			if len(parts) == 2 {
				name = parts[1]
				if r.namespaced && ns == "" {
					return resource{}, "", "", false
				}
			}
			return r, ns, name, true
		}
	}
	return resource{}, "", "", false
}

func (k *KubeAPI) list(w http.ResponseWriter, r *http.Request, res resource, ns string) {
	q := r.URL.Query()
	labelSel, err := parseLabelSelector(q.Get("labelSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", "unable to parse requirement: "+err.Error())
		return
	}
	fieldSel, err := parseFieldSelector(q.Get("fieldSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	var matched []object
	for _, o := range k.objects {
		if o.res != res || (ns != "" && o.namespace != ns) {
			continue
		}
		if labelSel(labelsOf(o.body)) && fieldSel(o.body) {
			matched = append(matched, o)
		}
	}
	offset := 0
	if c := q.Get("continue"); c != "" {
		n, err := decodeContinue(c)
		if err != nil || n > len(matched) {
			status(w, http.StatusGone, "Expired", "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
			return
		}
		offset = n
	}
	matched = matched[offset:]
	meta := map[string]any{"resourceVersion": "48213"}
	if limit, _ := strconv.Atoi(q.Get("limit")); limit > 0 && len(matched) > limit {
		meta["continue"] = encodeContinue(offset + limit)
		meta["remainingItemCount"] = len(matched) - limit
		matched = matched[:limit]
	}
	items := make([]any, 0, len(matched))
	for _, o := range matched {
		item := copyJSON(o.body)
		// Items of a typed list carry no kind or apiVersion of their own.
		delete(item, "kind")
		delete(item, "apiVersion")
		items = append(items, item)
	}
	writeJSON(w, map[string]any{"kind": res.kind + "List", "apiVersion": res.apiVersion(), "metadata": meta, "items": items})
}

func encodeContinue(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":48213,"start":` + strconv.Itoa(n) + `}`))
}

func decodeContinue(s string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, err
	}
	var c struct {
		Start int `json:"start"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, err
	}
	return c.Start, nil
}

func notFound(w http.ResponseWriter, message string, res resource, name string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": message, "reason": "NotFound",
		"details": map[string]any{"name": name, "group": res.group, "kind": res.plural}, "code": http.StatusNotFound})
}

func labelsOf(body map[string]any) map[string]string {
	meta, _ := body["metadata"].(map[string]any)
	raw, _ := meta["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// parseLabelSelector reads the selector syntax of the API: comma-separated
// requirements "k=v", "k==v", "k!=v", "k in (a,b)", "k notin (a,b)", "k" and
// "!k".
func parseLabelSelector(s string) (func(map[string]string) bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return func(map[string]string) bool { return true }, nil
	}
	var reqs []func(map[string]string) bool
	for _, part := range splitOutsideParens(s) {
		part = strings.TrimSpace(part)
		switch {
		case strings.Contains(part, " notin "), strings.Contains(part, " in "):
			op := " in "
			if strings.Contains(part, " notin ") {
				op = " notin "
			}
			k, set, _ := strings.Cut(part, op)
			set = strings.TrimSpace(set)
			if !strings.HasPrefix(set, "(") || !strings.HasSuffix(set, ")") {
				return nil, fmt.Errorf("%q: found '%s', expected: '('", part, set)
			}
			vals := map[string]bool{}
			for _, v := range strings.Split(set[1:len(set)-1], ",") {
				vals[strings.TrimSpace(v)] = true
			}
			key, neg := strings.TrimSpace(k), op == " notin "
			reqs = append(reqs, func(l map[string]string) bool {
				v, has := l[key]
				if neg {
					return !has || !vals[v]
				}
				return has && vals[v]
			})
		case strings.Contains(part, "!="):
			k, v, _ := strings.Cut(part, "!=")
			key, val := strings.TrimSpace(k), strings.TrimSpace(v)
			reqs = append(reqs, func(l map[string]string) bool { return l[key] != val })
		case strings.Contains(part, "="):
			k, v, _ := strings.Cut(part, "=")
			key, val := strings.TrimSpace(k), strings.TrimSpace(strings.TrimPrefix(v, "="))
			reqs = append(reqs, func(l map[string]string) bool { x, has := l[key]; return has && x == val })
		case strings.HasPrefix(part, "!"):
			key := strings.TrimSpace(part[1:])
			reqs = append(reqs, func(l map[string]string) bool { _, has := l[key]; return !has })
		case part != "":
			key := part
			reqs = append(reqs, func(l map[string]string) bool { _, has := l[key]; return has })
		default:
			return nil, fmt.Errorf("%q: found '', expected: identifier", s)
		}
	}
	return func(l map[string]string) bool {
		for _, r := range reqs {
			if !r(l) {
				return false
			}
		}
		return true
	}, nil
}

func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// parseFieldSelector reads "a.b=v,c!=w" over an object's fields.
func parseFieldSelector(s string) (func(map[string]any) bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return func(map[string]any) bool { return true }, nil
	}
	var reqs []func(map[string]any) bool
	for _, part := range strings.Split(s, ",") {
		neg := strings.Contains(part, "!=")
		k, v, ok := strings.Cut(part, "!=")
		if !neg {
			k, v, ok = strings.Cut(part, "=")
			v = strings.TrimPrefix(v, "=")
		}
		if !ok {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
		path, val := strings.Split(strings.TrimSpace(k), "."), strings.TrimSpace(v)
		reqs = append(reqs, func(o map[string]any) bool { return (fieldAt(o, path) == val) != neg })
	}
	return func(o map[string]any) bool {
		for _, r := range reqs {
			if !r(o) {
				return false
			}
		}
		return true
	}, nil
}

func fieldAt(o map[string]any, path []string) string {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch x := cur.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// copyJSON deep-copies a decoded object, so a response never shares maps
// with the store.
func copyJSON(m map[string]any) map[string]any {
	raw, _ := json.Marshal(m)
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

// ServeKube starts api over TLS on a loopback port; the caller closes it.
func ServeKube(api *KubeAPI) *KubeServer {
	srv := httptest.NewTLSServer(api)
	ks := &KubeServer{URL: srv.URL, API: api, close: srv.Close}
	ks.CABundle = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return ks
}

// Close stops the server.
func (ks *KubeServer) Close() { ks.close() }
