// Package llm runs Causeway's specialist agents against an OpenAI-compatible
// chat-completions endpoint.
//
// Each agent is one call (plus at most one repair call when the reply breaks
// the output contract). The client returns analyzer.AgentReport, so LLM
// findings go through exactly the same evidence rules in analyzer.Synthesize as
// the offline analyzer's. The client never retries on its own: Temporal owns
// retries, and the typed errors here (APIError, ErrMalformedOutput, ErrRefused,
// ErrInvalidConfig, Retryable) tell the activity which failures are worth it.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/causeway/causeway/analyzer"
)

// Defaults applied by New when the Config leaves them zero.
const (
	// DefaultTimeout bounds one HTTP call; a full agent answer from a hosted
	// model rarely takes longer, and a hung endpoint must not hold the activity
	// until its own deadline.
	DefaultTimeout = 90 * time.Second
	// DefaultMaxTokens is enough for the at most 16 short findings the
	// contract allows while capping the cost of a runaway reply.
	DefaultMaxTokens = 1500
)

// Config selects the endpoint and the limits of each call. Any
// OpenAI-compatible server works (OpenAI, Azure-style proxies, vLLM, Ollama).
type Config struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1; /chat/completions is appended.
	BaseURL string
	// APIKey is sent as a Bearer token; it may be empty for local servers. It
	// never appears in errors.
	APIKey string
	// Model is the model name sent with every request.
	Model string
	// HTTPClient lets the caller supply its transport (proxies, egress policy,
	// instrumentation); nil means a plain client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds each HTTP call (the repair is a second call with its own
	// budget); zero means DefaultTimeout.
	Timeout time.Duration
	// MaxTokens bounds each reply; zero means DefaultMaxTokens. For reasoning
	// models it is sent as max_completion_tokens and includes reasoning tokens.
	MaxTokens int
}

// Client runs specialist agents against one endpoint and model. It is safe for
// concurrent use, so one Client serves all parallel agents of a worker.
type Client struct {
	oa        *openai.Client
	model     string
	apiKey    string
	timeout   time.Duration
	maxTokens int
	// cfgErr is reported by every call: New cannot fail, so a bad
	// configuration surfaces as a non-retryable error where it is used.
	cfgErr error
}

// Usage is the token count of an agent run, summed over every call it made
// (including a repair), so the worker can export LLM token metrics and
// attribute cost.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
}

func (u *Usage) add(o openai.Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
}

// New builds a client. It does not contact the endpoint; configuration
// problems (missing base URL or model, an unparsable URL) are reported as
// ErrInvalidConfig by Investigate so that they fail the agent non-retryably.
func New(c Config) *Client {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxTokens := c.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: timeout}
	}
	base := strings.TrimRight(strings.TrimSpace(c.BaseURL), "/")
	oc := openai.DefaultConfig(c.APIKey)
	oc.BaseURL = base
	oc.HTTPClient = &doer{hc: hc}
	cl := &Client{
		oa:        openai.NewClientWithConfig(oc),
		model:     strings.TrimSpace(c.Model),
		apiKey:    c.APIKey,
		timeout:   timeout,
		maxTokens: maxTokens,
	}
	switch u, err := url.Parse(base); {
	case base == "":
		cl.cfgErr = fmt.Errorf("%w: base URL is empty", ErrInvalidConfig)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		cl.cfgErr = fmt.Errorf("%w: base URL must be an absolute http(s) URL", ErrInvalidConfig)
	case u.User != nil:
		// Credentials belong in APIKey, where they are kept out of errors.
		cl.cfgErr = fmt.Errorf("%w: base URL must not contain credentials", ErrInvalidConfig)
	case cl.model == "":
		cl.cfgErr = fmt.Errorf("%w: model is empty", ErrInvalidConfig)
	}
	return cl
}

// Model is the configured model name, recorded in each investigation result so
// users can tell which model produced an answer.
func (c *Client) Model() string { return c.model }

