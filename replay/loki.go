package replay

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// lokiTime is how a recorded Loki answer dates each line.
const lokiTime = "2006-01-02T15:04:05.000Z"

type lokiStream struct {
	Stream map[string]string `json:"stream"`
	Values [][2]string       `json:"values"`
}

// lokiHandler answers /loki/api/v1/query_range with the recorded answer of
// the same LogQL: the recorded log lines as streams (each line's origin as
// its pod), or the recorded count as a matrix. Times move with the asked
// window, as prometheusHandler's do.
func lokiHandler(byQuery map[string]Answer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/loki/api/v1/labels", func(w http.ResponseWriter, _ *http.Request) {
		writeProm(w, []string{})
	})
	mux.HandleFunc("/loki/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a, ok := byQuery[q.Get("query")]
		shift := lokiEnd(q.Get("end"), a.End).Sub(a.End)
		switch {
		case ok && len(a.Readings) > 0:
			series := []promSeries{}
			for _, rd := range a.Readings {
				series = append(series, seriesOf(rd, shift)...)
			}
			writeProm(w, map[string]any{"resultType": "matrix", "result": series})
		case ok:
			writeProm(w, map[string]any{"resultType": "streams", "result": logStreams(a.Text, shift)})
		default:
			writeProm(w, map[string]any{"resultType": "streams", "result": []lokiStream{}})
		}
	})
	return mux
}

// logStreams turns the recorded lines ("<time> <origin>: <text>", the
// origin optional) back into one stream per origin.
func logStreams(text string, shift time.Duration) []lokiStream {
	var out []lokiStream
	index := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if len(line) < len(lokiTime)+2 {
			continue
		}
		at, err := time.Parse(lokiTime, line[:len(lokiTime)])
		if err != nil {
			continue
		}
		origin, msg := "", line[len(lokiTime)+1:]
		if first, rest, found := strings.Cut(msg, ": "); found && !strings.Contains(first, " ") {
			origin, msg = first, rest
		}
		i, seen := index[origin]
		if !seen {
			i = len(out)
			index[origin] = i
			out = append(out, lokiStream{Stream: originLabels(origin)})
		}
		out[i].Values = append(out[i].Values, [2]string{strconv.FormatInt(at.Add(shift).UnixNano(), 10), msg})
	}
	if out == nil {
		out = []lokiStream{}
	}
	return out
}

// originLabels are labels a Loki client names origin from: the pod, or the
// label list it was rendered from.
func originLabels(origin string) map[string]string {
	if origin == "" {
		return map[string]string{}
	}
	if !strings.Contains(origin, "=") {
		return map[string]string{"pod": origin}
	}
	out := map[string]string{}
	for _, kv := range strings.Split(origin, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// lokiEnd parses the API's unix-nanoseconds time, falling back to def.
func lokiEnd(s string, def time.Time) time.Time {
	ns, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return def
	}
	return time.Unix(0, ns).UTC()
}
