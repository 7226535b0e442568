package datasources

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
)

// TypeElasticsearch is Elasticsearch or OpenSearch, queried with the _search
// API.
const TypeElasticsearch = "elasticsearch"

// Elasticsearch defaults follow the Elastic Common Schema, which Filebeat,
// Elastic Agent and the OpenTelemetry exporters write.
const (
	defaultESIndex          = "logs-*"
	defaultESServiceField   = "service.name"
	defaultESTimestampField = "@timestamp"
	defaultESMessageField   = "message"
	defaultESLevelField     = "log.level"
	esNamespaceField        = "kubernetes.namespace"
	esHits                  = 200
	esMessages              = 20
)

// esSettings are the settings of an elasticsearch source; the field
// settings name fields of the log documents.
var esSettings = []string{"index", "serviceField", "timestampField", "messageField", "levelField"}

var esIndexRe = regexp.MustCompile(`^[a-z0-9*][a-z0-9_.*,:-]{0,254}$`)
var esFieldRe = regexp.MustCompile(`^[A-Za-z_@][A-Za-z0-9_.@-]{0,127}$`)

func init() {
	register(kind{
		name:        TypeElasticsearch,
		urlRequired: true,
		prepare: func(c *reach, s *Spec) error {
			if err := c.checkHTTPURL(context.Background(), s.URL); err != nil {
				return err
			}
			if err := onlySettings(s.Settings, esSettings...); err != nil {
				return err
			}
			for _, k := range esSettings {
				v, ok := s.Settings[k]
				if !ok {
					continue
				}
				str, isString := v.(string)
				re := esFieldRe
				if k == "index" {
					re = esIndexRe
				}
				if !isString || !re.MatchString(str) || strings.Contains(str, "..") {
					return fieldErr("settings."+k, "must be an index pattern (index) or a field name")
				}
			}
			s.URL = strings.TrimRight(s.URL, "/")
			return nil
		},
		plan: planElasticsearch,
		open: func(c *reach, cfg Config) (Client, error) {
			return &elasticsearch{api: apiCall{client: c.http, auth: cfg.Auth, explain: explainES}, base: strings.TrimRight(cfg.URL, "/"), settings: cfg.Settings}, nil
		},
	})
}

func setting(s map[string]any, key, def string) string {
	if v, ok := s[key].(string); ok && v != "" {
		return v
	}
	return def
}

// planElasticsearch writes the one search of the service's error documents
// in the window: the request exactly as sent, so evidence can cite it.
func planElasticsearch(s Source, sc Scope, roles []string) ([]Query, []string) {
	if sc.Service == "" {
		return nil, []string{fmt.Sprintf("elasticsearch source %q not queried: the alert names no service to scope its queries to", s.Name)}
	}
	var qs []Query
	for _, e := range entriesFor(TypeElasticsearch, roles) {
		qs = append(qs, Query{Key: queryKey(s.ID, e.ID, ""), DataSourceID: s.ID, Source: s.Name, Type: s.Type, Entry: e.ID,
			Text: esSearch(s.Settings, sc), Roles: e.roles, Start: sc.Start, End: sc.End})
	}
	return qs, nil
}

// esSearch is "POST /<index>/_search <body>": the service's documents in the
// window whose level is an error level or whose message says so, earliest
// first. A namespace the alert names narrows it to documents of that
// namespace or without one.
func esSearch(settings map[string]any, sc Scope) string {
	ts := setting(settings, "timestampField", defaultESTimestampField)
	msg := setting(settings, "messageField", defaultESMessageField)
	level := setting(settings, "levelField", defaultESLevelField)
	filter := []any{
		map[string]any{"range": map[string]any{ts: map[string]any{"gte": sc.Start.Format(time.RFC3339), "lte": sc.End.Format(time.RFC3339), "format": "strict_date_optional_time"}}},
		map[string]any{"term": map[string]any{setting(settings, "serviceField", defaultESServiceField): sc.Service}},
	}
	if ns := sc.Labels["namespace"]; ns != "" {
		filter = append(filter, map[string]any{"bool": map[string]any{"minimum_should_match": 1, "should": []any{
			map[string]any{"term": map[string]any{esNamespaceField: ns}},
			map[string]any{"bool": map[string]any{"must_not": map[string]any{"exists": map[string]any{"field": esNamespaceField}}}},
		}}})
	}
	body := map[string]any{
		"size": esHits, "track_total_hits": true,
		"sort":    []any{map[string]any{ts: map[string]any{"order": "asc"}}},
		"_source": []string{ts, msg, level},
		"query": map[string]any{"bool": map[string]any{
			"filter": filter,
			"should": []any{
				map[string]any{"terms": map[string]any{level: []string{"error", "ERROR", "Error", "fatal", "FATAL", "critical", "CRITICAL", "panic"}}},
				map[string]any{"match": map[string]any{msg: "error exception fatal panic"}},
			},
			"minimum_should_match": 1,
		}},
	}
	b, _ := json.Marshal(body)
	return "POST /" + setting(settings, "index", defaultESIndex) + "/_search " + string(b)
}

// elasticsearch queries the Elasticsearch (or OpenSearch) REST API.
type elasticsearch struct {
	api      apiCall
	base     string
	settings map[string]any
}

