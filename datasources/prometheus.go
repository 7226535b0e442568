package datasources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
)

// prepareLabelled checks a source whose only setting is the label that
// names a service, as Prometheus and Loki both select series by label; system
// names the label dialect in the error.
func prepareLabelled(system string) func(c *reach, s *Spec) error {
	return func(c *reach, s *Spec) error {
		if err := c.checkHTTPURL(context.Background(), s.URL); err != nil {
			return err
		}
		if err := onlySettings(s.Settings, "serviceLabel"); err != nil {
			return err
		}
		if v, ok := s.Settings["serviceLabel"]; ok {
			l, isString := v.(string)
			if !isString || !labelName.MatchString(l) {
				return fieldErr("settings.serviceLabel", "must be a %s label name", system)
			}
		}
		s.URL = strings.TrimRight(s.URL, "/")
		return nil
	}
}

func init() {
	register(kind{
		name:        TypePrometheus,
		urlRequired: true,
		prepare:     prepareLabelled("Prometheus"),
		plan:        planPrometheus,
		open: func(c *reach, cfg Config) (Client, error) {
			return &prometheus{http: c.http, base: strings.TrimRight(cfg.URL, "/"), auth: cfg.Auth, maxSeries: c.opts.MaxSeries}, nil
		},
	})
}

// planPrometheus renders every entry the pass's agents read for the service.
func planPrometheus(s Source, sc Scope, roles []string) ([]Query, []string) {
	label, _ := s.Settings["serviceLabel"].(string)
	var qs []Query
	var notes []string
	for _, e := range entriesFor(TypePrometheus, roles) {
		// An RDS instance's series are its CloudWatch metrics, matched by
		// the instance; a service's, by the service.
		if !scopedBy(e.PlanEntry, sc) {
			continue
		}
		text := renderPromQL(e.PlanEntry, sc, label)
		if len(text) > MaxQueryText {
			notes = append(notes, fmt.Sprintf("prometheus query %s left out: the alert's labels make it longer than %d bytes", e.ID, MaxQueryText))
			continue
		}
		qs = append(qs, Query{Key: queryKey(s.ID, e.ID, ""), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
			Text: text, Roles: e.roles, Start: sc.Start, End: sc.End, Step: rangeStep(sc.Start, sc.End)})
	}
	if len(qs) == 0 && len(notes) == 0 {
		notes = append(notes, fmt.Sprintf("prometheus source %q not queried: the alert names no service, host, consumer group or probe target to scope its queries to", s.Name))
	}
	return qs, notes
}

// prometheus queries the Prometheus HTTP API (also served by Thanos, Cortex,
// Mimir and VictoriaMetrics).
type prometheus struct {
	http      *http.Client
	base      string
	auth      Auth
	maxSeries int
}

// promResponse is the envelope of every /api/v1 answer.
type promResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// Test asks for the server's build information, falling back to a trivial
// query for compatible servers that do not serve it.
func (p *prometheus) Test(ctx context.Context) (string, error) {
	var info struct {
		Version string `json:"version"`
	}
	err := p.call(ctx, http.MethodGet, "/api/v1/status/buildinfo", nil, &info)
	if err == nil && info.Version != "" {
		return "Prometheus " + info.Version + " answered", nil
	}
	var vec struct {
		ResultType string `json:"resultType"`
	}
	if qerr := p.call(ctx, http.MethodPost, "/api/v1/query", url.Values{"query": {"vector(1)"}}, &vec); qerr != nil {
		if err != nil && !errors.Is(err, errNotFound) {
			return "", err
		}
		return "", qerr
	}
	return "the Prometheus query API answered", nil
}

var errNotFound = errors.New("not found")

