package clusterlab

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// LogLine is one line of a stream.
type LogLine struct {
	At   time.Time
	Text string
}

// Stream is one Loki stream: a label set and its lines.
type Stream struct {
	Labels map[string]string
	Lines  []LogLine
}

// LokiServer is a fake Loki: NewLoki builds one to serve, Loki starts one
// for a test.
type LokiServer struct {
	// URL is where Loki serves it (empty until a server serves it).
	URL string
	// Queries holds every LogQL query received, in order.
	Queries atomic.Value // []string
	n       atomic.Int64
	orgID   string
	streams []Stream
}

// QueryCount is how many query_range calls were answered.
func (l *LokiServer) QueryCount() int64 { return l.n.Load() }

var (
	matcherRe = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*$`)
	metricRe  = regexp.MustCompile(`^sum\(count_over_time\((.*)\[(\d+)m\]\)\)$`)
	filterRe  = regexp.MustCompile(`^\|(~|=)\s*("(?:[^"\\]|\\.)*")$`)
)

// logQuery is a parsed query of the forms Causeway sends: a stream selector
// with an optional line filter, optionally counted per minute.
type logQuery struct {
	match  func(map[string]string) bool
	filter func(string) bool
	metric bool
	rng    time.Duration
}

// parseLogQL reads a query, failing the way Loki does ("parse error at line
// 1, col N: …").
func parseLogQL(q string) (logQuery, error) {
	out := logQuery{filter: func(string) bool { return true }}
	body := strings.TrimSpace(q)
	if m := metricRe.FindStringSubmatch(body); m != nil {
		mins, _ := strconv.Atoi(m[2])
		out.metric, out.rng, body = true, time.Duration(mins)*time.Minute, strings.TrimSpace(m[1])
	}
	perr := func(col int, what string) error {
		return fmt.Errorf("parse error at line 1, col %d: syntax error: %s", col+1, what)
	}
	if !strings.HasPrefix(body, "{") {
		return out, perr(0, "unexpected IDENTIFIER")
	}
	end := strings.Index(body, "}")
	if end < 0 {
		return out, perr(len(body), "unexpected $end, expecting } or ,")
	}
	var ms []func(map[string]string) bool
	nonEmpty := false
	for _, part := range splitMatchers(body[1:end]) {
		m := matcherRe.FindStringSubmatch(part)
		if m == nil {
			return out, perr(1, "unexpected IDENTIFIER, expecting STRING")
		}
		val, err := strconv.Unquote(m[3])
		if err != nil {
			return out, perr(1, "invalid char escape")
		}
		name, op := m[1], m[2]
		var f func(string) bool
		switch op {
		case "=", "!=":
			f = func(v string) bool { return v == val }
			nonEmpty = nonEmpty || (op == "=" && val != "")
		default:
			re, err := regexp.Compile("^(?:" + val + ")$")
			if err != nil {
				return out, fmt.Errorf("parse error : invalid regex %s", val)
			}
			f = re.MatchString
			nonEmpty = nonEmpty || (op == "=~" && !re.MatchString(""))
		}
		neg := op == "!=" || op == "!~"
		ms = append(ms, func(ls map[string]string) bool { return f(ls[name]) != neg })
	}
	if !nonEmpty {
		return out, fmt.Errorf("parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~\".*\" does not meet this requirement, but app=~\".+\" will")
	}
	out.match = func(ls map[string]string) bool {
		for _, f := range ms {
			if !f(ls) {
				return false
			}
		}
		return true
	}
	if rest := strings.TrimSpace(body[end+1:]); rest != "" {
		m := filterRe.FindStringSubmatch(rest)
		if m == nil {
			return out, perr(end+1, "unexpected IDENTIFIER")
		}
		val, _ := strconv.Unquote(m[2])
		if m[1] == "~" {
			re, err := regexp.Compile(val)
			if err != nil {
				return out, fmt.Errorf("parse error : invalid regex %s", val)
			}
			out.filter = re.MatchString
		} else {
			out.filter = func(s string) bool { return strings.Contains(s, val) }
		}
	}
	return out, nil
}

