package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Activities hold what a delivery attempt needs: the store, the sealer that
// opens an endpoint's signing secret, and the egress client every request to a
// tenant-supplied URL goes through.
type Activities struct {
	Store  *Store
	Sealer *auth.Sealer
	Egress *http.Client
}

// NameDeliverEvent is the registered name of the one-attempt delivery activity.
const NameDeliverEvent = "DeliverEvent"

// Outcomes of one delivery attempt, which tell DeliveryWorkflow what to do next.
const (
	// OutcomeSucceeded: the receiver answered 2xx; the delivery is done.
	OutcomeSucceeded = "succeeded"
	// OutcomeRetry: any other answer or a network failure; try again later.
	OutcomeRetry = "retry"
	// OutcomeGone: the receiver answered 410; the endpoint is now disabled.
	OutcomeGone = "gone"
	// OutcomeFailed: the last attempt inside the retry horizon failed too.
	OutcomeFailed = "failed"
	// OutcomeAbandoned: nothing to send to (endpoint deleted or disabled, or its
	// URL is refused by the egress policy); retrying cannot help.
	OutcomeAbandoned = "abandoned"
)

// DeliveryTimeout bounds one delivery request. The worker's egress client allows
// remediation steps longer, so deliveries carry their own deadline to keep a
// slow receiver from holding an attempt for minutes.
const DeliveryTimeout = 15 * time.Second

// DeliverInput is one attempt of one delivery. Attempt counts from 1; Final marks
// the last attempt the retry horizon allows, so a failure closes the delivery.
type DeliverInput struct {
	DeliveryID string
	Attempt    int
	Final      bool
}

// DeliverOutput is what the attempt saw: its outcome, the receiver's status code
// (0 when none) and how long the receiver asked us to wait (Retry-After).
type DeliverOutput struct {
	Outcome    string
	StatusCode int
	RetryAfter time.Duration
}

