package datasources

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/causeway/causeway/clip"
)

// apiCall is one request to an HTTP API source and what each API says in
// the body of a refusal.
type apiCall struct {
	client *http.Client
	auth   Auth
	// explain pulls the system's own words out of an error body.
	explain func(status int, body []byte) string
}

// do sends one request and returns the body of a 2xx answer. 401 and 403 are
// ErrDenied, 400 (and 404/422, which these APIs use for a query naming
// something that does not exist) ErrBadQuery, anything else an error a retry
// may fix; each carries the system's explanation, cut short.
func (a apiCall) do(ctx context.Context, method, url, contentType string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	a.auth.apply(req)
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, describeNetError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode < 300 {
		return raw, nil
	}
	why := ""
	if a.explain != nil {
		why = a.explain(resp.StatusCode, raw)
	}
	why = clip.To(strings.TrimSpace(firstNonEmpty(why, http.StatusText(resp.StatusCode))), 300)
	r := &refusal{status: resp.StatusCode, why: why}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		r.class = ErrDenied
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity:
		r.class = ErrBadQuery
	}
	return nil, r
}

// refusal is an API's non-2xx answer: its status and the system's own
// words, classed as ErrDenied, ErrBadQuery or neither, so a caller can quote
// the system without its status line.
type refusal struct {
	class  error
	status int
	why    string
}

func (r *refusal) Error() string {
	s := fmt.Sprintf("HTTP %d: %s", r.status, r.why)
	if r.class != nil {
		s = r.class.Error() + ": " + s
	}
	return s
}

func (r *refusal) Unwrap() error { return r.class }