// splitMatchers splits a selector's body on the commas outside quotes.
func splitMatchers(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// discoverServiceName is Loki's default discover_service_name limit (Loki
// 3.0 and later): the labels its distributor takes a stream's service_name
// from, first present first, when the stream was pushed without one.
var discoverServiceName = []string{"service", "app", "application", "app_name", "name", "app_kubernetes_io_name",
	"container", "container_name", "k8s_container_name", "component", "workload", "job", "k8s_job_name"}

// withServiceName is a pushed stream's labels as Loki stores them: with the
// service_name its distributor derives, "unknown_service" when no label of
// discoverServiceName is set.
func withServiceName(in map[string]string) map[string]string {
	out := maps.Clone(in)
	if out == nil {
		out = map[string]string{}
	}
	if out["service_name"] != "" {
		return out
	}
	out["service_name"] = "unknown_service"
	for _, k := range discoverServiceName {
		if v := in[k]; v != "" {
			out["service_name"] = v
			break
		}
	}
	return out
}

// NewLoki builds a Loki holding streams, to serve with any HTTP server. With
// an orgID it serves only that tenant (sent as X-Scope-OrgID, as a
// multi-tenant Loki requires); without one it is a single-tenant Loki that
// asks for none.
func NewLoki(orgID string, streams []Stream) *LokiServer {
	ingested := make([]Stream, len(streams))
	for i, s := range streams {
		ingested[i] = Stream{Labels: withServiceName(s.Labels), Lines: s.Lines}
	}
	ls := &LokiServer{orgID: orgID, streams: ingested}
	ls.Queries.Store([]string{})
	return ls
}

// Loki starts a Loki that serves streams to the tenant orgID; the test's
// cleanup stops it.
func Loki(t testing.TB, orgID string, streams []Stream) *LokiServer {
	t.Helper()
	ls := NewLoki(orgID, streams)
	srv := httptest.NewServer(ls)
	t.Cleanup(srv.Close)
	ls.URL = srv.URL
	return ls
}

// ServeHTTP answers Loki's label and query_range APIs.
func (ls *LokiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ls.orgID != "" && r.Header.Get("X-Scope-OrgID") != ls.orgID {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintln(w, "no org id")
		return
	}
	switch r.URL.Path {
	case "/loki/api/v1/labels":
		names := map[string]bool{}
		for _, s := range ls.streams {
			for k := range s.Labels {
				names[k] = true
			}
		}
		list := []string{}
		for k := range names {
			list = append(list, k)
		}
		sort.Strings(list)
		writeJSON(w, map[string]any{"status": "success", "data": list})
	case "/loki/api/v1/query_range":
		ls.queryRange(w, r, ls.streams)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintln(w, msg)
}

func (ls *LokiServer) queryRange(w http.ResponseWriter, r *http.Request, streams []Stream) {
	qv := r.URL.Query()
	q := qv.Get("query")
	prev, _ := ls.Queries.Load().([]string)
	ls.Queries.Store(append(append([]string(nil), prev...), q))
	ls.n.Add(1)
	lq, err := parseLogQL(q)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	start, err1 := strconv.ParseInt(qv.Get("start"), 10, 64)
	end, err2 := strconv.ParseInt(qv.Get("end"), 10, 64)
	if err1 != nil || err2 != nil || end < start {
		badRequest(w, "invalid start or end")
		return
	}
	from, to := time.Unix(0, start), time.Unix(0, end)
	stats := map[string]any{"summary": map[string]any{"bytesProcessedPerSecond": 1024, "linesProcessedPerSecond": 10, "totalBytesProcessed": 2048, "totalLinesProcessed": 20, "execTime": 0.002}}
	if lq.metric {
		step, err := strconv.ParseFloat(qv.Get("step"), 64)
		if err != nil || step <= 0 {
			badRequest(w, "invalid step")
			return
		}
		var values [][2]any
		for at := from; !at.After(to); at = at.Add(time.Duration(step * float64(time.Second))) {
			n := 0
			for _, s := range streams {
				if !lq.match(s.Labels) {
					continue
				}
				for _, l := range s.Lines {
					if l.At.After(at.Add(-lq.rng)) && !l.At.After(at) && lq.filter(l.Text) {
						n++
					}
				}
			}
			if n > 0 {
				values = append(values, [2]any{float64(at.Unix()), strconv.Itoa(n)})
			}
		}
		result := []any{}
		if len(values) > 0 {
			result = append(result, map[string]any{"metric": map[string]string{}, "values": values})
		}
		writeJSON(w, map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result, "stats": stats}})
		return
	}
	limit, _ := strconv.Atoi(qv.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	forward := qv.Get("direction") == "forward"
	type hit struct {
		s  int
		at time.Time
		l  string
	}
	var hits []hit
	for i, s := range streams {
		if !lq.match(s.Labels) {
			continue
		}
		for _, l := range s.Lines {
			if !l.At.Before(from) && l.At.Before(to) && lq.filter(l.Text) {
				hits = append(hits, hit{i, l.At, l.Text})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if forward {
			return hits[i].at.Before(hits[j].at)
		}
		return hits[i].at.After(hits[j].at)
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	by := map[int][][2]string{}
	var order []int
	for _, h := range hits {
		if _, ok := by[h.s]; !ok {
			order = append(order, h.s)
		}
		by[h.s] = append(by[h.s], [2]string{strconv.FormatInt(h.at.UnixNano(), 10), h.l})
	}
	result := []any{}
	for _, i := range order {
		result = append(result, map[string]any{"stream": streams[i].Labels, "values": by[i]})
	}
	writeJSON(w, map[string]any{"status": "success", "data": map[string]any{"resultType": "streams", "result": result, "stats": stats}})
}
