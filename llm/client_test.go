package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
)

const testKey = "sk-test-SECRET-0123456789abcdef"

// recorded is one request the fake endpoint received.
type recorded struct {
	method, path, auth string
	body               map[string]any
	raw                string
}

// fake is an OpenAI-compatible chat-completions endpoint whose answers are
// scripted per request; the last script entry repeats.
type fake struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	reqs   []recorded
	script []func(w http.ResponseWriter)
}

func newFake(t *testing.T, script ...func(w http.ResponseWriter)) *fake {
	t.Helper()
	f := &fake{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, recorded{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body, raw: string(raw)})
	step := f.script[min(n, len(f.script)-1)]
	f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	step(w)
}

func (f *fake) setScript(script ...func(w http.ResponseWriter)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = script
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func (f *fake) client(t *testing.T) *Client {
	t.Helper()
	return New(Config{BaseURL: f.srv.URL + "/v1", APIKey: testKey, Model: "test-model", Timeout: 5 * time.Second})
}

// answer answers with a chat completion whose first choice carries content.
func answer(content string, prompt, completion int) func(w http.ResponseWriter) {
	return completionWith(map[string]any{"role": "assistant", "content": content}, "stop", prompt, completion)
}

func completionWith(msg map[string]any, finish string, prompt, completion int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
		})
	}
}

func apiError(status int, message string, header map[string]string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": "error", "code": nil}})
	}
}

func testInput() analyzer.Input {
	return analyzer.Input{
		Title:       "High error rate on checkout-api",
		Description: "5xx rate above 20% for 10 minutes",
		Severity:    "critical",
		Service:     "checkout-api",
		Environment: "production",
		Tags:        map[string]string{"region": "eu-west-1", "team": "payments"},
		Metadata:    map[string]any{"p95_ms": 2300.0, "pool": map[string]any{"max": 50.0}},
		Context: []string{
			"2024-05-01T10:02:11Z ERROR pq: sorry, too many clients already\n2024-05-01T10:02:12Z ERROR pool exhausted",
			"deploys: none in the last 24h",
		},
	}
}

const goodFindings = `{"findings":[
 {"category":"db_connection_exhaustion","stance":"supports","strength":0.9,"summary":"Postgres rejects new clients.","citation":"pq: sorry, too many clients already"},
 {"category":"bad_deployment","stance":"refutes","strength":0.6,"summary":"Nothing was deployed.","citation":"deploys: none in the last 24h"},
 {"category":"cpu_saturation","stance":"supports","strength":0.2,"summary":"An uncited claim stays for synthesis to drop.","citation":"CPU at 99%"}
]}`

