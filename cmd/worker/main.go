// Command worker runs Causeway's Temporal workflows and activities in production,
// the dispatcher that starts the workflow of any incident still without one, the
// reconciler that does the same for proposed remediations, and the relay that
// delivers recorded outbound events.
package main

import (
	"context"
	"time"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/metrics"
)

func main() {
	app.Main("worker", func(ctx context.Context, a *app.App) error {
		stop, err := a.StartWorker()
		if err != nil {
			return err
		}
		defer stop()
		// Activities record their metrics in this process, so it serves them itself.
		if addr := a.Config.MetricsAddr; addr != "" {
			srv := metrics.Serve(addr)
			defer srv.Close()
		}
		a.Log.Info("worker polling", "task_queue", a.Config.TemporalTaskQueue)
		go a.Relay().Run(ctx, time.Second)
		go a.Reconciler().Run(ctx, 30*time.Second)
		go a.SlackNotifier().Run(ctx, 2*time.Second)
		a.Dispatcher().Run(ctx, time.Second)
		return nil
	})
}
