// Package metrics holds Causeway's Prometheus collectors. They are registered once
// on the default registry, so every part of a process (HTTP middleware, webhook
// ingestion, activities) records into the same exposition. Activities run in the
// worker, so a split deployment must scrape both the api's GET /metrics and the
// worker's CAUSEWAY_METRICS_ADDR listener; `causeway run` serves everything on
// the API's /metrics because it is one process.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcome label values shared by the counters below.
const (
	OutcomeSuccess   = "success"
	OutcomeFailure   = "failure"
	OutcomeRetry     = "retry"
	OutcomeGone      = "gone"
	OutcomeAbandoned = "abandoned"
)

var (
	// HTTPRequests counts API requests by route template (never the raw path,
	// which would explode cardinality), method and status.
	HTTPRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"method", "route", "status"})

	// HTTPDuration is request latency per route, for SLOs on the API.
	HTTPDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "causeway_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route"})

	// AlertsIngested counts webhook deliveries from monitoring tools by provider
	// and outcome (created, duplicate, resolved, ignored, rejected).
	AlertsIngested = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_alerts_ingested_total", Help: "Inbound alerts by provider and outcome.",
	}, []string{"provider", "outcome"})

	// Investigations counts finished investigation passes by outcome.
	Investigations = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_investigations_total", Help: "Finished investigation passes by outcome.",
	}, []string{"outcome"})

	// InvestigationDuration is how long passes take from start to finish.
	InvestigationDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "causeway_investigation_duration_seconds", Help: "Investigation pass duration by outcome.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800},
	}, []string{"outcome"})

	// LLMTokens counts tokens spent on LLM calls, by kind (prompt, completion),
	// for cost attribution.
	LLMTokens = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_llm_tokens_total", Help: "LLM tokens spent by kind (prompt, completion).",
	}, []string{"kind"})

	// RemediationSteps counts executed remediation steps by step type and outcome.
	RemediationSteps = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_remediation_steps_total", Help: "Remediation steps by type and outcome.",
	}, []string{"type", "outcome"})

	// InvestigationsInFlight and AlertsWaiting are what the dispatcher saw at
	// its last admission (investigation.Admission), across every process on
	// the database: the alerts' investigations running, against
	// CAUSEWAY_INVESTIGATIONS_IN_FLIGHT, and the alerts waiting for a slot.
	// A backlog that grows while in flight sits at the bound is a storm
	// being worked off.
	InvestigationsInFlight = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "causeway_investigations_in_flight", Help: "Alerts' investigations admitted and still running, at the last admission.",
	})
	AlertsWaiting = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "causeway_alerts_waiting_admission", Help: "Alerts recorded and waiting to be admitted for investigation, at the last admission.",
	})

	// EventDeliveries counts outbound webhook delivery attempts by outcome.
	EventDeliveries = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "causeway_event_deliveries_total", Help: "Outbound event delivery attempts by outcome.",
	}, []string{"outcome"})
)

// ObserveHTTP records one served request. The method is a label value the
// client chooses, so any method outside the standard set counts as OTHER:
// otherwise every invented method would add series to /metrics for ever.
func ObserveHTTP(method, route string, status int, took time.Duration) {
	method = methodLabel(method)
	HTTPRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	HTTPDuration.WithLabelValues(method, route).Observe(took.Seconds())
}

// methodLabel keeps the standard methods and folds every other into OTHER.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// ObserveInvestigation records a finished pass and its duration.
func ObserveInvestigation(outcome string, took time.Duration) {
	Investigations.WithLabelValues(outcome).Inc()
	InvestigationDuration.WithLabelValues(outcome).Observe(took.Seconds())
}

// AddLLMTokens records tokens spent by one LLM call.
func AddLLMTokens(prompt, completion int) {
	LLMTokens.WithLabelValues("prompt").Add(float64(max(prompt, 0)))
	LLMTokens.WithLabelValues("completion").Add(float64(max(completion, 0)))
}

// ObserveRemediationStep records one executed remediation step; step executors
// call it with their step type and OutcomeSuccess, OutcomeRetry (an attempt
// Temporal will retry) or OutcomeFailure (the step failed for good).
func ObserveRemediationStep(stepType, outcome string) {
	RemediationSteps.WithLabelValues(stepType, outcome).Inc()
}

// Handler serves the Prometheus exposition of the default registry.
func Handler() http.Handler { return promhttp.Handler() }

// Serve exposes Handler on addr until the returned server is shut down; the
// worker binary uses it so activity metrics can be scraped.
func Serve(addr string) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler())
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ListenAndServe() }()
	return srv
}
