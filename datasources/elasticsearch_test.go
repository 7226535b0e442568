package datasources

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/clusterlab"
)

func esDoc(at time.Time, service, ns, level, msg string) clusterlab.Doc {
	return clusterlab.Doc{"@timestamp": at.UTC().Format(time.RFC3339Nano), "message": msg,
		"log": map[string]any{"level": level}, "service": map[string]any{"name": service},
		"kubernetes": map[string]any{"namespace": ns, "pod": map[string]any{"name": service + "-7d9f8c6b5-x2k4q"}}}
}

// TestElasticsearchGroupsTheServiceErrors runs the planned _search against an
// Elasticsearch 8 speaking its REST API: the service's error documents in the
// window, grouped by message with the first time each appeared.
func TestElasticsearchGroupsTheServiceErrors(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	first := now.Add(-8 * time.Minute)
	var docs []clusterlab.Doc
	for i := 0; i < 7; i++ {
		docs = append(docs, esDoc(first.Add(time.Duration(i)*time.Minute), "checkout", "shop", "error", "upstream payments timed out after 3000ms (attempt "+string(rune('1'+i))+")"))
	}
	docs = append(docs,
		esDoc(first.Add(90*time.Second), "checkout", "shop", "ERROR", "NullPointerException in CartService.total"),
		esDoc(first.Add(-time.Minute), "checkout", "shop", "info", "cart saved"),
		esDoc(first.Add(-3*time.Hour), "checkout", "shop", "error", "an error before the window"),
		esDoc(first, "checkout", "staging", "error", "staging error"),
		esDoc(first, "payments", "shop", "error", "payments error"))
	srv := clusterlab.Elasticsearch(t, "causeway", "es-pass-123", map[string][]clusterlab.Doc{"logs-checkout-2026.11": docs})
	c := testConnector()
	cfg, err := c.Prepare(context.Background(), Spec{Name: "es", Type: TypeElasticsearch, URL: srv.URL, Auth: &Auth{Username: "causeway", Password: "es-pass-123"}})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := c.Test(context.Background(), cfg); err != nil || msg != "Elasticsearch 8.13.4 answered" {
		t.Fatalf("test: %q %v", msg, err)
	}
	res := runPlan(t, c, cfg, alertScope(now))["error_messages"]
	r := res.Readings
	if len(r) != 1 || r[0].Value != 8 || !r[0].At.Equal(first) {
		t.Fatalf("readings: %+v", r)
	}
	lines := strings.Split(res.Text, "\n")
	want := []string{r[0].Line,
		first.Format("2006-01-02T15:04:05.000Z") + " error x7: upstream payments timed out after 3000ms (attempt 1)",
		first.Add(90*time.Second).Format("2006-01-02T15:04:05.000Z") + " ERROR x1: NullPointerException in CartService.total"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("text:\n%s\nwant:\n%s", res.Text, strings.Join(want, "\n"))
	}
}

// TestElasticsearchErrors: a missing index is index_not_found_exception (a
// bad query naming the index), a wrong password security_exception (401).
func TestElasticsearchErrors(t *testing.T) {
	now := time.Now().UTC()
	srv := clusterlab.Elasticsearch(t, "causeway", "es-pass-123", map[string][]clusterlab.Doc{"logs-a": nil})
	c := testConnector()
	cfg := Config{ID: "e", Name: "es", Type: TypeElasticsearch, URL: srv.URL, Settings: map[string]any{"index": "app-logs"}, Auth: Auth{Username: "causeway", Password: "es-pass-123"}}
	q := Plan([]Source{{ID: "e", Name: "es", Type: TypeElasticsearch, URL: srv.URL, Settings: cfg.Settings}}, alertScope(now), []string{"logs"}, 10).Queries[0]
	_, err := c.Run(context.Background(), cfg, q)
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "index_not_found_exception: no such index [app-logs]") {
		t.Fatalf("missing index: %v", err)
	}
	cfg.Auth.Password = "wrong-password"
	_, err = c.Run(context.Background(), cfg, q)
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "security_exception") || strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("wrong password: %v", err)
	}
	_, err = c.Run(context.Background(), cfg, Query{Type: TypeElasticsearch, Entry: "error_messages", Text: `DELETE /app-logs {}`})
	if !errors.Is(err, ErrBadQuery) || srv.Searches.Load() != 1 {
		t.Fatalf("a request other than _search: %v (%d searches)", err, srv.Searches.Load())
	}
}
