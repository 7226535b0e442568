package datasources

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
)

// TypeLoki is Grafana Loki, queried in LogQL.
const TypeLoki = "loki"

// Loki limits: how many lines an error_lines query asks for, and how much
// of each line is kept.
const (
	lokiLineLimit = 50
	logLineBytes  = 300
)

// defaultLokiServiceLabel is the stream label Loki 3 derives from a
// service's own labels (service_name, app, app_kubernetes_io_name,
// container, job, …), so one label finds a service whatever its agent set.
const defaultLokiServiceLabel = "service_name"

// lokiNarrowing are the alert labels that narrow a log query: the labels
// log agents (Promtail, Alloy, the OpenTelemetry collector) put on
// Kubernetes streams. A metric's own labels (job, instance) name scrape
// targets, not log streams, so they are left out.
var lokiNarrowing = []string{"cluster", "namespace", "pod", "container"}

func init() {
	register(kind{
		name:        TypeLoki,
		urlRequired: true,
		prepare:     prepareLabelled("Loki"),
		plan:        planLoki,
		open: func(c *reach, cfg Config) (Client, error) {
			return &loki{api: apiCall{client: c.http, auth: cfg.Auth, explain: explainText}, base: strings.TrimRight(cfg.URL, "/")}, nil
		},
	})
}

// planLoki renders the log queries for the service.
func planLoki(s Source, sc Scope, roles []string) ([]Query, []string) {
	if sc.Service == "" && len(sc.DBInstances) == 0 && sc.Labels["pod"] == "" {
		return nil, []string{fmt.Sprintf("loki source %q not queried: the alert names no service to scope its queries to", s.Name)}
	}
	label, _ := s.Settings["serviceLabel"].(string)
	if label == "" {
		label = defaultLokiServiceLabel
	}
	var qs []Query
	for _, e := range entriesFor(TypeLoki, roles) {
		if !scopedBy(e.PlanEntry, sc) {
			continue
		}
		qs = append(qs, Query{Key: queryKey(s.ID, e.ID, ""), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
			Text: renderLogQL(e.Query, sc, label), Roles: e.roles, Start: sc.Start, End: sc.End, Step: time.Minute})
	}
	return qs, nil
}

// renderLogQL fills $S with the stream matchers: the service label, and
// each narrowing label the alert carries, written to also match streams
// without that label.
//
// An alert on a pod whose name is not the service's (a kube-state-metrics
// rule whose job label became the service, or one with no service at all)
// reads the streams of the pod's workload instead: the pod's name less the
// suffixes its controller generates, so the pods around it are read too.
func renderLogQL(tmpl string, sc Scope, serviceLabel string) string {
	parts := []string{serviceLabel + `="` + escapeLabelValue(sc.Service) + `"`}
	skip := serviceLabel
	if pod := sc.Labels["pod"]; pod != "" && (sc.Service == "" || !strings.HasPrefix(pod, sc.Service+"-")) {
		parts = []string{`pod=~"` + escapeLabelValue(regexp.QuoteMeta(podWorkload(pod))) + `-.+"`}
		skip = "pod"
	}
	for _, k := range lokiNarrowing {
		if v, ok := sc.Labels[k]; ok && k != skip {
			parts = append(parts, k+`=~"`+escapeLabelValue(regexp.QuoteMeta(v))+`|"`)
		}
	}
	if len(sc.DBInstances) > 0 {
		tmpl = strings.ReplaceAll(tmpl, "$RDS", dbInstancesPattern(sc))
	}
	return strings.ReplaceAll(tmpl, "$S", strings.Join(parts, ", "))
}

// suffixPodRe is a DaemonSet's or Job's pod name: the workload's and five
// characters of the alphabet Kubernetes generates names from.
var suffixPodRe = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

// podWorkload is the name of the workload a pod's name says it belongs to:
// a Deployment's or StatefulSet's as the analyzer reads pod names, else a
// DaemonSet's or Job's.
func podWorkload(pod string) string {
	if w := analyzer.PodWorkload(pod, ""); w.Kind != analyzer.KindPod {
		return w.Name
	}
	if m := suffixPodRe.FindStringSubmatch(pod); m != nil {
		return m[1]
	}
	return pod
}

// loki queries Loki's HTTP API (/loki/api/v1).
type loki struct {
	api  apiCall
	base string
}

