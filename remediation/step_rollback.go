package remediation

import (
	"context"
	"encoding/json"
	"net/http"
)

// rollbackParams are the params of a deployment_rollback step: the deploy
// system's rollback hook and what to roll back.
type rollbackParams struct {
	URL        string            `json:"url"`
	Service    string            `json:"service"`
	Version    string            `json:"version"`
	Headers    map[string]string `json:"headers"`
	Idempotent bool              `json:"idempotent"`
}

// rollbackStep asks the deploy system to roll a service back by POSTing to its
// rollback hook with the step's idempotency key, so a retried call rolls back once.
type rollbackStep struct{}

func (rollbackStep) parse(p map[string]any, rendered bool) (rollbackParams, error) {
	var rp rollbackParams
	if err := decodeParams(p, &rp); err != nil {
		return rp, err
	}
	if err := checkHeaders(rp.Headers); err != nil {
		return rp, err
	}
	return rp, checkURL("url", rp.URL, rendered)
}

func (s rollbackStep) check(p map[string]any, rendered bool, _ checkEnv) error {
	_, err := s.parse(p, rendered)
	return err
}

func (s rollbackStep) run(ctx context.Context, a *Activities, c stepCall) error {
	rp, err := s.parse(c.Params, true)
	if err != nil {
		return badParams(err)
	}
	body, err := json.Marshal(map[string]string{"service": rp.Service, "version": rp.Version, "idempotencyKey": c.Key})
	if err != nil {
		return badParams(err)
	}
	status, retryAfter, err := a.callStep(ctx, stepRequest{method: http.MethodPost, url: rp.URL, headers: rp.Headers, body: body, call: &c})
	if err != nil {
		return err
	}
	return classifyStatus(status, 0, retryAfter)
}
