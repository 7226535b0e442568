package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/causeway/causeway/config"
)

// Main is the entry point shared by the production binaries (api, worker): it
// parses --config, loads and validates the configuration, logs it with secrets
// masked, connects, and runs body until SIGINT or SIGTERM. Any error exits 1.
func Main(name string, body func(ctx context.Context, a *App) error) {
	if err := boot(body); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func boot(body func(ctx context.Context, a *App) error) error {
	cfgPath := flag.String("config", "", "YAML configuration file (settings also come from CAUSEWAY_* variables)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load(*cfgPath, config.ModeProduction)
	if err != nil {
		return err
	}
	if cfg.EmbeddedTemporal() {
		return errors.New("CAUSEWAY_TEMPORAL_ADDRESS is required (the embedded server is only for `causeway run`)")
	}
	log := NewLogger(cfg.LogLevel)
	LogConfig(log, cfg)
	a, err := New(ctx, cfg, log, cfg.TemporalAddress)
	if err != nil {
		return err
	}
	defer a.Close()
	return body(ctx, a)
}

// StartWorker starts the Temporal worker with every workflow and activity and
// returns the function that stops it gracefully.
func (a *App) StartWorker() (stop func(), err error) {
	w := a.Worker()
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return w.Stop, nil
}
