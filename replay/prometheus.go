package replay

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/datasources"
)

// Servers are the stand-ins for a scenario's sources, by alias. Sources of a
// type no stand-in speaks are left out (Skipped names them).
type Servers struct {
	URLs    map[string]string
	Skipped []Source
	servers []*httptest.Server
}

// Close stops every stand-in.
func (s *Servers) Close() {
	for _, srv := range s.servers {
		srv.Close()
	}
}

// standIns are the protocols replay speaks, by source type.
var standIns = map[string]func(byQuery map[string]Answer) http.Handler{
	datasources.TypePrometheus: prometheusHandler,
	datasources.TypeLoki:       lokiHandler,
}

// Serve starts one stand-in per source of the scenario that speaks a
// protocol replay knows (the Prometheus and Loki HTTP APIs), answering with
// the recorded answers.
func Serve(s Scenario) *Servers {
	out := &Servers{URLs: map[string]string{}}
	for _, src := range s.Sources {
		handler, ok := standIns[src.Type]
		if !ok {
			out.Skipped = append(out.Skipped, src)
			continue
		}
		byQuery := map[string]Answer{}
		for _, a := range s.Answers {
			if a.Source == src.Alias {
				byQuery[a.Query] = a
			}
		}
		srv := httptest.NewServer(handler(byQuery))
		out.servers = append(out.servers, srv)
		out.URLs[src.Alias] = srv.URL
	}
	return out
}

// promSample is one [time, "value"] pair of the Prometheus API.
type promSample [2]any

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values []promSample      `json:"values"`
}

// prometheusHandler answers /api/v1/query_range with the recorded readings
// of the same PromQL, each as a series whose reduction gives the recorded
// value (and, for a reading with a limit, a second series labelled
// reading="limit"). Times move with the asked window, so a reading keeps its
// place relative to the alert. A query never recorded matches no series.
func prometheusHandler(byQuery map[string]Answer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/status/buildinfo", func(w http.ResponseWriter, _ *http.Request) {
		writeProm(w, map[string]string{"version": "replay"})
	})
	mux.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		series := []promSeries{}
		if a, ok := byQuery[r.Form.Get("query")]; ok {
			end := promTime(r.Form.Get("end"), a.End)
			for _, rd := range a.Readings {
				series = append(series, seriesOf(rd, end.Sub(a.End))...)
			}
		}
		writeProm(w, map[string]any{"resultType": "matrix", "result": series})
	})
	return mux
}

// seriesOf renders one reading: a trend's baseline first, then the value,
// then its limit as a series of its own.
func seriesOf(rd analyzer.Reading, shift time.Duration) []promSeries {
	at := float64(rd.At.Add(shift).UnixMilli()) / 1000
	val := promSeries{Metric: maps.Clone(rd.Labels), Values: []promSample{{at, fmtFloat(rd.Value)}}}
	if val.Metric == nil {
		val.Metric = map[string]string{}
	}
	if rd.Baseline != nil {
		val.Values = append([]promSample{{at - 60, fmtFloat(*rd.Baseline)}}, val.Values...)
	}
	out := []promSeries{val}
	if rd.Limit > 0 {
		lim := maps.Clone(val.Metric)
		lim["reading"] = "limit"
		out = append(out, promSeries{Metric: lim, Values: []promSample{{at, fmtFloat(rd.Limit)}}})
	}
	return out
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// promTime parses the API's unix-seconds time, falling back to def.
func promTime(s string, def time.Time) time.Time {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return def
	}
	return time.UnixMilli(int64(f * 1000)).UTC()
}

func writeProm(w http.ResponseWriter, data any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
}