// Test reads the root endpoint, which names the product and its version.
func (e *elasticsearch) Test(ctx context.Context) (string, error) {
	raw, err := e.api.do(ctx, http.MethodGet, e.base+"/", "", nil)
	if err != nil {
		return "", err
	}
	var info struct {
		Version struct {
			Number       string `json:"number"`
			Distribution string `json:"distribution"`
		} `json:"version"`
	}
	if err := json.Unmarshal(raw, &info); err != nil || info.Version.Number == "" {
		return "", fmt.Errorf("the answer is not Elasticsearch API JSON")
	}
	product := "Elasticsearch"
	if info.Version.Distribution == "opensearch" {
		product = "OpenSearch"
	}
	return product + " " + info.Version.Number + " answered", nil
}

var esPathRe = regexp.MustCompile(`^POST (/[a-z0-9*][a-z0-9_.*,:-]*/_search) (\{.*\})$`)

// Run sends the planned search. Only a _search of the source's index runs:
// the API is read-only there.
func (e *elasticsearch) Run(ctx context.Context, q Query) (Result, error) {
	pe, ok := entry(TypeElasticsearch, q.Entry)
	if !ok {
		return Result{}, fmt.Errorf("%w: no elasticsearch plan entry %q", ErrBadQuery, q.Entry)
	}
	m := esPathRe.FindStringSubmatch(q.Text)
	if m == nil {
		return Result{}, fmt.Errorf("%w: not a _search request", ErrBadQuery)
	}
	raw, err := e.api.do(ctx, http.MethodPost, e.base+m[1], "application/json", strings.NewReader(m[2]))
	if err != nil {
		return Result{}, err
	}
	var resp struct {
		TimedOut bool `json:"timed_out"`
		Hits     struct {
			Total json.RawMessage `json:"total"`
			Hits  []struct {
				Source map[string]any `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return Result{}, fmt.Errorf("the answer is not a _search response: %v", err)
	}
	total := esTotal(resp.Hits.Total, len(resp.Hits.Hits))
	if total == 0 {
		return Result{Note: "no error documents in the window"}, nil
	}
	ts := setting(e.settings, "timestampField", defaultESTimestampField)
	msgF := setting(e.settings, "messageField", defaultESMessageField)
	levelF := setting(e.settings, "levelField", defaultESLevelField)
	type group struct {
		first time.Time
		level string
		text  string
		n     int
	}
	groups := map[string]*group{}
	var first time.Time
	for _, h := range resp.Hits.Hits {
		at, ok := parseTime(fmt.Sprint(field(h.Source, ts)))
		msg := oneLine(fmt.Sprint(field(h.Source, msgF)))
		if !ok || msg == "" || msg == "<nil>" {
			continue
		}
		at = at.UTC()
		if first.IsZero() || at.Before(first) {
			first = at
		}
		key := messageShape(msg)
		g := groups[key]
		if g == nil {
			g = &group{first: at, text: msg}
			if lv := field(h.Source, levelF); lv != nil {
				g.level = fmt.Sprint(lv)
			}
			groups[key] = g
		}
		g.n++
		if at.Before(g.first) {
			g.first, g.text = at, msg
		}
	}
	list := make([]*group, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	// The most frequent messages, then shown in the order they first
	// appeared.
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].first.Before(list[j].first)
	})
	if len(list) > esMessages {
		list = list[:esMessages]
	}
	lines := make([]LogLine, len(list))
	for i, g := range list {
		lines[i] = LogLine{At: g.first, Origin: fmt.Sprintf("%s x%d", firstNonEmpty(g.level, "error"), g.n), Text: g.text}
	}
	r := analyzer.Reading{Signal: pe.Signal, Value: float64(total), Unit: pe.Unit, At: first}
	r.Render(pe.What)
	res := Result{Readings: []analyzer.Reading{r}, Text: r.Line + "\n" + renderLogLines(lines, esMessages)}
	if resp.TimedOut {
		res.Note = "the search timed out on some shards; counts are partial"
	}
	return res, nil
}

// esTotal reads hits.total, an object {value, relation} since Elasticsearch
// 7 and OpenSearch, a number before.
func esTotal(raw json.RawMessage, fallback int) int {
	var obj struct {
		Value int `json:"value"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Value > 0 {
		return obj.Value
	}
	var n int
	if json.Unmarshal(raw, &n) == nil && n > 0 {
		return n
	}
	return fallback
}

// field reads a dotted field from a document's _source, stored either flat
// ("log.level": …) or nested ({"log": {"level": …}}).
func field(doc map[string]any, path string) any {
	if v, ok := doc[path]; ok {
		return v
	}
	head, rest, ok := strings.Cut(path, ".")
	if !ok {
		return nil
	}
	for {
		if sub, isMap := doc[head].(map[string]any); isMap {
			if v := field(sub, rest); v != nil {
				return v
			}
		}
		h2, r2, more := strings.Cut(rest, ".")
		if !more {
			return nil
		}
		head, rest = head+"."+h2, r2
	}
}

// shapeRe finds the parts of a message that vary between occurrences of the
// same error: numbers, hex identifiers, UUIDs, quoted values.
var shapeRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}|0x[0-9a-fA-F]+|\b[0-9a-f]{12,}\b|\d+|"[^"]*"|'[^']*'`)

// messageShape groups messages that differ only in such values.
func messageShape(msg string) string { return shapeRe.ReplaceAllString(msg, "#") }

// explainES is Elasticsearch's error object: "type: reason" of the error
// (index_not_found_exception: no such index [logs-x]).
func explainES(_ int, body []byte) string {
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &obj) != nil || len(obj.Error) == 0 {
		return string(body)
	}
	var e struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(obj.Error, &e) == nil && e.Type != "" {
		return e.Type + ": " + e.Reason
	}
	var s string
	if json.Unmarshal(obj.Error, &s) == nil {
		return s
	}
	return string(obj.Error)
}