// Run runs one planned range query and reduces each series to a reading.
func (p *prometheus) Run(ctx context.Context, q Query) (Result, error) {
	e, ok := entry(TypePrometheus, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no prometheus plan entry %q", ErrBadQuery, q.Entry)
	}
	step := q.Step
	if step <= 0 {
		step = rangeStep(q.Start, q.End)
	}
	form := url.Values{
		"query": {q.Text},
		"start": {formatPromTime(q.Start)},
		"end":   {formatPromTime(q.End)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	if dl, ok := ctx.Deadline(); ok {
		form.Set("timeout", strconv.FormatFloat(time.Until(dl).Seconds(), 'f', 0, 64)+"s")
	}
	var data struct {
		ResultType string       `json:"resultType"`
		Result     []promSeries `json:"result"`
	}
	if err := p.call(ctx, http.MethodPost, "/api/v1/query_range", form, &data); err != nil {
		return Result{}, err
	}
	rs := reduceSeries(e, data.Result, p.maxSeries)
	res := Result{Readings: rs}
	if len(data.Result) == 0 {
		res.Note = "no series matched"
	}
	return res, nil
}

func formatPromTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// call sends one API request and decodes the data of a success into out.
func (p *prometheus) call(ctx context.Context, method, path string, form url.Values, out any) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	p.auth.apply(req)
	resp, err := p.http.Do(req)
	if err != nil {
		return describeNetError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	var env promResponse
	jerr := json.Unmarshal(raw, &env)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &refusal{class: ErrDenied, status: resp.StatusCode, why: http.StatusText(resp.StatusCode)}
	case resp.StatusCode == http.StatusNotFound:
		return &refusal{class: errNotFound, status: resp.StatusCode, why: path}
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity:
		return &refusal{class: ErrBadQuery, status: resp.StatusCode, why: firstNonEmpty(env.Error, http.StatusText(resp.StatusCode))}
	case resp.StatusCode >= 300:
		return &refusal{status: resp.StatusCode, why: firstNonEmpty(env.Error, http.StatusText(resp.StatusCode))}
	case jerr != nil:
		return fmt.Errorf("the answer is not Prometheus API JSON: %v", jerr)
	case env.Status != "success":
		return fmt.Errorf("%w: %s: %s", ErrBadQuery, env.ErrorType, env.Error)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("the answer's data is not what the API documents: %v", err)
	}
	return nil
}

// point is one sample of a series.
type point struct {
	t time.Time
	v float64
}

func parsePoints(vals [][2]any) []point {
	out := make([]point, 0, len(vals))
	for _, pv := range vals {
		ts, ok1 := pv[0].(float64)
		s, ok2 := pv[1].(string)
		if !ok1 || !ok2 {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		sec, frac := math.Modf(ts)
		out = append(out, point{t: time.Unix(int64(sec), int64(frac*1e9)).UTC(), v: v})
	}
	return out
}

// reduceSeries turns a range query's series into readings: series that
// differ only by the reading label are one reading with a value and a limit;
// the value is the entry's reduction over the window. Readings come most
// telling first (highest use of a limit, lowest free space, earliest expiry),
// at most maxSeries of them.
func reduceSeries(e PlanEntry, series []promSeries, maxSeries int) []analyzer.Reading {
	type group struct {
		labels       map[string]string
		value, limit []point
	}
	groups := map[string]*group{}
	var order []string
	for _, s := range series {
		part := s.Metric["reading"]
		labels := map[string]string{}
		for k, v := range s.Metric {
			if k != "reading" {
				labels[k] = v
			}
		}
		key := labelString(labels)
		g := groups[key]
		if g == nil {
			g = &group{labels: labels}
			groups[key] = g
			order = append(order, key)
		}
		pts := parsePoints(s.Values)
		if part == "limit" {
			g.limit = pts
		} else {
			g.value = pts
		}
	}
	var out []analyzer.Reading
	for _, key := range order {
		g := groups[key]
		if len(g.value) == 0 {
			continue
		}
		pick := g.value[len(g.value)-1]
		for _, pt := range g.value {
			if (e.Reduce == ReduceMax && pt.v > pick.v) || (e.Reduce == ReduceMin && pt.v < pick.v) {
				pick = pt
			}
		}
		r := analyzer.Reading{Signal: e.Signal, Value: pick.v, Unit: e.Unit, At: pick.t, Labels: trimLabels(g.labels)}
		if len(g.limit) > 0 {
			r.Limit = g.limit[len(g.limit)-1].v
		}
		if e.Trend {
			b := g.value[0].v
			r.Baseline = &b
		}
		r.Render(fillLabels(e.What, g.labels))
		out = append(out, r)
	}
	ascending := e.Reduce == ReduceMin || e.Unit == analyzer.UnitUnix
	sort.SliceStable(out, func(i, j int) bool {
		a, b := telling(out[i]), telling(out[j])
		if ascending {
			return a < b
		}
		return a > b
	})
	if len(out) > maxSeries {
		out = out[:maxSeries]
	}
	return out
}

// telling is what orders readings: the share of the limit when there is
// one, the growth over the window for a trend, else the value.
func telling(r analyzer.Reading) float64 {
	switch {
	case r.Limit > 0:
		return r.Value / r.Limit
	case r.Baseline != nil:
		return r.Value - *r.Baseline
	}
	return r.Value
}

// trimLabels keeps a reading's labels short: at most 8, values clipped.
func trimLabels(ls map[string]string) map[string]string {
	if len(ls) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		if len(out) == 8 {
			break
		}
		out[k] = clip.To(ls[k], 120)
	}
	return out
}

// labelString is a canonical rendering of a label set.
func labelString(ls map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		fmt.Fprintf(&b, "%s=%q,", k, ls[k])
	}
	return b.String()
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// fillLabels replaces each {label} of a plan entry's What with the series'
// value of that label.
func fillLabels(what string, labels map[string]string) string {
	for k, v := range labels {
		what = strings.ReplaceAll(what, "{"+k+"}", v)
	}
	return what
}
