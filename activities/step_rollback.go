package activities

import (
	"context"
	"encoding/json"
	"net/http"
)

// rollbackParams are the params of a deployment_rollback step: the deploy
// system's rollback hook and what to roll back.
type rollbackParams struct {
	URL     string            `json:"url"`
	Service string            `json:"service"`
	Version string            `json:"version"`
	Headers map[string]string `json:"headers"`
}

// rollbackStep asks the deploy system to roll a service back by POSTing to its
// rollback hook with the step's idempotency key, so a retried call rolls back once.
type rollbackStep struct{}

func (rollbackStep) parse(p map[string]any, rendered bool) (rollbackParams, error) {
	var rp rollbackParams
	if err := decodeParams(p, &rp); err != nil {
		return rp, err
	}
	return rp, checkURL("url", rp.URL, rendered)
}

func (s rollbackStep) check(p map[string]any, rendered bool, _ map[string]string) error {
	_, err := s.parse(p, rendered)
	return err
}

func (s rollbackStep) run(ctx context.Context, a *Activities, p map[string]any, key string) error {
	rp, err := s.parse(p, true)
	if err != nil {
		return badParams(err)
	}
	body, err := json.Marshal(map[string]string{"service": rp.Service, "version": rp.Version, "idempotencyKey": key})
	if err != nil {
		return badParams(err)
	}
	status, retryAfter, err := a.callStep(ctx, http.MethodPost, rp.URL, rp.Headers, body, key)
	if err != nil {
		return err
	}
	return classifyStatus(status, 0, retryAfter)
}
