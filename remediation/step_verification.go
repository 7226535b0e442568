package remediation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/causeway/causeway/temporalx"
	"go.temporal.io/sdk/temporal"
)

// verificationParams are the params of a verification step: probe URL until it
// answers expectStatus (default 200), each probe bounded by timeout, at most
// retries+1 probes.
type verificationParams struct {
	URL          string `json:"url"`
	ExpectStatus int    `json:"expectStatus"`
	Timeout      string `json:"timeout"`
	Retries      int    `json:"retries"`
}

// Bounds of a verification: enough to watch a rollout settle, small enough to fit
// the step's StartToClose timeout.
const (
	maxVerificationRetries = 20
	maxProbeTimeout        = 30 * time.Second
	probeInterval          = 2 * time.Second
)

// verificationStep is an HTTP probe that checks a remediation took effect.
type verificationStep struct{}

func (verificationStep) parse(p map[string]any, rendered bool) (verificationParams, time.Duration, error) {
	var vp verificationParams
	if err := decodeParams(p, &vp); err != nil {
		return vp, 0, err
	}
	if vp.ExpectStatus == 0 {
		vp.ExpectStatus = http.StatusOK
	}
	if vp.ExpectStatus < 100 || vp.ExpectStatus > 599 {
		return vp, 0, fmt.Errorf("params.expectStatus must be an HTTP status code")
	}
	if vp.Retries < 0 || vp.Retries > maxVerificationRetries {
		return vp, 0, fmt.Errorf("params.retries must be between 0 and %d", maxVerificationRetries)
	}
	timeout, err := checkDuration("timeout", vp.Timeout, rendered, maxProbeTimeout)
	if err != nil {
		return vp, 0, err
	}
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	return vp, timeout, checkURL("url", vp.URL, rendered)
}

func (s verificationStep) check(p map[string]any, rendered bool, _ checkEnv) error {
	_, _, err := s.parse(p, rendered)
	return err
}

// run probes until the expected status arrives, under the tenant's
// data-source networks (Reach): a verification looks at the tenant's own
// system, as its data sources do. The executor does its own retries (they
// are part of the step's meaning); a refused destination ends it at once,
// and running out of probes is final.
func (s verificationStep) run(ctx context.Context, a *Activities, c stepCall) error {
	vp, timeout, err := s.parse(c.Params, true)
	if err != nil {
		return badParams(err)
	}
	var client *http.Client
	if a.Reach != nil {
		if client, err = a.Reach.HTTPClient(ctx, c.TenantID, timeout); err != nil {
			return err
		}
		defer client.CloseIdleConnections()
	}
	var last error
	for probe := 0; probe <= vp.Retries; probe++ {
		if probe > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(probeInterval):
			}
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		status, _, err := a.callStep(pctx, stepRequest{method: http.MethodGet, url: vp.URL, key: c.Key, client: client})
		cancel()
		var app *temporal.ApplicationError
		switch {
		case err != nil && errors.As(err, &app) && app.NonRetryable():
			return err
		case err != nil:
			last = err
		case status == vp.ExpectStatus:
			return nil
		default:
			last = fmt.Errorf("answered %d, expected %d", status, vp.ExpectStatus)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	msg := fmt.Sprintf("verification of %s failed after %d probes: %s", vp.URL, vp.Retries+1, temporalx.Reason(last.Error()))
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeVerificationFailed, last)
}