// lokiResponse is the envelope of /loki/api/v1 answers.
type lokiResponse struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// Test lists the label names, the lightest call that needs a working tenant
// and credential.
func (l *loki) Test(ctx context.Context) (string, error) {
	raw, err := l.api.do(ctx, http.MethodGet, l.base+"/loki/api/v1/labels", "", nil)
	if err != nil {
		return "", err
	}
	var out struct {
		Status string   `json:"status"`
		Data   []string `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Status != "success" {
		return "", fmt.Errorf("the answer is not Loki API JSON")
	}
	return fmt.Sprintf("Loki answered with %d label names", len(out.Data)), nil
}

// Run runs one planned LogQL range query.
func (l *loki) Run(ctx context.Context, q Query) (Result, error) {
	e, ok := entry(TypeLoki, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no loki plan entry %q", ErrBadQuery, q.Entry)
	}
	v := url.Values{
		"query": {q.Text},
		"start": {strconv.FormatInt(q.Start.UnixNano(), 10)},
		"end":   {strconv.FormatInt(q.End.UnixNano(), 10)},
	}
	if e.Reduce == "" {
		// A log query: the earliest lines, which date the first error.
		v.Set("limit", strconv.Itoa(lokiLineLimit))
		v.Set("direction", "forward")
	} else {
		step := q.Step
		if step <= 0 {
			step = time.Minute
		}
		v.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	}
	raw, err := l.api.do(ctx, http.MethodGet, l.base+"/loki/api/v1/query_range?"+v.Encode(), "", nil)
	if err != nil {
		return Result{}, err
	}
	var resp lokiResponse
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Status != "success" {
		return Result{}, fmt.Errorf("the answer is not Loki API JSON")
	}
	switch resp.Data.ResultType {
	case "streams":
		var streams []struct {
			Stream map[string]string `json:"stream"`
			Values [][2]string       `json:"values"`
		}
		if err := json.Unmarshal(resp.Data.Result, &streams); err != nil {
			return Result{}, fmt.Errorf("the streams are not what the API documents: %v", err)
		}
		var lines []LogLine
		for _, s := range streams {
			for _, pv := range s.Values {
				ns, err := strconv.ParseInt(pv[0], 10, 64)
				if err != nil {
					continue
				}
				lines = append(lines, LogLine{At: time.Unix(0, ns).UTC(), Origin: streamOrigin(s.Stream), Text: pv[1]})
			}
		}
		if len(lines) == 0 {
			return Result{Note: "no error lines in the window"}, nil
		}
		return Result{Text: renderLogLines(lines, lokiLineLimit)}, nil
	case "matrix":
		var series []promSeries
		if err := json.Unmarshal(resp.Data.Result, &series); err != nil {
			return Result{}, fmt.Errorf("the matrix is not what the API documents: %v", err)
		}
		r, ok := countReading(e, series)
		if !ok {
			return Result{Note: "no error lines in the window"}, nil
		}
		return Result{Readings: []analyzer.Reading{r}}, nil
	}
	return Result{}, fmt.Errorf("%w: unexpected result type %q", ErrBadQuery, resp.Data.ResultType)
}

// countReading sums a count_over_time matrix: the lines in the window, at
// the first step that counted any.
func countReading(e PlanEntry, series []promSeries) (analyzer.Reading, bool) {
	var total float64
	var first time.Time
	for _, s := range series {
		for _, p := range parsePoints(s.Values) {
			if p.v <= 0 {
				continue
			}
			total += p.v
			if first.IsZero() || p.t.Before(first) {
				first = p.t
			}
		}
	}
	if total == 0 {
		return analyzer.Reading{}, false
	}
	r := analyzer.Reading{Signal: e.Signal, Value: total, Unit: e.Unit, At: first}
	r.Render(e.What)
	return r, true
}

// LogLine is one log line a source returned.
type LogLine struct {
	At     time.Time
	Origin string
	Text   string
}

// renderLogLines writes log lines earliest first, one a line, each led by
// its time, so a reader (and the analyzer's timeline) sees when each was
// written: "2026-01-02T15:04:05.123Z checkout-7d9f-x2k4q: level=error …".
func renderLogLines(lines []LogLine, limit int) string {
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].At.Before(lines[j].At) })
	if len(lines) > limit {
		lines = lines[:limit]
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.At.Format("2006-01-02T15:04:05.000Z"))
		if l.Origin != "" {
			b.WriteString(" " + l.Origin + ":")
		}
		b.WriteString(" " + clip.To(oneLine(l.Text), logLineBytes))
	}
	return b.String()
}

// oneLine folds a multi-line entry (a stack trace) onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, " | ", " / ")), " ")
}

// streamOrigin names where a line came from: its pod, else its container,
// else its labels.
func streamOrigin(ls map[string]string) string {
	for _, k := range []string{"pod", "container", "service_name", "app", "job"} {
		if v := ls[k]; v != "" {
			return clip.To(v, 120)
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, k+"="+ls[k])
	}
	return clip.To(strings.Join(parts, ","), 120)
}

// explainText is the error of an API that answers errors in plain text
// (Loki) or in a JSON object with an error or message field.
func explainText(_ int, body []byte) string {
	var obj struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &obj) == nil {
		return firstNonEmpty(obj.Error, obj.Message)
	}
	return string(body)
}
