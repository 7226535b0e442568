package service

import (
	"context"
	"log/slog"
	"time"
)

// sweepLoop runs sweep now, then at every tick and whenever kick fires (a nil
// kick never does), until ctx ends. Failures are logged and retried at the next
// round: the database rows are the queue, so nothing is lost by waiting. The
// dispatcher and the event relay share it.
func sweepLoop(ctx context.Context, interval time.Duration, kick <-chan struct{}, log *slog.Logger, what string,
	sweep func(kicked bool) (int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	kicked := false
	for {
		if n, err := sweep(kicked); err != nil && ctx.Err() == nil {
			log.Warn(what+" failed; will retry", slog.Any("error", err))
		} else if n > 0 {
			log.Info(what+" started workflows", slog.Int("count", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			kicked = false
		case <-kick:
			kicked = true
		}
	}
}
