package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/devstack"
	"github.com/causeway/causeway/identity"
)

// embedded is everything in one process: an embedded Temporal server (unless the
// configuration names a cluster), the app with its schema migrated, and a worker.
// `run` and `eval` both start it.
type embedded struct {
	app     *app.App
	stack   *devstack.Stack
	closers []func()
}

// startEmbedded starts the stack. stackOpts nil means "use the configured
// cluster"; otherwise an embedded server is started with those options.
func startEmbedded(ctx context.Context, cfg *config.Config, log *slog.Logger, stackOpts *devstack.Options) (_ *embedded, err error) {
	e := &embedded{}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	addr := cfg.TemporalAddress
	if stackOpts != nil {
		if e.stack, err = devstack.Start(ctx, *stackOpts); err != nil {
			return nil, fmt.Errorf("embedded temporal: %w", err)
		}
		e.closers = append(e.closers, func() { _ = e.stack.Stop() })
		addr = e.stack.FrontendAddress()
	}
	if e.app, err = app.New(ctx, cfg, log, addr); err != nil {
		return nil, err
	}
	e.closers = append(e.closers, e.app.Close)
	if err = e.app.Store.Migrate(ctx); err != nil {
		return nil, err
	}
	if _, err = identity.NewPlans(e.app.Store, cfg.PlanQuotas()).Apply(ctx); err != nil {
		return nil, err
	}
	stop, err := e.app.StartWorker()
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, stop)
	return e, nil
}

// Close stops the worker, then the app's connections, then the server.
func (e *embedded) Close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}
