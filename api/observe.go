package api

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/metrics"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/service"
)

// observe records every request in the Prometheus collectors under its route
// template, so /v1/incidents/{id} is one series, not one per incident.
func observe() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		metrics.ObserveHTTP(c.Request.Method, routeOf(c), c.Writer.Status(), time.Since(start))
	}
}

// countAlerts records one webhook delivery's alerts by provider and outcome
// (created, duplicate, resolved, ignored, subscription_confirmed, or the error
// code when ingestion failed).
func countAlerts(provider string, res *service.IngestResult, err error) {
	switch {
	case err != nil:
		code := "rejected"
		if e, ok := errcode.As(err); ok {
			code = e.Code
		}
		metrics.AlertsIngested.WithLabelValues(provider, code).Inc()
	case res.Confirmed:
		metrics.AlertsIngested.WithLabelValues(provider, service.IngestConfirmed).Inc()
	case res.Ignored || len(res.Alerts) == 0:
		metrics.AlertsIngested.WithLabelValues(provider, service.IngestIgnored).Inc()
	}
	if err != nil || res == nil {
		return
	}
	for _, a := range res.Alerts {
		outcome := "created"
		switch {
		case a.Duplicate:
			outcome = "duplicate"
		case a.Status == models.StatusResolved || a.Status == service.IngestIgnored:
			outcome = a.Status
		}
		metrics.AlertsIngested.WithLabelValues(provider, outcome).Inc()
	}
}

// routeOf is the request's route template, the label logs and metrics share;
// requests no route matched share one value instead of one per path.
func routeOf(c *gin.Context) string {
	if route := c.FullPath(); route != "" {
		return route
	}
	return "(unmatched)"
}
