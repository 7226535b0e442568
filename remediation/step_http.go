package remediation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/causeway/causeway/egress"
	"go.temporal.io/sdk/temporal"
)

// httpParams are the params of an http step. Idempotent declares that the
// target applies a repeated Idempotency-Key once, so an attempt whose outcome is
// unknown (a crash, a lost answer) may be sent again; without it such a step
// stops for a person to check.
type httpParams struct {
	Method       string            `json:"method"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers"`
	Body         any               `json:"body"`
	ExpectStatus int               `json:"expectStatus"`
	Idempotent   bool              `json:"idempotent"`
}

var httpMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// httpStep calls a URL, for example a feature-flag or scaling API.
type httpStep struct{}

func (httpStep) parse(p map[string]any, rendered bool) (httpParams, error) {
	var hp httpParams
	if err := decodeParams(p, &hp); err != nil {
		return hp, err
	}
	if hp.Method == "" {
		hp.Method = http.MethodPost
	}
	hp.Method = strings.ToUpper(hp.Method)
	if !httpMethods[hp.Method] {
		return hp, fmt.Errorf("params.method %q is not one of GET, HEAD, POST, PUT, PATCH, DELETE", hp.Method)
	}
	if hp.ExpectStatus != 0 && (hp.ExpectStatus < 100 || hp.ExpectStatus > 599) {
		return hp, fmt.Errorf("params.expectStatus must be an HTTP status code")
	}
	if err := checkHeaders(hp.Headers); err != nil {
		return hp, err
	}
	// A string body is sent as written, so an alert value in it could break
	// out of whatever format it is in; object bodies are encoded when sent.
	if b, ok := hp.Body.(string); ok && !rendered && templated(b) {
		return hp, fmt.Errorf("params.body: a string body is sent as written and may not hold templates; give the body as a JSON object")
	}
	return hp, checkURL("url", hp.URL, rendered)
}

func checkHeaders(h map[string]string) error {
	for k := range h {
		if strings.EqualFold(k, IdempotencyHeader) || strings.EqualFold(k, "Host") {
			return fmt.Errorf("params.headers may not set %s", k)
		}
	}
	return nil
}

func (s httpStep) check(p map[string]any, rendered bool, _ checkEnv) error {
	_, err := s.parse(p, rendered)
	return err
}

func (s httpStep) run(ctx context.Context, a *Activities, c stepCall) error {
	hp, err := s.parse(c.Params, true)
	if err != nil {
		return badParams(err)
	}
	body, err := encodeBody(hp.Body)
	if err != nil {
		return badParams(err)
	}
	status, retryAfter, err := a.callStep(ctx, stepRequest{method: hp.Method, url: hp.URL, headers: hp.Headers, body: body, call: &c})
	if err != nil {
		return err
	}
	return classifyStatus(status, hp.ExpectStatus, retryAfter)
}

func encodeBody(b any) ([]byte, error) {
	switch v := b.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(v), nil
	}
	return json.Marshal(b)
}

// maxStepRetryAfter is the longest Retry-After a step honours; a longer one is
// cut to it so a receiver cannot park a remediation for hours.
const maxStepRetryAfter = 300 * time.Second

// StepRequestTimeout bounds one step request, headers and body included. The
// worker's egress client is built with at least this timeout (see app.Worker),
// so the client never cuts a step's request shorter than the step allows;
// verification probes pass their own, shorter deadline.
const StepRequestTimeout = 2 * time.Minute

// stepRequest is one request a step sends. call is the step run it belongs to
// when the request has side effects worth recording before it leaves (nil for
// probes).
type stepRequest struct {
	method  string
	url     string
	headers map[string]string
	body    []byte
	key     string
	call    *stepCall
	// client, when set, replaces the egress client: a verification probe
	// goes out under the tenant's data-source networks.
	client *http.Client
}

// crossOriginHeaders are the headers a redirect to another origin keeps; every
// header the runbook set (credentials, tenant keys) stays with the origin it
// was written for.
var crossOriginHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Content-Length": true, "User-Agent": true, IdempotencyHeader: true,
}

// stepClient is the egress client with one more redirect rule: a redirect to
// another scheme, host or port drops every header the runbook set. Where the
// redirect may lead is still checked by the egress policy.
func stepClient(base *http.Client) *http.Client {
	c := *base
	egressCheck := base.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if egressCheck != nil {
			if err := egressCheck(req, via); err != nil {
				return err
			}
		}
		if !sameOrigin(req.URL, via[0].URL) {
			for k := range req.Header {
				if !crossOriginHeaders[http.CanonicalHeaderKey(k)] {
					req.Header.Del(k)
				}
			}
		}
		return nil
	}
	return &c
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// callStep makes one call through the egress client with the step's idempotency
// key and returns the status and any Retry-After. Transport failures come back
// classified. A request with side effects is recorded as dispatched before it
// leaves; the record is withdrawn when the request provably did not reach the
// target (it failed before it was written) or the target refused it without
// processing it (429, 503), so only an outcome nobody knows keeps it.
func (a *Activities) callStep(ctx context.Context, r stepRequest) (int, time.Duration, error) {
	base := a.Egress
	if r.client != nil {
		base = r.client
	}
	if base == nil {
		return 0, 0, temporal.NewNonRetryableApplicationError("no egress client configured", ErrTypeStepBadParams, nil)
	}
	ctx, cancel := context.WithTimeout(ctx, StepRequestTimeout)
	defer cancel()
	key := r.key
	if r.call != nil {
		key = r.call.Key
	}
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	var wrote atomic.Bool // set on the transport's writing goroutine
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, rd)
	if err != nil {
		return 0, 0, badParams(err)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	if r.body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(IdempotencyHeader, key)
	if r.call != nil && r.call.dispatch != nil {
		if err := r.call.dispatch(ctx); err != nil {
			return 0, 0, err // retried: nothing was sent
		}
	}
	notSent := func() {
		if r.call != nil && r.call.notSent != nil {
			r.call.notSent(context.WithoutCancel(ctx))
		}
	}
	resp, err := stepClient(base).Do(req)
	if err != nil {
		if !wrote.Load() {
			notSent()
		}
		return 0, 0, classifyTransport(err)
	}
	// Only the status decides the step; a large 2xx body must not fail it on
	// the egress size cap, so at most 64 KiB is drained (to reuse the
	// connection) and read errors are ignored, as in send.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		notSent()
	}
	wait := egress.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	wait = min(wait, maxStepRetryAfter)
	return resp.StatusCode, wait, nil
}
