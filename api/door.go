package api

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/ratelimit"
)

// refusedAddresses limits, per client address, the webhook deliveries whose
// API key was refused (CAUSEWAY_WEBHOOK_IP_RATE_LIMIT_PER_MINUTE). An address
// that spent the budget is marked in the shared backend, and every replica
// answers its deliveries 429 before looking any key up, until the mark
// expires. Deliveries with a valid key never spend it, so one tenant's storm
// through a shared sender cannot hold back another tenant's alerts.
type refusedAddresses struct {
	limiter   ratelimit.Limiter
	marks     ratelimit.Marks
	perMinute int
	log       *slog.Logger
}

// refusedFor is how long an address that spent its budget stays refused:
// the budget's own period, after which it has refilled.
const refusedFor = time.Minute

func refusedKey(c *gin.Context) string { return "webhook-refused-ip:" + clientKey(c) }

// gate answers 429 for an address marked refused. When the backend cannot
// say, the delivery goes on: its key is still checked.
func (r refusedAddresses) gate(c *gin.Context) {
	if r.perMinute <= 0 || r.marks == nil {
		c.Next()
		return
	}
	marked, err := r.marks.Marked(c.Request.Context(), refusedKey(c))
	if err != nil {
		r.log.Warn("rate limiter unavailable; letting request through", slog.Any("error", err))
	}
	if marked {
		retry := strconv.Itoa(int(refusedFor.Seconds()))
		c.Header("Retry-After", retry)
		failCode(c, errcode.RateLimited, "too many deliveries from this address had a key that is not valid; retry in %s s", retry)
		return
	}
	c.Next()
}

// charge spends one refusal of the address's budget and marks the address
// once the budget is spent.
func (r refusedAddresses) charge(c *gin.Context) {
	if r.perMinute <= 0 || r.marks == nil {
		return
	}
	ctx := c.Request.Context()
	res, err := r.limiter.Allow(ctx, refusedKey(c), r.perMinute)
	if err != nil {
		r.log.Warn("rate limiter unavailable; not counting a refused key", slog.Any("error", err))
		return
	}
	if res.Remaining > 0 && res.Allowed {
		return
	}
	if _, err := r.marks.Mark(ctx, refusedKey(c), refusedFor); err != nil {
		r.log.Warn("rate limiter unavailable; not marking an address", slog.Any("error", err))
	}
}
