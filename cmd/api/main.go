// Command api serves Causeway's HTTP API in production. It needs PostgreSQL and a
// Temporal cluster (CAUSEWAY_DATABASE_URL, CAUSEWAY_TEMPORAL_ADDRESS); run
// `causeway migrate` once per release before starting it.
package main

import (
	"context"
	"time"

	"github.com/causeway/causeway/app"
)

func main() {
	app.Main("api", func(ctx context.Context, a *app.App) error {
		// The API runs a dispatcher too, so a webhook's Kick starts the incident's
		// workflow at once instead of at a worker's next sweep.
		go a.Dispatcher().Run(ctx, time.Second)
		return a.Serve(ctx, a.Router())
	})
}