func TestInvestigateSuccess(t *testing.T) {
	f := newFake(t, answer(goodFindings, 1200, 150))
	rep, usage, err := f.client(t).Investigate(context.Background(), analyzer.RoleDatabase, testInput())
	if err != nil {
		t.Fatalf("Investigate: %v", err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	r := reqs[0]
	if r.auth != "Bearer "+testKey {
		t.Errorf("Authorization = %q", r.auth)
	}
	if r.body["model"] != "test-model" {
		t.Errorf("model = %v", r.body["model"])
	}
	if temp, ok := r.body["temperature"]; !ok || temp != 0.0 {
		t.Errorf("temperature = %v (present %v), want 0", temp, ok)
	}
	if rf, _ := r.body["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("response_format = %v", r.body["response_format"])
	}
	if r.body["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("max_tokens = %v", r.body["max_tokens"])
	}
	msgs, _ := r.body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %d, want 2", len(msgs))
	}
	sys, _ := msgs[0].(map[string]any)
	usr, _ := msgs[1].(map[string]any)
	if sys["role"] != "system" || sys["content"] != SystemPrompt(analyzer.RoleDatabase) {
		t.Errorf("system message is not the database prompt: %v", sys["role"])
	}
	if usr["role"] != "user" || usr["content"] != UserPrompt(testInput()) {
		t.Errorf("user message is not UserPrompt(input)")
	}

	if rep.AgentRole != analyzer.RoleDatabase || len(rep.Findings) != 3 {
		t.Fatalf("report = %+v", rep)
	}
	for _, fd := range rep.Findings {
		if fd.AgentRole != analyzer.RoleDatabase {
			t.Errorf("finding role = %q", fd.AgentRole)
		}
	}
	want := analyzer.Finding{AgentRole: "database", Category: "db_connection_exhaustion", Stance: "supports", Strength: 0.9,
		Summary: "Postgres rejects new clients.", Citation: "pq: sorry, too many clients already"}
	if rep.Findings[0] != want {
		t.Errorf("finding[0] = %+v, want %+v", rep.Findings[0], want)
	}
	if usage != (Usage{PromptTokens: 1200, CompletionTokens: 150, TotalTokens: 1350}) {
		t.Errorf("usage = %+v", usage)
	}

	// The evidence rules apply downstream: the uncited finding is dropped and counted there.
	res := analyzer.Synthesize(testInput(), []analyzer.AgentReport{rep})
	if res.Dropped != 1 {
		t.Errorf("Synthesize dropped %d, want 1", res.Dropped)
	}
}

func TestInvestigateEmptyFindingsIsValid(t *testing.T) {
	f := newFake(t, answer(`{"findings":[]}`, 10, 5))
	rep, _, err := f.client(t).Investigate(context.Background(), analyzer.RoleNetwork, testInput())
	if err != nil {
		t.Fatalf("Investigate: %v", err)
	}
	if rep.AgentRole != analyzer.RoleNetwork || rep.Findings == nil || len(rep.Findings) != 0 {
		t.Errorf("report = %+v", rep)
	}
}

func TestRateLimitedNoHiddenRetry(t *testing.T) {
	f := newFake(t, apiError(http.StatusTooManyRequests, "Rate limit reached", map[string]string{"Retry-After": "2"}))
	c := f.client(t)
	_, _, err := c.Investigate(context.Background(), analyzer.RoleLogs, testInput())
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v (%T), want *APIError", err, err)
	}
	if ae.StatusCode != 429 || ae.RetryAfter != 2*time.Second || !strings.Contains(ae.Message, "Rate limit reached") {
		t.Errorf("APIError = %+v", ae)
	}
	if !ae.Retryable() || !Retryable(err) {
		t.Error("429 must be retryable")
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("client made %d requests, want exactly 1 (no hidden retries)", n)
	}

	// The caller (Temporal) retries; the same client then succeeds.
	f.setScript(answer(goodFindings, 10, 10))
	rep, _, err := c.Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if err != nil || len(rep.Findings) != 3 {
		t.Fatalf("second call: %v, %+v", err, rep)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

func TestHTTPStatusRetryability(t *testing.T) {
	cases := []struct {
		status    int
		retryable bool
	}{
		{500, true}, {502, true}, {503, true}, {408, true}, {409, true}, {425, true},
		{400, false}, {401, false}, {403, false}, {404, false}, {422, false},
	}
	for _, tc := range cases {
		// The endpoint echoes the key back, as a misbehaving proxy might.
		f := newFake(t, apiError(tc.status, "failure for key "+testKey, nil))
		_, _, err := f.client(t).Investigate(context.Background(), analyzer.RoleMetrics, testInput())
		var ae *APIError
		if !errors.As(err, &ae) || ae.StatusCode != tc.status {
			t.Fatalf("status %d: err = %v", tc.status, err)
		}
		if Retryable(err) != tc.retryable || ae.Retryable() != tc.retryable {
			t.Errorf("status %d: Retryable = %v, want %v", tc.status, Retryable(err), tc.retryable)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(ae.Message, testKey) {
			t.Errorf("status %d: API key leaked into error: %v", tc.status, err)
		}
		if n := len(f.requests()); n != 1 {
			t.Errorf("status %d: requests = %d, want 1", tc.status, n)
		}
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>upstream down "+testKey+"</html>")
	})
	_, _, err := f.client(t).Investigate(context.Background(), analyzer.RoleMetrics, testInput())
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 502 || !Retryable(err) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(ae.Message, "upstream down") || strings.Contains(err.Error(), testKey) {
		t.Errorf("message = %q", ae.Message)
	}
}

func TestRepairThenSuccess(t *testing.T) {
	f := newFake(t,
		answer(`Sure! Here are my findings: {"findings": [`, 100, 20),
		answer(goodFindings, 300, 80),
	)
	rep, usage, err := f.client(t).Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if err != nil {
		t.Fatalf("Investigate: %v", err)
	}
	if len(rep.Findings) != 3 || rep.Findings[0].AgentRole != analyzer.RoleLogs {
		t.Errorf("report = %+v", rep)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	msgs, _ := reqs[1].body["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("repair messages = %d, want 4", len(msgs))
	}
	asst, _ := msgs[2].(map[string]any)
	fix, _ := msgs[3].(map[string]any)
	if asst["role"] != "assistant" || asst["content"] != `Sure! Here are my findings: {"findings": [` {
		t.Errorf("assistant turn = %v", asst)
	}
	text, _ := fix["content"].(string)
	if fix["role"] != "user" || !strings.Contains(text, "is not a JSON object") || !strings.Contains(text, `"findings"`) {
		t.Errorf("repair message lacks the validation error or the contract: %q", text)
	}
	if temp, ok := reqs[1].body["temperature"]; !ok || temp != 0.0 {
		t.Errorf("repair temperature = %v", temp)
	}
	if usage != (Usage{PromptTokens: 400, CompletionTokens: 100, TotalTokens: 500}) {
		t.Errorf("usage = %+v, want the sum of both calls", usage)
	}
}

func TestMalformedTwice(t *testing.T) {
	f := newFake(t, answer(`not json at all`, 50, 5))
	rep, usage, err := f.client(t).Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if !errors.Is(err, ErrMalformedOutput) {
		t.Fatalf("err = %v, want ErrMalformedOutput", err)
	}
	if Retryable(err) {
		t.Error("ErrMalformedOutput must not be retryable")
	}
	if len(rep.Findings) != 0 {
		t.Errorf("report = %+v", rep)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("requests = %d, want exactly 2", n)
	}
	if usage.TotalTokens != 110 {
		t.Errorf("usage = %+v", usage)
	}
}

func TestInvalidFindingsAreMalformed(t *testing.T) {
	cases := map[string]struct {
		finding string
		errText string
	}{
		"unknown category": {`{"category":"cosmic_rays","stance":"supports","strength":0.5,"summary":"s","citation":"title"}`, `category "cosmic_rays"`},
		"strength 1.5":     {`{"category":"disk_full","stance":"supports","strength":1.5,"summary":"s","citation":"title"}`, "strength 1.5 is outside 0..1"},
		"empty citation":   {`{"category":"disk_full","stance":"supports","strength":0.5,"summary":"s","citation":"  "}`, `"citation" is empty`},
		"bad stance":       {`{"category":"disk_full","stance":"maybe","strength":0.5,"summary":"s","citation":"title"}`, `stance "maybe"`},
		"empty summary":    {`{"category":"disk_full","stance":"refutes","strength":0.5,"summary":"","citation":"title"}`, `"summary" is empty`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			bad := `{"findings":[` + tc.finding + `]}`
			f := newFake(t, answer(bad, 1, 1), answer(goodFindings, 1, 1))
			rep, _, err := f.client(t).Investigate(context.Background(), analyzer.RoleInfrastructure, testInput())
			if err != nil || len(rep.Findings) != 3 {
				t.Fatalf("repair should succeed: %v %+v", err, rep)
			}
			reqs := f.requests()
			if len(reqs) != 2 {
				t.Fatalf("requests = %d, want 2 (invalid finding must trigger the repair)", len(reqs))
			}
			if !strings.Contains(reqs[1].raw, jsonEscape(tc.errText)) {
				t.Errorf("repair request does not name %q", tc.errText)
			}

			f2 := newFake(t, answer(bad, 1, 1))
			if _, _, err := f2.client(t).Investigate(context.Background(), analyzer.RoleInfrastructure, testInput()); !errors.Is(err, ErrMalformedOutput) {
				t.Errorf("twice invalid: err = %v", err)
			}
		})
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func TestRefusal(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter){
		"refusal message": completionWith(map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}, "stop", 10, 3),
		"content filter":  completionWith(map[string]any{"role": "assistant", "content": ""}, "content_filter", 10, 0),
	}
	t.Run("content filter as HTTP error", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter","status":400}}`)
		})
		_, _, err := f.client(t).Investigate(context.Background(), analyzer.RoleLogs, testInput())
		if !errors.Is(err, ErrRefused) || Retryable(err) {
			t.Fatalf("err = %v, want non-retryable ErrRefused", err)
		}
	})
	for name, step := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, step)
			_, usage, err := f.client(t).Investigate(context.Background(), analyzer.RoleLogs, testInput())
			if !errors.Is(err, ErrRefused) || Retryable(err) {
				t.Fatalf("err = %v, want non-retryable ErrRefused", err)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("requests = %d, want 1 (a refusal is not repaired)", n)
			}
			if usage.PromptTokens != 10 {
				t.Errorf("usage = %+v", usage)
			}
		})
	}
}

