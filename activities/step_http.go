package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
)

// httpParams are the params of an http step.
type httpParams struct {
	Method       string            `json:"method"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers"`
	Body         any               `json:"body"`
	ExpectStatus int               `json:"expectStatus"`
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
	for k := range hp.Headers {
		if strings.EqualFold(k, IdempotencyHeader) || strings.EqualFold(k, "Host") {
			return hp, fmt.Errorf("params.headers may not set %s", k)
		}
	}
	return hp, checkURL("url", hp.URL, rendered)
}

func (s httpStep) check(p map[string]any, rendered bool, _ map[string]string) error {
	_, err := s.parse(p, rendered)
	return err
}

func (s httpStep) run(ctx context.Context, a *Activities, p map[string]any, key string) error {
	hp, err := s.parse(p, true)
	if err != nil {
		return badParams(err)
	}
	body, err := encodeBody(hp.Body)
	if err != nil {
		return badParams(err)
	}
	status, retryAfter, err := a.callStep(ctx, hp.Method, hp.URL, hp.Headers, body, key)
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

// callStep makes one call through the egress client with the step's idempotency key
// and returns the status and any Retry-After. Transport failures come back
// classified.
func (a *Activities) callStep(ctx context.Context, method, rawURL string, headers map[string]string, body []byte, key string) (int, time.Duration, error) {
	if a.Egress == nil {
		return 0, 0, temporal.NewNonRetryableApplicationError("no egress client configured", ErrTypeStepBadParams, nil)
	}
	ctx, cancel := context.WithTimeout(ctx, StepRequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return 0, 0, badParams(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(IdempotencyHeader, key)
	resp, err := a.Egress.Do(req)
	if err != nil {
		return 0, 0, classifyTransport(err)
	}
	// Only the status decides the step; a large 2xx body must not fail it on
	// the egress size cap, so at most 64 KiB is drained (to reuse the
	// connection) and read errors are ignored, as in send.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	wait := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	wait = min(wait, maxStepRetryAfter)
	return resp.StatusCode, wait, nil
}
