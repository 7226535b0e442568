package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/temporalproto"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/investigation"
)

// sourcedResult is the part of GET /v1/investigation/{id} these tests read.
type sourcedResult struct {
	Status   string `json:"status"`
	Category string `json:"category"`
	Culprit  *struct {
		Kind, Name, Namespace string
	} `json:"culprit"`
	Mechanism  *string `json:"mechanism"`
	Candidates []struct {
		Category   string  `json:"category"`
		Confidence float64 `json:"confidence"`
	} `json:"candidates"`
	Confidence float64  `json:"confidence"`
	RootCause  string   `json:"rootCause"`
	Agents     []string `json:"agents"`
	Evidence   []struct {
		AgentRole string `json:"agentRole"`
		Content   string `json:"content"`
		Source    *struct {
			Kind         string `json:"kind"`
			DataSourceID string `json:"dataSourceId"`
			Type         string `json:"type"`
			Query        string `json:"query"`
		} `json:"source"`
	} `json:"evidence"`
	Coverage []struct {
		AgentRole string `json:"agentRole"`
		Status    string `json:"status"`
		Reason    string `json:"reason"`
	} `json:"coverage"`
}

// tenantWithKey signs a tenant up and gives it a webhook API key.
func (e *env) tenantWithKey(t testing.TB, name string) (token, tenantID, key string) {
	t.Helper()
	token, tenantID = e.signup(t, name)
	var k struct{ Key string }
	if st := e.call(t, "POST", "/v1/api-keys", token, map[string]string{"name": "alerts"}, &k); st != http.StatusCreated {
		t.Fatalf("create api key: %d", st)
	}
	return token, tenantID, k.Key
}

// addSource connects a data source and returns its id.
func (e *env) addSource(t testing.TB, token string, body map[string]any) string {
	t.Helper()
	var out struct {
		DataSourceID string `json:"dataSourceId"`
	}
	var e400 map[string]any
	if st := e.call(t, "POST", "/v1/datasources", token, body, &out); st != http.StatusCreated {
		e.call(t, "POST", "/v1/datasources", token, body, &e400)
		t.Fatalf("create data source: %d %v", st, e400)
	}
	return out.DataSourceID
}