func TestContextCanceled(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter) {
		close(started)
		<-release
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, _, err := f.client(t).Investigate(ctx, analyzer.RoleLogs, testInput())
	if !errors.Is(err, context.Canceled) || Retryable(err) {
		t.Fatalf("err = %v, want non-retryable context.Canceled", err)
	}

	// Already canceled: no request at all.
	_, _, err = f.client(t).Investigate(ctx, analyzer.RoleLogs, testInput())
	if !errors.Is(err, context.Canceled) || Retryable(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestPerCallTimeoutIsRetryable(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter) { <-release })
	defer close(release)
	c := New(Config{BaseURL: f.srv.URL + "/v1", Model: "m", Timeout: 50 * time.Millisecond})
	_, _, err := c.Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if err == nil || !Retryable(err) {
		t.Fatalf("err = %v, want a retryable timeout", err)
	}
	if !strings.Contains(err.Error(), "timed out") {
		t.Errorf("err = %v", err)
	}
}

func TestCallerHTTPClientTimeoutIsRetryable(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter) { <-release })
	defer close(release)
	c := New(Config{BaseURL: f.srv.URL + "/v1", Model: "m", HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	_, _, err := c.Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if err == nil || !Retryable(err) {
		t.Fatalf("err = %v, want retryable", err)
	}
}

func TestNetworkErrorIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL + "/v1"
	srv.Close() // nothing listens there any more
	_, _, err := New(Config{BaseURL: base, APIKey: testKey, Model: "m"}).Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if err == nil || !Retryable(err) {
		t.Fatalf("err = %v, want retryable network error", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("key leaked: %v", err)
	}
}

func TestBadConfigNotRetryable(t *testing.T) {
	cases := map[string]Config{
		"no base url":      {Model: "m"},
		"relative url":     {BaseURL: "localhost:11434/v1", Model: "m"},
		"no model":         {BaseURL: "http://127.0.0.1:1/v1"},
		"credentials":      {BaseURL: "http://user:pw@127.0.0.1:1/v1", Model: "m"},
		"unsupported host": {BaseURL: "ftp://example.com/v1", Model: "m"},
	}
	for name, cfg := range cases {
		_, _, err := New(cfg).Investigate(context.Background(), analyzer.RoleLogs, testInput())
		if !errors.Is(err, ErrInvalidConfig) || Retryable(err) {
			t.Errorf("%s: err = %v, want non-retryable ErrInvalidConfig", name, err)
		}
		if strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: credentials in error: %v", name, err)
		}
	}
	f := newFake(t, answer(goodFindings, 1, 1))
	_, _, err := f.client(t).Investigate(context.Background(), "astrology", testInput())
	if !errors.Is(err, ErrInvalidConfig) || Retryable(err) {
		t.Errorf("unknown role: err = %v", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

func TestNotAChatCompletion(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>welcome to nginx</html>")
	})
	_, _, err := f.client(t).Investigate(context.Background(), analyzer.RoleLogs, testInput())
	if !errors.Is(err, ErrInvalidConfig) || Retryable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestReasoningModelParameters(t *testing.T) {
	f := newFake(t, answer(goodFindings, 1, 1))
	c := New(Config{BaseURL: f.srv.URL + "/v1", APIKey: testKey, Model: "o3-mini", MaxTokens: 4000})
	if c.Model() != "o3-mini" {
		t.Errorf("Model() = %q", c.Model())
	}
	if _, _, err := c.Investigate(context.Background(), analyzer.RoleLogs, testInput()); err != nil {
		t.Fatalf("Investigate: %v", err)
	}
	body := f.requests()[0].body
	if _, ok := body["temperature"]; ok {
		t.Errorf("reasoning model got a temperature: %v", body["temperature"])
	}
	if _, ok := body["max_tokens"]; ok || body["max_completion_tokens"] != 4000.0 {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v", body["max_tokens"], body["max_completion_tokens"])
	}
}

func TestConcurrentAgents(t *testing.T) {
	f := newFake(t, answer(goodFindings, 7, 3))
	c := f.client(t)
	var wg sync.WaitGroup
	errs := make(chan error, len(analyzer.Roles))
	for _, role := range analyzer.Roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, _, err := c.Investigate(context.Background(), role, testInput())
			if err == nil && rep.AgentRole != role {
				err = errors.New("wrong role " + rep.AgentRole)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	seen := map[string]bool{}
	for _, r := range f.requests() {
		msgs, _ := r.body["messages"].([]any)
		sys, _ := msgs[0].(map[string]any)
		seen[sys["content"].(string)] = true
	}
	if len(seen) != len(analyzer.Roles) {
		t.Errorf("distinct system prompts sent = %d, want %d", len(seen), len(analyzer.Roles))
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond},
		{http.Header{}, 0},
	}
	for _, tc := range cases {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}
