package service

import (
	"testing"
	"time"
)

// PagerDuty abandons a webhook delivery that has not been answered within 5 s
// (docs/providers.md). A resolved notification waits on Temporal for at most
// resolveTimeout and then answers 503, which PagerDuty retries; the wait plus
// the rest of the request must fit in those 5 s, or the delivery is dropped.
func TestResolveTimeoutFitsPagerDutyDeliveryTimeout(t *testing.T) {
	const pagerDutyDeliveryTimeout = 5 * time.Second
	if resolveTimeout <= 0 || resolveTimeout > pagerDutyDeliveryTimeout-time.Second {
		t.Fatalf("resolveTimeout %v leaves less than a second of PagerDuty's %v", resolveTimeout, pagerDutyDeliveryTimeout)
	}
}