// alertmanagerAlert posts what Alertmanager sends for one firing alert whose
// only text is a bland summary, and returns the incident's id.
func (e *env) alertmanagerAlert(t testing.TB, tenantID, key string, labels map[string]string, summary string, startsAt time.Time) string {
	t.Helper()
	expr := url.QueryEscape(`sum(rate(http_requests_total{service="` + labels["service"] + `",code=~"5.."}[5m])) > 1`)
	body, _ := json.Marshal(map[string]any{
		"version": "4", "status": "firing", "receiver": "causeway", "groupKey": "{}:{alertname=\"" + labels["alertname"] + "\"}",
		"externalURL": "http://alertmanager:9093",
		"alerts": []map[string]any{{
			"status": "firing", "labels": labels, "annotations": map[string]string{"summary": summary},
			"startsAt": startsAt.UTC().Format(time.RFC3339), "endsAt": "0001-01-01T00:00:00Z",
			"generatorURL": "http://prometheus:9090/graph?g0.expr=" + expr + "&g0.tab=1",
			"fingerprint":  auth.RandomToken(8),
		}},
	})
	req, _ := http.NewRequest("POST", e.URL+"/v1/webhooks/"+tenantID+"/alertmanager", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		IncidentID string `json:"incidentId"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &out) != nil || out.IncidentID == "" {
		t.Fatalf("alertmanager delivery: %d %s", resp.StatusCode, raw)
	}
	return out.IncidentID
}

// awaitSourced waits for the incident's first pass to finish.
func (e *env) awaitSourced(t *testing.T, token, incidentID string) sourcedResult {
	t.Helper()
	var out sourcedResult
	eventually(t, 2*time.Minute, "the investigation of "+incidentID, func() bool {
		out = sourcedResult{}
		return e.call(t, "GET", "/v1/investigation/"+incidentID, token, nil, &out) == http.StatusOK && out.Status != "" && out.Status != "running"
	})
	return out
}

// blandLabels are the labels of an alert that says nothing of the cause.
func blandLabels(service string) map[string]string {
	return map[string]string{"alertname": "ServiceDegraded", "service": service, "namespace": "shop", "severity": "warning"}
}

// promInstant runs a query against the real Prometheus, as a reader checking
// the evidence would, and returns the result's series labels.
func promInstant(t *testing.T, base, query string) []map[string]string {
	t.Helper()
	resp, err := http.PostForm(base+"/api/v1/query", url.Values{"query": {query}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("re-running %q: %v %s", query, err, out.Status)
	}
	var ls []map[string]string
	for _, r := range out.Data.Result {
		ls = append(ls, r.Metric)
	}
	return ls
}

var scenarioTarget = promlab.Target{Service: "checkout", Namespace: "shop", Endpoint: "https://checkout.shop.example", ConsumerGroup: "checkout-orders"}

// TestInvestigationsFromPrometheus: for each scenario a real Prometheus holds
// the service's series, an Alertmanager alert with only a bland summary
// arrives, and the pass must name the mechanism with evidence whose query,
// re-run against that Prometheus, shows the series the evidence quotes.
func TestInvestigationsFromPrometheus(t *testing.T) {
	cases := []struct {
		name   string
		series func(promlab.Target) []promlab.Series
		want   string
		metric string // a metric the decisive query reads
		quote  string // a label value the evidence quotes
	}{
		{"memory exhaustion", promlab.MemoryExhaustion, analyzer.CategoryMemoryExhaustion, "container_", "checkout-7d9f8c6b5-x2k4q"},
		{"CPU throttling", promlab.CPUThrottling, analyzer.CategoryCPUSaturation, "container_cpu_", "checkout-7d9f8c6b5-x2k4q"},
		{"inode exhaustion", promlab.InodeExhaustion, analyzer.CategoryDiskFull, "node_filesystem_files_free", "/var/lib/checkout"},
		{"certificate expired (blackbox)", promlab.CertificateExpired, analyzer.CategoryCertificateExpired, "probe_ssl_earliest_cert_expiry", "https://checkout.shop.example"},
		{"consumer lag", promlab.ConsumerLag, analyzer.CategoryQueueBacklog, "kafka_consumergroup_lag", "checkout-orders"},
	}
	e := newEnv(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prom := testenv.Prometheus(t, c.series(scenarioTarget))
			token, tenantID, key := e.tenantWithKey(t, c.name)
			dsID := e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": prom.URL})
			id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
			res := e.awaitSourced(t, token, id)
			if res.Status != "completed" || res.Category != c.want {
				t.Fatalf("got %s %s (%.2f): %s\ncoverage %+v", res.Status, res.Category, res.Confidence, res.RootCause, res.Coverage)
			}
			if res.Confidence < 0.5 {
				t.Errorf("confidence %.2f for a clear measurement", res.Confidence)
			}
			t.Logf("%s at %.2f: %s", res.Category, res.Confidence, res.RootCause)
			var decisive int
			for _, ev := range res.Evidence {
				s := ev.Source
				if s == nil || s.Kind != "datasource" || !strings.Contains(ev.Content, c.want) || !strings.Contains(s.Query, c.metric) {
					continue
				}
				if s.DataSourceID != dsID || s.Type != "prometheus" || !strings.Contains(ev.Content, c.quote) {
					t.Errorf("evidence %+v names the wrong source or quotes nothing of the scenario", ev)
				}
				// The query is the one that showed it: re-run as is, it
				// returns the series the evidence quotes.
				found := false
				for _, ls := range promInstant(t, prom.URL, s.Query) {
					for _, v := range ls {
						found = found || v == c.quote
					}
				}
				if !found {
					t.Errorf("re-running %q does not return the quoted series %s", s.Query, c.quote)
				}
				decisive++
			}
			if decisive == 0 {
				t.Fatalf("no evidence for %s from a query on %s: %+v", c.want, c.metric, res.Evidence)
			}
		})
	}
}

// TestInvestigationOfHealthyData: the data shows nothing wrong, so the answer
// stays unknown with a low confidence, and the healthy readings rule
// categories out instead of inventing one.
func TestInvestigationOfHealthyData(t *testing.T) {
	e := newEnv(t)
	prom := testenv.Prometheus(t, promlab.Healthy(scenarioTarget))
	token, tenantID, key := e.tenantWithKey(t, "healthy")
	e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": prom.URL})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	res := e.awaitSourced(t, token, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryUnknown || res.Confidence > 0.3 {
		t.Fatalf("healthy data: %s %s (%.2f) %s", res.Status, res.Category, res.Confidence, res.RootCause)
	}
	refuted := 0
	for _, ev := range res.Evidence {
		if ev.Source != nil && ev.Source.Kind == "datasource" && strings.Contains(ev.Content, "[refutes ") {
			refuted++
		}
	}
	if refuted == 0 {
		t.Fatalf("healthy readings should argue against categories: %+v", res.Evidence)
	}
}

// TestInvestigationWithASourceThatIsDown: the pass completes and the coverage
// says which source did not answer and why.
func TestInvestigationWithASourceThatIsDown(t *testing.T) {
	e := newEnv(t)
	down := "http://" + testenv.ClosedPort(t)
	token, tenantID, key := e.tenantWithKey(t, "down")
	e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": down})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-5*time.Minute))
	res := e.awaitSourced(t, token, id)
	if res.Status != "completed" {
		t.Fatalf("a source that is down failed the pass: %+v", res)
	}
	for _, c := range res.Coverage {
		if c.AgentRole == analyzer.RoleMetrics {
			if c.Status != "completed" || !strings.Contains(c.Reason, `of "prod metrics" failed`) || !strings.Contains(c.Reason, "connection refused") {
				t.Fatalf("metrics coverage does not say the source is down: %+v", c)
			}
			return
		}
	}
	t.Fatalf("no metrics coverage: %+v", res.Coverage)
}

// TestInvestigationFindsLockWaitsOnPostgreSQL: one session holds a row lock
// in an open transaction, another waits for it, and the database agent, on a
// bland alert, names the lock contention with the SQL that showed it.
func TestInvestigationFindsLockWaitsOnPostgreSQL(t *testing.T) {
	base := testenv.DatabaseURL(t)
	e := newEnv(t)
	ctx := context.Background()
	holder, waiter := testenv.PgConn(t, base), testenv.PgConn(t, base)
	tbl := "cw_orders_" + strings.ToLower(strings.NewReplacer("-", "x", "_", "y").Replace(auth.RandomToken(6)))
	if _, err := holder.Exec(ctx, "CREATE TABLE public."+tbl+" (id int primary key, qty int); INSERT INTO public."+tbl+" VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), base); err == nil {
			_, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS public."+tbl)
			c.Close(context.Background())
		}
	})
	if _, err := holder.Exec(ctx, "BEGIN; UPDATE public."+tbl+" SET qty = qty + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		_, _ = waiter.Exec(ctx, "UPDATE public."+tbl+" SET qty = qty - 1 WHERE id = 1")
		close(waited)
	}()
	t.Cleanup(func() { _, _ = holder.Exec(context.Background(), "ROLLBACK"); <-waited })
	time.Sleep(3 * time.Second)

	// trust authentication ignores the password, so it can stand for a real
	// one that must never be seen again.
	// Causeway's own database is refused to every tenant, so the tenant's
	// "orders db" is the same server at another address.
	u, _ := url.Parse(base)
	u.Host = tcpForward(t, u.Host)
	u.User = url.UserPassword(u.User.Username(), "pg-secret-"+auth.RandomToken(6))
	u.RawQuery = "sslmode=disable"
	token, tenantID, key := e.tenantWithKey(t, "orders")
	dsID := e.addSource(t, token, map[string]any{"name": "orders db", "type": "postgres", "url": u.String()})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("orders"), "orders API is degraded", time.Now().Add(-2*time.Minute))
	res := e.awaitSourced(t, token, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryDBLockContention {
		t.Fatalf("got %s %s (%.2f): %s\ncoverage %+v", res.Status, res.Category, res.Confidence, res.RootCause, res.Coverage)
	}
	found := false
	for _, ev := range res.Evidence {
		if s := ev.Source; s != nil && s.Type == "postgres" && s.DataSourceID == dsID && strings.Contains(s.Query, "pg_blocking_pids") &&
			strings.Contains(ev.Content, tbl) && strings.Contains(ev.Content, fmt.Sprint(holder.PgConn().PID())) {
			found = true
			// Re-run as is, the statement shows the waiting session.
			rows, err := holder.Query(ctx, s.Query)
			if err != nil {
				t.Fatalf("re-running the evidence's SQL: %v", err)
			}
			vals, _ := pgx.CollectRows(rows, pgx.RowToMap)
			seen := false
			for _, v := range vals {
				seen = seen || strings.Contains(fmt.Sprint(v["query"]), tbl)
			}
			if !seen {
				t.Errorf("the evidence's SQL does not show the waiting session: %v", vals)
			}
		}
	}
	if !found {
		t.Fatalf("no evidence quoting the lock wait with its SQL: %+v", res.Evidence)
	}
	if strings.Contains(e.Logs.String(), u.User.String()) {
		t.Fatal("the postgres password reached a log line")
	}
}

// TestInvestigationFindsAnExpiredCertificateByProbe: the probe source has no
// targets of its own; the alert names the endpoint (a blackbox-style
// instance label), and the probe's handshake with that local TLS server,
// whose certificate expired yesterday, answers the alert.
func TestInvestigationFindsAnExpiredCertificateByProbe(t *testing.T) {
	addr, notAfter := testenv.ExpiredTLSServer(t, "payments.internal")
	e := newEnv(t)
	token, tenantID, key := e.tenantWithKey(t, "payments")
	e.addSource(t, token, map[string]any{"name": "edge", "type": "probe"})
	labels := blandLabels("payments")
	labels["instance"] = "https://" + addr + "/health"
	id := e.alertmanagerAlert(t, tenantID, key, labels, "payments is degraded", time.Now().Add(-3*time.Minute))
	res := e.awaitSourced(t, token, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryCertificateExpired {
		t.Fatalf("got %s %s: %s", res.Status, res.Category, res.RootCause)
	}
	for _, ev := range res.Evidence {
		if s := ev.Source; s != nil && s.Type == "probe" && s.Query == "tls handshake "+addr+" (server name 127.0.0.1)" &&
			strings.Contains(ev.Content, notAfter.UTC().Format(time.RFC3339)) {
			return
		}
	}
	t.Fatalf("no evidence quoting the certificate's notAfter with its probe: %+v", res.Evidence)
}

// TestDataSourceTenantIsolationAndSecrets: one tenant's source is invisible
// to another and is never queried for the other's incidents; its credential
// appears in no response, log line or workflow history.
func TestDataSourceTenantIsolationAndSecrets(t *testing.T) {
	prom := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	secret := "bearer-" + auth.RandomToken(12)
	target, _ := url.Parse(prom.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var served atomic.Int64
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		served.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	defer guarded.Close()

	e := newEnv(t)
	tokenA, tenantA, keyA := e.tenantWithKey(t, "alpha")
	tokenB, tenantB, keyB := e.tenantWithKey(t, "beta")
	dsID := e.addSource(t, tokenA, map[string]any{"name": "prod metrics", "type": "prometheus", "url": guarded.URL,
		"auth": map[string]any{"bearerToken": secret}})

	var e404 struct{ Error string }
	for _, req := range [][2]string{{"POST", "/test"}, {"DELETE", ""}} {
		if st := e.call(t, req[0], "/v1/datasources/"+dsID+req[1], tokenB, nil, &e404); st != http.StatusNotFound || e404.Error != "not_found" {
			t.Fatalf("tenant B %s on A's source: %d %+v", req[0], st, e404)
		}
	}

	idA := e.alertmanagerAlert(t, tenantA, keyA, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	resA := e.awaitSourced(t, tokenA, idA)
	if resA.Category != analyzer.CategoryMemoryExhaustion || served.Load() == 0 {
		t.Fatalf("tenant A's pass: %s, %d queries served", resA.Category, served.Load())
	}
	before := served.Load()
	idB := e.alertmanagerAlert(t, tenantB, keyB, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	resB := e.awaitSourced(t, tokenB, idB)
	if resB.Status != "completed" || served.Load() != before {
		t.Fatalf("tenant B's pass queried A's source: %d more requests", served.Load()-before)
	}
	for _, ev := range resB.Evidence {
		if ev.Source != nil && ev.Source.Kind == "datasource" {
			t.Fatalf("tenant B's answer quotes a data source: %+v", ev)
		}
	}

	// The secret is nowhere a reader could find it.
	for _, path := range []string{"/v1/datasources", "/v1/investigation/" + idA, "/v1/incidents/" + idA} {
		var raw json.RawMessage
		e.call(t, "GET", path, tokenA, nil, &raw)
		if strings.Contains(string(raw), secret) {
			t.Fatalf("GET %s shows the credential", path)
		}
	}
	var tested json.RawMessage
	e.call(t, "POST", "/v1/datasources/"+dsID+"/test", tokenA, nil, &tested)
	if strings.Contains(string(tested), secret) || !strings.Contains(string(tested), `"ok":true`) {
		t.Fatalf("test answer: %s", tested)
	}
	if strings.Contains(e.Logs.String(), secret) {
		t.Fatal("the credential reached a log line")
	}
	ids := []string{investigation.IncidentWorkflowID(idA), investigation.InvestigationWorkflowID(idA, 1)}
	for _, role := range resA.Agents {
		ids = append(ids, investigation.AgentWorkflowID(idA, 1, role))
	}
	gathered := false
	for _, id := range ids {
		text := historyText(t, e, id)
		if strings.Contains(text, secret) {
			t.Fatalf("workflow history of %s holds the credential", id)
		}
		gathered = gathered || strings.Contains(text, investigation.NameRunDataSourceQuery)
	}
	if !gathered {
		t.Fatal("no history shows the data-source queries; the grep looked in the wrong place")
	}
	if os.Getenv("CAUSEWAY_WRITE_HISTORIES") != "" {
		e.writeHistory(t, investigation.InvestigationWorkflowID(idA, 1), "investigation-gather.json")
	}
}

// historyText is a workflow's whole history as text, every payload decoded,
// so a grep sees what Temporal stores.
func historyText(t *testing.T, e *env, workflowID string) string {
	t.Helper()
	raw, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(e.history(t, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(raw)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "data" || k == "metadata") {
					if dec, err := base64.StdEncoding.DecodeString(s); err == nil {
						b.WriteByte('\n')
						b.Write(dec)
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	return b.String()
}

// quotingLLM speaks chat-completions like a model that read its prompt: it
// records each agent's prompt and cites the first gathered line that starts
// with prefix, so the test sees what reached the model and how its citation
// is attributed.
type quotingLLM struct {
	prefix  string
	prompts atomic.Value // []string
}

func (q *quotingLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	user := ""
	if len(req.Messages) > 1 {
		user = req.Messages[len(req.Messages)-1].Content
	}
	prev, _ := q.prompts.Load().([]string)
	q.prompts.Store(append(append([]string(nil), prev...), user))
	findings := []map[string]any{}
	for _, line := range strings.Split(user, "\n") {
		if strings.HasPrefix(line, q.prefix) {
			findings = append(findings, map[string]any{"category": "memory_exhaustion", "stance": "supports", "strength": 0.9,
				"summary": "The container's working set reached its memory limit.", "citation": line})
			break
		}
	}
	content, _ := json.Marshal(map[string]any{"findings": findings})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-q", "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(content)}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
}

// TestLLMAgentsReadTheGatheredFacts: with an LLM configured, each agent's
// prompt carries the same gathered readings the offline analyzer judges, and
// a citation of one is evidence naming the query that showed it.
func TestLLMAgentsReadTheGatheredFacts(t *testing.T) {
	prom := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	llm := &quotingLLM{prefix: "memory working set: "}
	e := newLLMEnv(t, llm)
	token, tenantID, key := e.tenantWithKey(t, "llm")
	e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": prom.URL})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	res := e.awaitSourced(t, token, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryMemoryExhaustion {
		t.Fatalf("LLM path: %s %s: %s %+v", res.Status, res.Category, res.RootCause, res.Coverage)
	}
	prompts, _ := llm.prompts.Load().([]string)
	sawReading := false
	for _, p := range prompts {
		sawReading = sawReading || (strings.Contains(p, "GATHERED BY CAUSEWAY") && strings.Contains(p, "memory working set: ") && strings.Contains(p, "checkout-7d9f8c6b5-x2k4q"))
		if len(p) > 60000 {
			t.Fatalf("a prompt of %d characters exceeds the bound", len(p))
		}
	}
	if !sawReading {
		t.Fatalf("no agent prompt carried the gathered memory reading")
	}
	for _, ev := range res.Evidence {
		if ev.Source != nil && ev.Source.Type == "prometheus" && strings.Contains(ev.Source.Query, "container_memory_working_set_bytes") {
			return
		}
	}
	t.Fatalf("the model's citation of a reading is not evidence naming its query: %+v", res.Evidence)
}

// tcpForward listens on a loopback port of its own and relays every
// connection to to, until t ends; it returns the address it listens on.
func tcpForward(t *testing.T, to string) string {
	t.Helper()
	return testenv.Listen(t, func(_ context.Context, in net.Conn) {
		out, err := net.Dial("tcp", to)
		if err != nil {
			return
		}
		defer out.Close()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		_, _ = io.Copy(in, out)
	})
}
