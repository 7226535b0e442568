// Command causeway is the all-in-one entry point: `causeway run` starts the whole
// product with no external services (embedded Temporal and its UI, SQLite, the
// offline analyzer), and the admin commands (migrate, tenant) run against any
// configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/devstack"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
)

const usage = `usage: causeway [--config FILE] COMMAND

commands:
  run       start API, worker and (unless CAUSEWAY_TEMPORAL_ADDRESS is set) an embedded Temporal server with its UI
  migrate   create or update the database schema
  tenant    operator commands for tenants (tenant create --name … --owner-email …)
  eval DIR  run every scenario of DIR through the real pipeline and report accuracy
            (exported scenarios are served their recorded data-source answers, snapshots
            their systems); eval --format opensre DIR runs OpenSRE's synthetic suites
  scenario  scenario export --tenant ID INCIDENT_ID: an incident as a replayable scenario
  demo      start Prometheus with a bundled scenario and everything of run, then investigate an alert from its live data
`

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "causeway:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("causeway", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "YAML configuration file (settings also come from CAUSEWAY_* variables)")
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch fs.Arg(0) {
	case "run":
		return runAll(ctx, *cfgPath)
	case "migrate":
		return migrate(ctx, *cfgPath)
	case "eval":
		return evalCommand(ctx, *cfgPath, fs.Args()[1:], os.Stdout)
	case "demo":
		return runDemo(ctx, *cfgPath)
	case "tenant":
		return tenantCommand(ctx, *cfgPath, fs.Args()[1:], os.Stdout)
	case "scenario":
		return scenarioCommand(ctx, *cfgPath, fs.Args()[1:], os.Stdout)
	default:
		fs.Usage()
		return errors.New("unknown or missing command")
	}
}

func migrate(ctx context.Context, cfgPath string) error {
	cfg, store, err := migratedStore(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer store.Close()
	log := app.NewLogger(cfg.LogLevel)
	log.Info("database schema is up to date", slog.String("database", store.Dialect()))
	// A release may change a plan's quotas: give them to the tenants on it.
	n, err := identity.NewPlans(store, cfg.PlanQuotas()).Apply(ctx)
	if err != nil {
		return err
	}
	log.Info("plan quotas applied", slog.Int64("tenants_changed", n))
	return nil
}

// migratedStore loads the production configuration and opens its database
// with the schema up to date: all that the admin commands need (neither
// Temporal nor Redis).
func migratedStore(ctx context.Context, cfgPath string) (*config.Config, *models.Store, error) {
	cfg, err := config.Load(cfgPath, config.ModeAdmin)
	if err != nil {
		return nil, nil, err
	}
	store, err := models.Open(ctx, cfg.DatabaseURL, cfg.SQLitePath())
	if err != nil {
		return nil, nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		return nil, nil, err
	}
	return cfg, store, nil
}

// runAll is `make run`: every part of the product in one process.
func runAll(ctx context.Context, cfgPath string) error {
	cfg, err := config.Load(cfgPath, config.ModeDev)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg.LogLevel)
	app.LogConfig(log, cfg)

	var stackOpts *devstack.Options
	if cfg.EmbeddedTemporal() {
		stackOpts = &devstack.Options{
			DataDir:   filepath.Join(cfg.DataDir, "temporal"),
			Port:      cfg.TemporalEmbeddedPort,
			UIAddr:    cfg.TemporalUIAddr,
			Namespace: cfg.TemporalNamespace,
			Logger:    log.With(slog.String("component", "temporal")),
			// Labels an SRE filters by in the Temporal UI.
			SearchAttributes: investigation.SearchAttributeTypes(),
		}
	}
	e, err := startEmbedded(ctx, cfg, log, stackOpts)
	if err != nil {
		return err
	}
	defer e.Close()
	a, temporalAddr, uiURL := e.app, cfg.TemporalAddress, ""
	if e.stack != nil {
		temporalAddr, uiURL = e.stack.FrontendAddress(), e.stack.UIURL()
		if cfg.TemporalUIURL == "" && uiURL != "" {
			// The embedded UI may have picked its port: link to where it is.
			cfg.TemporalUIURL = uiURL
		}
	}
	go a.Dispatcher().Run(ctx, time.Second)
	go a.Relay().Run(ctx, time.Second)
	go a.Reconciler().Run(ctx, 30*time.Second)
	go a.SlackNotifier().Run(ctx, 2*time.Second)

	printBanner(a.PublicURL(), a.DashboardURL(), uiURL, temporalAddr)
	return a.Serve(ctx, a.Router())
}

func printBanner(apiURL, dashboardURL, uiURL, temporalAddr string) {
	fmt.Printf("\nCauseway is running.\n\n  Dashboard    %s\n  API          %s\n", dashboardURL, apiURL)
	if uiURL != "" {
		fmt.Printf("  Temporal UI  %s\n", uiURL)
	}
	fmt.Printf("  Temporal     %s\n\nSign up in the dashboard (%ssignup), or with curl:\n  curl -s -X POST %s/auth/signup -H 'Content-Type: application/json' -d '{\"tenantName\":\"Acme\",\"email\":\"you@example.com\",\"password\":\"change-me-please\",\"name\":\"You\"}'\n\n",
		temporalAddr, dashboardURL, apiURL)
}