// Investigate runs the specialist agent of role over the incident: one
// chat-completions call with the role's SystemPrompt and the UserPrompt of in,
// asking for a JSON object at temperature 0. The reply is validated strictly;
// if it breaks the contract the conversation is sent back once with the
// validation errors, and a second failure is ErrMalformedOutput. Findings carry
// AgentRole = role and are not filtered by citation here: Synthesize drops and
// counts uncited ones, so the count stays visible. Usage covers every call
// made, and is returned with errors too so spent tokens are still accounted.
// The client makes no retries of its own; see Retryable.
func (c *Client) Investigate(ctx context.Context, role string, in analyzer.Input) (analyzer.AgentReport, Usage, error) {
	var usage Usage
	if c.cfgErr != nil {
		return analyzer.AgentReport{}, usage, c.cfgErr
	}
	sys := SystemPrompt(role)
	if sys == "" {
		return analyzer.AgentReport{}, usage, fmt.Errorf("%w: unknown agent role %q", ErrInvalidConfig, role)
	}
	if err := ctx.Err(); err != nil {
		return analyzer.AgentReport{}, usage, c.classify(ctx, &callState{}, err)
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: sys},
		{Role: openai.ChatMessageRoleUser, Content: UserPrompt(in.ForRole(role))},
	}
	reply, err := c.complete(ctx, msgs, nil, &usage)
	if err != nil {
		return analyzer.AgentReport{}, usage, err
	}
	rep, err := c.conclude(ctx, role, msgs, reply, &usage)
	return rep, usage, err
}

// conclude validates a final reply and, when it breaks the contract, sends
// the conversation back once with the validation errors; a second failure is
// ErrMalformedOutput.
func (c *Client) conclude(ctx context.Context, role string, msgs []openai.ChatCompletionMessage, rep reply, usage *Usage) (analyzer.AgentReport, error) {
	findings, problems := parseFindings(role, rep.content)
	if len(problems) == 0 {
		return analyzer.AgentReport{AgentRole: role, Findings: findings}, nil
	}

	// One repair: show the model its own reply and exactly what was wrong.
	assistant := rep.content
	if strings.TrimSpace(assistant) == "" {
		assistant = "(empty reply)"
	}
	msgs = append(slices.Clone(msgs),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: assistant},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: repairPrompt(problems, rep.truncated)},
	)
	rep, err := c.complete(ctx, msgs, nil, usage)
	if err != nil {
		return analyzer.AgentReport{}, err
	}
	findings, problems = parseFindings(role, rep.content)
	if len(problems) > 0 {
		return analyzer.AgentReport{}, fmt.Errorf("%w: %s", ErrMalformedOutput, strings.Join(problems, "; "))
	}
	return analyzer.AgentReport{AgentRole: role, Findings: findings}, nil
}

