package datasources

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/causeway/causeway/clip"
)

// TypeKubernetes is a Kubernetes API server.
const TypeKubernetes = "kubernetes"

// Kubernetes limits: one list call reads at most k8sListLimit objects and a
// list follows at most k8sListPages pages; a source reads at most
// k8sMaxNamespaces namespaces in a pass.
const (
	k8sListLimit     = 500
	k8sListPages     = 4
	k8sMaxNamespaces = 3
	k8sMaxCABytes    = 64 << 10
)

// namespaceRe is a valid namespace name (an RFC 1123 label).
var namespaceRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// podHashRe is a pod template hash, as the ReplicaSet controller writes it
// (the alphabet of k8s.io/apimachinery's rand.SafeEncodeString).
var podHashRe = regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz2456789]{5,10}$`)

func init() {
	register(kind{
		name:        TypeKubernetes,
		urlRequired: true,
		prepare: func(c *reach, s *Spec) error {
			if err := c.checkHTTPURL(context.Background(), s.URL); err != nil {
				return err
			}
			if err := onlySettings(s.Settings, "namespace", "namespaces", "caBundle"); err != nil {
				return err
			}
			if v, ok := s.Settings["namespace"]; ok {
				ns, isString := v.(string)
				if !isString || !namespaceRe.MatchString(ns) {
					return fieldErr("settings.namespace", "must be a Kubernetes namespace name")
				}
			}
			if v, ok := s.Settings["namespaces"]; ok {
				list, isList := v.([]any)
				if !isList || len(list) == 0 || len(list) > 50 {
					return fieldErr("settings.namespaces", "must be a list of 1 to 50 namespace names")
				}
				for _, e := range list {
					if ns, isString := e.(string); !isString || !namespaceRe.MatchString(ns) {
						return fieldErr("settings.namespaces", "must hold Kubernetes namespace names only")
					}
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
		open: func(c *reach, cfg Config) (Client, error) {
			hc := c.http
			if pem, _ := cfg.Settings["caBundle"].(string); pem != "" {
				roots := x509.NewCertPool()
				if !roots.AppendCertsFromPEM([]byte(pem)) {
					return nil, fmt.Errorf("%w: settings.caBundle holds no certificate", ErrBadQuery)
				}
				hc = c.clientWithRoots(roots)
			}
			// The namespace a connection test lists: the first the source may read.
			ns := "default"
			if allowed := k8sAllowed(cfg.Settings); len(allowed) > 0 {
				ns = allowed[0]
			}
			return &kubernetes{api: apiCall{client: hc, auth: cfg.Auth, explain: explainK8s}, base: strings.TrimRight(cfg.URL, "/"),
				namespace: ns, maxSeries: c.opts.MaxSeries}, nil
		},
	})
}

// k8sAllowed lists the namespaces a source is set to read: settings.namespaces,
// else settings.namespace; empty means any.
func k8sAllowed(settings map[string]any) []string {
	var out []string
	if list, ok := settings["namespaces"].([]any); ok {
		for _, e := range list {
			if ns, ok := e.(string); ok && namespaceRe.MatchString(ns) && !slices.Contains(out, ns) {
				out = append(out, ns)
			}
		}
		return out
	}
	if ns := setting(settings, "namespace", ""); ns != "" {
		out = append(out, ns)
	}
	return out
}

// k8sNamespaces picks the namespaces a pass reads: the alert's when the
// source may read it, else the source's own (at most k8sMaxNamespaces, the
// rest named in the note), else "default". An alert naming a namespace the
// source is not set to read gets a note, and that namespace is not read.
func k8sNamespaces(s Source, sc Scope) ([]string, string) {
	allowed := k8sAllowed(s.Settings)
	alert := sc.Labels["namespace"]
	switch {
	case alert != "" && !namespaceRe.MatchString(alert):
		return nil, fmt.Sprintf("kubernetes source %q not queried: the alert's namespace %q is not a namespace name", s.Name, clip.To(alert, 80))
	case alert != "" && (len(allowed) == 0 || slices.Contains(allowed, alert)):
		return []string{alert}, ""
	case alert != "":
		return nil, fmt.Sprintf("kubernetes source %q not queried: the alert's namespace %s is not one of its settings.namespaces", s.Name, alert)
	case len(allowed) > k8sMaxNamespaces:
		return allowed[:k8sMaxNamespaces], fmt.Sprintf("kubernetes source %q: the alert names no namespace; read the first %d of its settings.namespaces, not %s",
			s.Name, k8sMaxNamespaces, clip.To(strings.Join(allowed[k8sMaxNamespaces:], ", "), 200))
	case len(allowed) > 0:
		return allowed, ""
	}
	return []string{"default"}, ""
}

// planKubernetes lists, for each namespace the pass reads, the plan's
// Kubernetes queries: every object of the namespace that can be at fault,
// not only the service's, since a symptom's cause is often another object
// (the Service in front of it, the quota, the node). The service, when the
// alert names one, travels as the query's target so its objects come first.
// Cluster-wide reads (nodes) run once.
func planKubernetes(s Source, sc Scope, roles []string) ([]Query, []string) {
	namespaces, note := k8sNamespaces(s, sc)
	var notes []string
	if note != "" {
		notes = append(notes, note)
	}
	var qs []Query
	clusterDone := map[string]bool{}
	for _, ns := range namespaces {
		for _, e := range entriesFor(TypeKubernetes, roles) {
			paths := k8sPaths(e.Query, ns)
			clusterWide := !strings.Contains(paths[0], "/namespaces/")
			if clusterWide && clusterDone[e.ID] {
				continue
			}
			clusterDone[e.ID] = true
			text := "GET " + strings.Join(paths, ", GET ")
			if sc.Service != "" {
				text += " (objects of " + strconv.Quote(sc.Service) + " first)"
			}
			qs = append(qs, Query{Key: queryKey(s.ID, e.ID+"@"+ns, sc.Service), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
				Text: text, Roles: e.roles, Start: sc.Start, End: sc.End, Target: sc.Service})
		}
	}
	return qs, notes
}

// k8sPaths fills a plan entry's paths for a namespace.
func k8sPaths(query, namespace string) []string {
	var out []string
	for _, p := range strings.Fields(query) {
		out = append(out, strings.ReplaceAll(p, "{namespace}", namespace))
	}
	return out
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

// k8sPathRe is one path of a planned query: a list of a namespace or of the
// cluster, with an optional field selector.
var k8sPathRe = regexp.MustCompile(`GET (/(?:api/v1|apis/[a-z0-9.]+/v1)(?:/namespaces/[a-z0-9-]+)?/[a-z]+(?:\?fieldSelector=[A-Za-z.=,%0-9-]+)?)`)

// Run reads the lists of one planned query — the first is what the query is
// about and must answer; the others add context, and one that cannot be read
// becomes a note — and reduces them to readings.
func (k *kubernetes) Run(ctx context.Context, q Query) (Result, error) {
	e, ok := entry(TypeKubernetes, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no kubernetes plan entry %q", ErrBadQuery, q.Entry)
	}
	reduce := k8sReducers[e.ID]
	if reduce == nil {
		return Result{}, fmt.Errorf("%w: no reader for kubernetes entry %q", ErrBadQuery, e.ID)
	}
	matches := k8sPathRe.FindAllStringSubmatch(q.Text, -1)
	if len(matches) == 0 {
		return Result{}, fmt.Errorf("%w: not a Kubernetes list path", ErrBadQuery)
	}
	v := &clusterView{namespace: pathNamespace(matches[0][1]), service: q.Target, start: q.Start, end: q.End}
	for i, m := range matches {
		items, truncated, err := k.list(ctx, m[1])
		if err != nil {
			if i == 0 || !errors.Is(err, ErrDenied) && !errors.Is(err, ErrBadQuery) {
				return Result{}, err
			}
			why := err.Error()
			if r := (*refusal)(nil); errors.As(err, &r) {
				why = r.why // the API's own words
			}
			v.notes = append(v.notes, fmt.Sprintf("%s not read: %s", m[1], clip.To(why, 160)))
			continue
		}
		if truncated {
			v.notes = append(v.notes, fmt.Sprintf("%s holds more than %d objects; the first were read", m[1], k8sListLimit*k8sListPages))
		}
		if err := v.add(m[1], items); err != nil {
			return Result{}, err
		}
	}
	res := reduce(e, v)
	if len(res.Readings) > k.maxSeries {
		res.Readings = res.Readings[:k.maxSeries]
	}
	if len(v.notes) > 0 {
		res.Note = strings.TrimPrefix(res.Note+"; "+strings.Join(v.notes, "; "), "; ")
	}
	return res, nil
}

// list reads every page of one list (up to k8sListPages) and returns its
// items, and whether more remained.
func (k *kubernetes) list(ctx context.Context, path string) ([]json.RawMessage, bool, error) {
	var items []json.RawMessage
	cont := ""
	for page := 0; page < k8sListPages; page++ {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		u := k.base + path + sep + "limit=" + strconv.Itoa(k8sListLimit)
		if cont != "" {
			u += "&continue=" + url.QueryEscape(cont)
		}
		raw, err := k.api.do(ctx, http.MethodGet, u, "", nil)
		if err != nil {
			return nil, false, err
		}
		var l list[json.RawMessage]
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, false, fmt.Errorf("the answer of %s is not a Kubernetes list: %v", path, err)
		}
		items = append(items, l.Items...)
		if cont = l.Metadata.Continue; cont == "" {
			return items, false, nil
		}
	}
	return items, true, nil
}

// pathNamespace is the namespace of a list path ("" for the cluster scope).
func pathNamespace(text string) string {
	if _, rest, ok := strings.Cut(text, "/namespaces/"); ok {
		ns, _, _ := strings.Cut(rest, "/")
		return ns
	}
	return ""
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
	return string(bytes.TrimSpace(body))
}
