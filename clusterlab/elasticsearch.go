package clusterlab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Doc is one log document, its fields as Filebeat writes them (nested
// objects: {"log": {"level": "error"}}).
type Doc map[string]any

// ESServer is a running fake Elasticsearch.
type ESServer struct {
	URL      string
	Searches atomic.Int64
}

// esError writes Elasticsearch's error object.
func esError(w http.ResponseWriter, code int, typ, reason string, extra map[string]any) {
	cause := map[string]any{"type": typ, "reason": reason}
	for k, v := range extra {
		cause[k] = v
	}
	e := map[string]any{"root_cause": []any{cause}}
	for k, v := range cause {
		e[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="security" charset="UTF-8"`)
	}
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e, "status": code})
}

// Elasticsearch starts an Elasticsearch 8 with security on (basic auth as
// user:password) holding indices of documents.
func Elasticsearch(t testing.TB, user, password string, indices map[string][]Doc) *ESServer {
	t.Helper()
	es := &ESServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			esError(w, http.StatusUnauthorized, "security_exception", "missing authentication credentials for REST request ["+r.URL.Path+"]",
				map[string]any{"header": map[string]string{"WWW-Authenticate": `Basic realm="security" charset="UTF-8"`}})
			return
		}
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		if r.URL.Path == "/" && r.Method == http.MethodGet {
			writeJSON(w, map[string]any{"name": "es-0", "cluster_name": "logs", "cluster_uuid": "Xq1H5HnSQ3y2c4p0Z6u2Dw",
				"version": map[string]any{"number": "8.13.4", "build_flavor": "default", "lucene_version": "9.10.0"}, "tagline": "You Know, for Search"})
			return
		}
		target, ok := strings.CutSuffix(r.URL.Path, "/_search")
		if !ok || (r.Method != http.MethodPost && r.Method != http.MethodGet) {
			esError(w, http.StatusMethodNotAllowed, "method_not_allowed", "Incorrect HTTP method for uri ["+r.URL.Path+"] and method ["+r.Method+"]", nil)
			return
		}
		es.Searches.Add(1)
		var docs []Doc
		for _, pat := range strings.Split(strings.TrimPrefix(target, "/"), ",") {
			matched := false
			for name, ds := range indices {
				if ok, _ := path.Match(pat, name); ok {
					matched = true
					docs = append(docs, ds...)
				}
			}
			if !matched && !strings.Contains(pat, "*") {
				esError(w, http.StatusNotFound, "index_not_found_exception", "no such index ["+pat+"]",
					map[string]any{"resource.type": "index_or_alias", "resource.id": pat, "index_uuid": "_na_", "index": pat})
				return
			}
		}
		var body struct {
			Size  *int             `json:"size"`
			Sort  []map[string]any `json:"sort"`
			Query map[string]any   `json:"query"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			esError(w, http.StatusBadRequest, "x_content_parse_exception", "[1:1] "+err.Error(), nil)
			return
		}
		var hits []Doc
		for _, d := range docs {
			ok, err := matches(body.Query, d)
			if err != nil {
				esError(w, http.StatusBadRequest, "parsing_exception", err.Error(), map[string]any{"line": 1, "col": 1})
				return
			}
			if ok {
				hits = append(hits, d)
			}
		}
		total := len(hits)
		for _, s := range body.Sort {
			for f, clause := range s {
				desc := fmt.Sprint(clause.(map[string]any)["order"]) == "desc"
				sort.SliceStable(hits, func(i, j int) bool {
					a, b := fmt.Sprint(lookup(hits[i], f)), fmt.Sprint(lookup(hits[j], f))
					return (a < b) != desc
				})
			}
		}
		size := 10
		if body.Size != nil {
			size = *body.Size
		}
		if len(hits) > size {
			hits = hits[:size]
		}
		out := []any{}
		for i, h := range hits {
			out = append(out, map[string]any{"_index": "logs-checkout-2026.11", "_id": fmt.Sprintf("doc-%d", i), "_score": nil, "_source": h,
				"sort": []any{lookup(h, "@timestamp")}})
		}
		writeJSON(w, map[string]any{"took": 3, "timed_out": false,
			"_shards": map[string]int{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
			"hits":    map[string]any{"total": map[string]any{"value": total, "relation": "eq"}, "max_score": nil, "hits": out}})
	}))
	t.Cleanup(srv.Close)
	es.URL = srv.URL
	return es
}

// lookup reads a dotted field of a document.
func lookup(d map[string]any, field string) any {
	if v, ok := d[field]; ok {
		return v
	}
	head, rest, ok := strings.Cut(field, ".")
	if !ok {
		return nil
	}
	if sub, ok := d[head].(map[string]any); ok {
		return lookup(sub, rest)
	}
	if sub, ok := d[head].(Doc); ok {
		return lookup(sub, rest)
	}
	return nil
}

// matches evaluates the query DSL clauses Causeway sends: bool, term,
// terms, range (on timestamps), match and exists.
func matches(q map[string]any, d Doc) (bool, error) {
	if len(q) == 0 {
		return true, nil
	}
	for typ, raw := range q {
		clause, _ := raw.(map[string]any)
		switch typ {
		case "bool":
			for _, occ := range []string{"filter", "must"} {
				for _, c := range clauses(clause[occ]) {
					if ok, err := matches(c, d); err != nil || !ok {
						return false, err
					}
				}
			}
			for _, c := range clauses(clause["must_not"]) {
				if ok, err := matches(c, d); err != nil || ok {
					return false, err
				}
			}
			should := clauses(clause["should"])
			min := 0
			if v, ok := clause["minimum_should_match"].(float64); ok {
				min = int(v)
			}
			n := 0
			for _, c := range should {
				ok, err := matches(c, d)
				if err != nil {
					return false, err
				}
				if ok {
					n++
				}
			}
			if n < min {
				return false, nil
			}
		case "term":
			for f, v := range clause {
				if fmt.Sprint(lookup(d, f)) != fmt.Sprint(v) {
					return false, nil
				}
			}
		case "terms":
			for f, vs := range clause {
				got, found := fmt.Sprint(lookup(d, f)), false
				for _, v := range vs.([]any) {
					found = found || got == fmt.Sprint(v)
				}
				if !found {
					return false, nil
				}
			}
		case "range":
			for f, b := range clause {
				at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(lookup(d, f)))
				if err != nil {
					return false, nil
				}
				bounds := b.(map[string]any)
				if s, ok := bounds["gte"].(string); ok {
					if t, err := time.Parse(time.RFC3339, s); err != nil || at.Before(t) {
						return false, err
					}
				}
				if s, ok := bounds["lte"].(string); ok {
					if t, err := time.Parse(time.RFC3339, s); err != nil || at.After(t) {
						return false, err
					}
				}
			}
		case "match":
			for f, v := range clause {
				words := strings.Fields(strings.ToLower(fmt.Sprint(lookup(d, f))))
				found := false
				for _, w := range strings.Fields(strings.ToLower(fmt.Sprint(v))) {
					for _, dw := range words {
						found = found || strings.Trim(dw, ".,:;()[]\"'") == w
					}
				}
				if !found {
					return false, nil
				}
			}
		case "exists":
			if lookup(d, fmt.Sprint(clause["field"])) == nil {
				return false, nil
			}
		default:
			return false, fmt.Errorf("unknown query [%s]", typ)
		}
	}
	return true, nil
}

// clauses reads an occurrence of a bool query: one clause or a list.
func clauses(v any) []map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		var out []map[string]any
		for _, c := range x {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