// repairPrompt names what was wrong and restates the contract, because models
// fix a specific complaint far more reliably than a generic "try again".
func repairPrompt(problems []string, truncated bool) string {
	var b strings.Builder
	b.WriteString("Your reply was rejected because it does not follow the output contract:\n")
	for _, p := range problems {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	if truncated {
		b.WriteString("- the reply was cut off at the token limit; report fewer findings with shorter summaries and citations\n")
	}
	b.WriteString(`
Reply again with exactly one JSON object and nothing else (no prose, no markdown, no code fences):
{"findings":[{"category":"<category id>","stance":"supports"|"refutes","strength":<number from 0 to 1>,"summary":"<one sentence>","citation":"<evidence>"}]}
"category" must be one of: ` + strings.Join(analyzer.Categories, ", ") + `.
"stance" must be "supports" or "refutes"; "strength" a number between 0 and 1; "summary" and "citation" non-empty.
"citation" is a short verbatim quote from the title, description or a context entry, or a field reference (title, description, severity, service, environment, tags.<key>, metadata.<top-level key>).
Use {"findings":[]} if your domain has nothing to report.`)
	return b.String()
}

type reply struct {
	content   string
	truncated bool
	toolCalls []openai.ToolCall
}

// complete makes exactly one HTTP call and turns its outcome into a reply or
// one of this package's errors. With tools offered the model may answer with
// tool calls instead of the JSON object, so the JSON response format is asked
// for only without them.
func (c *Client) complete(ctx context.Context, msgs []openai.ChatCompletionMessage, tools []openai.Tool, usage *Usage) (reply, error) {
	req := openai.ChatCompletionRequest{Model: c.model, Messages: msgs}
	if len(tools) > 0 {
		req.Tools = tools
	} else {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	st := &callState{}
	if reasoningModel(c.model) {
		// Reasoning models reject max_tokens and any temperature but the
		// default; they are deterministic enough without it.
		req.MaxCompletionTokens = c.maxTokens
	} else {
		// max_tokens, deprecated by OpenAI, is the one field every other
		// OpenAI-compatible server (vLLM, Ollama, LiteLLM, …) understands.
		//lint:ignore SA1019 kept for compatible servers, see above
		req.MaxTokens = c.maxTokens
		st.zeroTemperature = true
	}
	cctx, cancel := context.WithTimeout(context.WithValue(ctx, callKey{}, st), c.timeout)
	defer cancel()
	resp, err := c.oa.CreateChatCompletion(cctx, req)
	if err != nil {
		return reply{}, c.classify(ctx, st, err)
	}
	usage.add(resp.Usage)
	if len(resp.Choices) == 0 {
		// Treated as an unusable reply, which earns the one repair attempt.
		return reply{}, nil
	}
	ch := resp.Choices[0]
	if r := strings.TrimSpace(ch.Message.Refusal); r != "" {
		return reply{}, fmt.Errorf("%w: %s", ErrRefused, c.clean(r))
	}
	if ch.FinishReason == openai.FinishReasonContentFilter {
		return reply{}, fmt.Errorf("%w: the response was stopped by the content filter", ErrRefused)
	}
	return reply{content: ch.Message.Content, truncated: ch.FinishReason == openai.FinishReasonLength, toolCalls: ch.Message.ToolCalls}, nil
}

// reasoningModel mirrors the model families go-openai validates as reasoning
// models, which need max_completion_tokens and the default temperature.
func reasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// callKey carries a callState from complete to the doer through the request
// context, which keeps concurrent calls on one Client apart.
type callKey struct{}

// callState is per-call information the go-openai error types do not carry.
type callState struct {
	// zeroTemperature asks the doer to send "temperature": 0, which go-openai
	// omits because its field is tagged omitempty (zero is never sent), so
	// the server would otherwise apply its default of 1.
	zeroTemperature bool
	// retryAfter is read from the response headers, which go-openai drops
	// when it turns an error status into an error.
	retryAfter time.Duration
}

// doer sits between go-openai and the caller's http.Client; it makes exactly
// one request per call (no retries) and fills in what go-openai cannot.
type doer struct{ hc *http.Client }

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	st, _ := req.Context().Value(callKey{}).(*callState)
	if st != nil && st.zeroTemperature && req.Body != nil {
		r, err := withZeroTemperature(req)
		if err != nil {
			return nil, err
		}
		req = r
	}
	resp, err := d.hc.Do(req)
	if err == nil && st != nil && resp.StatusCode >= 400 {
		st.retryAfter = retryAfter(resp.Header, time.Now())
	}
	return resp, err
}

// withZeroTemperature returns a copy of req whose JSON body has "temperature"
// set to 0 unless it already names one.
func withZeroTemperature(req *http.Request) (*http.Request, error) {
	raw, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("llm: read request body: %w", err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("llm: request body is not a JSON object: %w", err)
	}
	if _, ok := body["temperature"]; !ok {
		body["temperature"] = json.RawMessage("0")
		if raw, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("llm: encode request body: %w", err)
		}
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	return r, nil
}
