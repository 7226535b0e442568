package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/api"
	"github.com/causeway/causeway/delivery"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
)

type endpointBody struct {
	EndpointID string   `json:"endpointId"`
	URL        string   `json:"url"`
	Events     []string `json:"events"`
	Status     string   `json:"status"`
	Secret     string   `json:"secret"`
}

func TestWebhookEndpointsAPI(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	other := s.signup(t, "other@example.com")

	var e errorBody
	for _, bad := range []map[string]any{
		{"url": "ftp://example.com", "events": []string{"investigation.completed"}},
		{"url": "https://example.com/hook", "events": []string{}},
		{"url": "https://example.com/hook", "events": []string{"incident.created"}},
		{"events": []string{"investigation.completed"}},
	} {
		if st, _ := s.do(t, "POST", "/v1/webhook-endpoints", tk.AccessToken, bad, &e); st != 400 || e.Error != "validation_error" {
			t.Errorf("%v: %d %+v", bad, st, e)
		}
	}

	var created endpointBody
	st, _ := s.do(t, "POST", "/v1/webhook-endpoints", tk.AccessToken, map[string]any{
		"url": "https://example.com/hook", "events": []string{"remediation.failed", "investigation.completed"},
	}, &created)
	if st != 201 || created.EndpointID == "" || created.Status != "active" || len(created.Events) != 2 {
		t.Fatalf("create: %d %+v", st, created)
	}
	if !regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`).MatchString(created.Secret) {
		t.Errorf("secret %q is not whsec_ + base64 of 32 bytes", created.Secret)
	}
	var stored delivery.WebhookEndpoint
	s.app.Store.DB().Where("id = ?", created.EndpointID).Take(&stored)
	if stored.SecretEnc == "" || strings.Contains(stored.SecretEnc, strings.TrimPrefix(created.Secret, "whsec_")) {
		t.Errorf("secret not sealed at rest: %q", stored.SecretEnc)
	}

	var list struct{ Endpoints []map[string]any }
	if st, _ := s.do(t, "GET", "/v1/webhook-endpoints", tk.AccessToken, nil, &list); st != 200 || len(list.Endpoints) != 1 {
		t.Fatalf("list: %d %+v", st, list)
	}
	if _, leaked := list.Endpoints[0]["secret"]; leaked {
		t.Error("list shows the secret")
	}
	if reason, ok := list.Endpoints[0]["disabledReason"]; !ok || reason != "" {
		t.Errorf("active endpoint disabledReason %v (present %v), want empty", reason, ok)
	}
	var deliveries struct{ Deliveries []map[string]any }
	if st, _ := s.do(t, "GET", "/v1/webhook-endpoints/"+created.EndpointID+"/deliveries", tk.AccessToken, nil, &deliveries); st != 200 || deliveries.Deliveries == nil {
		t.Errorf("deliveries: %d %+v", st, deliveries)
	}
	// Another tenant sees nothing, exactly like a missing endpoint.
	for _, req := range [][2]string{{"GET", "/deliveries"}, {"DELETE", ""}} {
		if st, _ := s.do(t, req[0], "/v1/webhook-endpoints/"+created.EndpointID+req[1], other.AccessToken, nil, &e); st != 404 || e.Error != "not_found" {
			t.Errorf("other tenant %s: %d %+v", req[0], st, e)
		}
	}
	if st, _ := s.do(t, "DELETE", "/v1/webhook-endpoints/"+created.EndpointID, tk.AccessToken, nil, nil); st != 200 {
		t.Errorf("delete: %d", st)
	}
	if st, _ := s.do(t, "DELETE", "/v1/webhook-endpoints/"+created.EndpointID, tk.AccessToken, nil, &e); st != 404 {
		t.Errorf("second delete: %d", st)
	}
}

type analyticsBody struct {
	TotalIncidents    int            `json:"totalIncidents"`
	ResolvedIncidents int            `json:"resolvedIncidents"`
	MTTR              int            `json:"mttr"`
	ResolutionRate    float64        `json:"resolutionRate"`
	BySeverity        map[string]int `json:"bySeverity"`
}

func TestIncidentAnalytics(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	now := time.Now().UTC()
	day := 24 * time.Hour
	seed := []struct {
		tenant   string
		age      time.Duration
		severity string
		mttr     time.Duration // 0: open
	}{
		{tk.TenantID, 1 * day, "critical", time.Hour},
		{tk.TenantID, 3 * day, "high", 3 * time.Hour},
		{tk.TenantID, 5 * day, "medium", 0},
		{tk.TenantID, 20 * day, "low", 2 * time.Hour},
		{tk.TenantID, 60 * day, "critical", 0},
		{tk.TenantID, 100 * day, "high", time.Hour},
		{"ten_other", 1 * day, "critical", time.Minute},
	}
	for i, r := range seed {
		created := now.Add(-r.age)
		inc := models.Incident{ID: fmt.Sprintf("inc_seed%02d", i), TenantID: r.tenant, Title: "t", Description: "seeded incident",
			Severity: r.severity, Status: models.StatusOpen, Source: models.SourceManual, CreatedAt: created, UpdatedAt: created}
		if r.mttr > 0 {
			at := created.Add(r.mttr)
			inc.ResolvedAt, inc.Status = &at, models.StatusResolved
		}
		if err := s.app.Store.DB().Create(&inc).Error; err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]analyticsBody{
		"7d":  {3, 2, 7200, 2.0 / 3, map[string]int{"critical": 1, "high": 1, "medium": 1, "low": 0}},
		"30d": {4, 3, 7200, 0.75, map[string]int{"critical": 1, "high": 1, "medium": 1, "low": 1}},
		"90d": {5, 3, 7200, 0.6, map[string]int{"critical": 2, "high": 1, "medium": 1, "low": 1}},
		"":    {4, 3, 7200, 0.75, map[string]int{"critical": 1, "high": 1, "medium": 1, "low": 1}},
	}
	for period, w := range want {
		var got analyticsBody
		if st, _ := s.do(t, "GET", "/v1/analytics/incidents?period="+period, tk.AccessToken, nil, &got); st != 200 {
			t.Fatalf("%s: %d", period, st)
		}
		if got.TotalIncidents != w.TotalIncidents || got.ResolvedIncidents != w.ResolvedIncidents || got.MTTR != w.MTTR ||
			math.Abs(got.ResolutionRate-w.ResolutionRate) > 1e-9 || fmt.Sprint(got.BySeverity) != fmt.Sprint(w.BySeverity) {
			t.Errorf("period %q: got %+v, want %+v", period, got, w)
		}
	}
	// A tenant with no incidents: zeros everywhere, all four severities present.
	empty := s.signup(t, "empty@example.com")
	var raw map[string]any
	if st, _ := s.do(t, "GET", "/v1/analytics/incidents?period=7d", empty.AccessToken, nil, &raw); st != 200 {
		t.Fatalf("empty: %d", st)
	}
	sev, _ := raw["bySeverity"].(map[string]any)
	if raw["totalIncidents"] != 0.0 || raw["resolvedIncidents"] != 0.0 || raw["mttr"] != 0.0 || raw["resolutionRate"] != 0.0 || len(sev) != 4 {
		t.Errorf("empty tenant: %v", raw)
	}
	var e errorBody
	if st, _ := s.do(t, "GET", "/v1/analytics/incidents?period=1y", tk.AccessToken, nil, &e); st != 400 || e.Error != "validation_error" ||
		!strings.Contains(e.Message, "7d, 30d, 90d") {
		t.Errorf("bad period: %d %+v", st, e)
	}
}

// TestRateLimitOneOverTheBurst sends one request more than a tenant's burst,
// concurrently, and expects exactly one 429 with the rate-limit headers. The
// limit refills one request every 3 s; a try slower than that may have seen a
// refill, so it starts over with a fresh tenant (a fresh bucket) instead of
// counting wrong.
func TestRateLimitOneOverTheBurst(t *testing.T) {
	const limit = 20
	interval := time.Minute / limit
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			cfg := apiConfig(t)
			cfg.RateLimitPerMinute = limit
			if backend == "redis" {
				cfg.RedisURL = testenv.RedisURL(t)
			}
			s := startAPI(t, cfg)
			for try := 1; ; try++ {
				tk := s.signup(t, fmt.Sprintf("owner-%d@example.com", try))
				start := time.Now()
				statuses, headers := burst(t, s.URL, tk.AccessToken, limit+1)
				if took := time.Since(start); took >= interval {
					if try == 3 {
						t.Fatalf("%d tries each took longer than the %v refill interval (last %v)", try, interval, took)
					}
					continue
				}
				checkOneLimited(t, statuses, headers, limit)
				return
			}
		})
	}
}

// burst sends n GETs at once (8 in flight) and returns each status and header set.
func burst(t *testing.T, baseURL, token string, n int) ([]int, []http.Header) {
	statuses := make([]int, n)
	headers := make([]http.Header, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range statuses {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			req, _ := http.NewRequest("GET", baseURL+"/v1/analytics/incidents?period=bad", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			statuses[i], headers[i] = resp.StatusCode, resp.Header
			if resp.StatusCode == 429 {
				var e errorBody
				if json.Unmarshal(body, &e); e.Error != "rate_limited" {
					t.Errorf("429 body %s", body)
				}
			}
		}()
	}
	wg.Wait()
	return statuses, headers
}

// checkOneLimited wants exactly one 429 among the answers, every answer with the
// rate-limit headers of limit.
func checkOneLimited(t *testing.T, statuses []int, headers []http.Header, limit int) {
	t.Helper()
	want := strconv.Itoa(limit)
	limited := 0
	for i, st := range statuses {
		h := headers[i]
		if st != 429 {
			if h.Get("X-RateLimit-Limit") != want || h.Get("X-RateLimit-Remaining") == "" {
				t.Errorf("allowed request without rate-limit headers: %v", h)
			}
			continue
		}
		limited++
		if h.Get("X-RateLimit-Limit") != want || h.Get("X-RateLimit-Remaining") != "0" ||
			h.Get("X-RateLimit-Reset") == "" || h.Get("Retry-After") == "" || h.Get("X-RateLimit-Reset") != h.Get("Retry-After") {
			t.Errorf("429 headers: %v", h)
		}
	}
	if limited != 1 {
		t.Errorf("%d requests limited, want exactly 1", limited)
	}
}

func TestRateLimiterDownFailsOpenAndDegrades(t *testing.T) {
	cfg := apiConfig(t)
	cfg.RateLimitPerMinute = 1
	cfg.RedisURL = "redis://127.0.0.1:1/0"
	s := startAPI(t, cfg)
	tk := s.signup(t, "owner@example.com")
	for i := range 3 {
		if st, h := s.do(t, "GET", "/v1/users", tk.AccessToken, nil, nil); st != 200 || h.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("request %d with redis down: %d %v", i, st, h)
		}
	}
	var rep struct {
		Services map[string]map[string]any `json:"services"`
	}
	s.do(t, "GET", "/health/detailed", "", nil, &rep)
	if rep.Services["redis"]["status"] != "unhealthy" {
		t.Errorf("redis probe: %+v", rep.Services)
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	engine, ok := s.app.Router().(*gin.Engine)
	if !ok {
		t.Fatal("router is not a gin engine")
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if st, _ := s.do(t, "GET", "/openapi.json", "", nil, &doc); st != 200 || doc.OpenAPI != "3.1.0" {
		t.Fatalf("/openapi.json: %d %q", st, doc.OpenAPI)
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`:([A-Za-z0-9_]+)`)
	served := map[string]bool{}
	for _, r := range engine.Routes() {
		// The dashboard's HTML pages are not part of the JSON API.
		if r.Path == "/" || strings.HasPrefix(r.Path, "/ui/") {
			continue
		}
		path := param.ReplaceAllString(r.Path, "{$1}")
		op := strings.ToLower(r.Method)
		served[op+" "+path] = true
		if _, ok := doc.Paths[path][op]; !ok {
			t.Errorf("route %s %s is not in openapi.json", r.Method, path)
		}
	}
	var stale []string
	for path, ops := range doc.Paths {
		for op := range ops {
			if !served[op+" "+path] {
				stale = append(stale, op+" "+path)
			}
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("openapi.json describes operations no route serves: %v", stale)
	}
}

func TestMetricsExposition(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	s.do(t, "GET", "/health", "", nil, nil)
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`causeway_http_requests_total{method="GET",route="/health",status="200"}`,
		`causeway_http_request_duration_seconds_bucket{method="GET",route="/health"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