// EventEnvelope is the body of every outbound event, the same for every kind so a
// receiver can route on Type before it reads Data (docs/data-flow.md); Data is the
// payload recorded with the state change.
type EventEnvelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	TenantID  string          `json:"tenantId"`
	CreatedAt time.Time       `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

// DeliverEvent makes one signed Standard Webhooks attempt and records it (status,
// latency, error) with the delivery's new state in one transaction. Receiver
// answers are outcomes, not errors; only our own failures (database, sealed
// secret) are errors, which Temporal retries. An attempt already recorded is not
// sent again: its recorded state is returned instead.
func (a *Activities) DeliverEvent(ctx context.Context, in DeliverInput) (DeliverOutput, error) {
	b, err := a.Store.LoadDelivery(ctx, in.DeliveryID)
	if errors.Is(err, models.ErrNotFound) {
		metrics.EventDeliveries.WithLabelValues(metrics.OutcomeAbandoned).Inc()
		return DeliverOutput{Outcome: OutcomeAbandoned}, temporalx.Classify(a.Store.FinishDelivery(ctx, in.DeliveryID, StatusFailed, time.Now().UTC()))
	}
	if err != nil {
		return DeliverOutput{}, err
	}
	if done, ok := recordedOutcome(b, in.Attempt); ok {
		return done, nil
	}
	if b.Endpoint.Status != EndpointActive {
		metrics.EventDeliveries.WithLabelValues(metrics.OutcomeAbandoned).Inc()
		return DeliverOutput{Outcome: OutcomeAbandoned}, temporalx.Classify(a.Store.FinishDelivery(ctx, in.DeliveryID, StatusFailed, time.Now().UTC()))
	}
	rctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	req, err := a.deliveryRequest(rctx, b)
	if err != nil {
		return DeliverOutput{}, err
	}
	out, rec := a.send(req, in)
	rec.TenantID, rec.DeliveryID, rec.EndpointID = b.Delivery.TenantID, b.Delivery.ID, b.Endpoint.ID
	rec.EventID, rec.EventType, rec.Attempt = b.Event.ID, b.Event.Type, in.Attempt
	disable := ""
	if out.Outcome == OutcomeGone {
		disable = "receiver answered 410 Gone"
	}
	if err := a.Store.RecordDeliveryAttempt(ctx, &rec, deliveryStatus(out.Outcome), disable); err != nil {
		return DeliverOutput{}, err
	}
	metrics.EventDeliveries.WithLabelValues(metricOutcome(out.Outcome)).Inc()
	return out, nil
}

// recordedOutcome answers a retried activity whose attempt is already on record.
func recordedOutcome(b *DeliveryBundle, attempt int) (DeliverOutput, bool) {
	switch {
	case b.Delivery.Status == StatusSucceeded:
		return DeliverOutput{Outcome: OutcomeSucceeded}, true
	case b.Delivery.Status == StatusFailed && b.Endpoint.Status == EndpointDisabled:
		return DeliverOutput{Outcome: OutcomeGone}, true
	case b.Delivery.Status == StatusFailed:
		return DeliverOutput{Outcome: OutcomeFailed}, true
	case b.Delivery.Attempts >= attempt:
		return DeliverOutput{Outcome: OutcomeRetry}, true
	}
	return DeliverOutput{}, false
}

// deliveryRequest builds the signed request. The timestamp is the time of this
// attempt; the id and body are the same on every attempt.
func (a *Activities) deliveryRequest(ctx context.Context, b *DeliveryBundle) (*http.Request, error) {
	secret, err := a.Sealer.Decrypt(b.Endpoint.SecretEnc, []byte(b.Endpoint.ID))
	if err != nil {
		return nil, fmt.Errorf("endpoint %s secret: %w", b.Endpoint.ID, err)
	}
	body, err := json.Marshal(EventEnvelope{ID: b.Event.ID, Type: b.Event.Type, TenantID: b.Event.TenantID,
		CreatedAt: b.Event.CreatedAt.UTC(), Data: json.RawMessage(b.Event.Payload)})
	if err != nil {
		return nil, err
	}
	ts := time.Now().Unix()
	sig, err := auth.SignStandardWebhook(string(secret), b.Event.ID, ts, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Causeway-Webhooks/1")
	req.Header.Set("webhook-id", b.Event.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	return req, nil
}

// send performs the request and classifies the answer. Only 2xx succeeds; 410
// disables the endpoint; every other status (4xx included, as Standard Webhooks
// prescribes: a receiver's 401 or 404 is often a deploy or secret rotation in
// progress) and every network failure is retried until the horizon.
func (a *Activities) send(req *http.Request, in DeliverInput) (DeliverOutput, DeliveryAttempt) {
	start := time.Now()
	resp, err := a.Egress.Do(req)
	rec := DeliveryAttempt{At: start.UTC(), LatencyMs: time.Since(start).Milliseconds()}
	if err != nil {
		rec.Error = temporalx.Reason(err.Error())
		if egress.IsBlocked(err) {
			return DeliverOutput{Outcome: OutcomeAbandoned}, rec
		}
		return retryOrFail(DeliverOutput{Outcome: OutcomeRetry}, in), rec
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	rec.LatencyMs, rec.StatusCode = time.Since(start).Milliseconds(), resp.StatusCode
	out := DeliverOutput{StatusCode: resp.StatusCode}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		out.Outcome = OutcomeSucceeded
	case resp.StatusCode == http.StatusGone:
		out.Outcome, rec.Error = OutcomeGone, "endpoint answered 410 Gone; disabled"
	default:
		out.Outcome, out.RetryAfter = OutcomeRetry, egress.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		rec.Error = "unexpected status " + strconv.Itoa(resp.StatusCode)
	}
	return retryOrFail(out, in), rec
}

// retryOrFail turns a retry into a failure on the last attempt.
func retryOrFail(out DeliverOutput, in DeliverInput) DeliverOutput {
	if out.Outcome == OutcomeRetry && in.Final {
		out.Outcome = OutcomeFailed
	}
	return out
}

// deliveryStatus is the delivery row's state after an attempt with outcome.
func deliveryStatus(outcome string) string {
	switch outcome {
	case OutcomeSucceeded:
		return StatusSucceeded
	case OutcomeRetry:
		return StatusPending
	}
	return StatusFailed
}

func metricOutcome(outcome string) string {
	switch outcome {
	case OutcomeSucceeded:
		return metrics.OutcomeSuccess
	case OutcomeRetry:
		return metrics.OutcomeRetry
	case OutcomeGone:
		return metrics.OutcomeGone
	case OutcomeAbandoned:
		return metrics.OutcomeAbandoned
	}
	return metrics.OutcomeFailure
}
