package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/replay"
	"github.com/causeway/causeway/service"
)

const scenarioUsage = `usage: causeway [--config FILE] scenario export --tenant TENANT_ID [--out FILE] INCIDENT_ID

Writes the incident's latest answered pass as a scenario file for eval: the
alert, the data-source answers read from the pass's workflow history (no
source is queried), the changes and the graded cause. No source URL or
credential enters it. The incident must belong to the tenant.
`

// scenarioCommand is `causeway scenario export`, run where the database and
// Temporal of a deployment (or of make run) are reachable.
func scenarioCommand(ctx context.Context, cfgPath string, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprint(out, scenarioUsage)
		return errors.New("scenario: missing or unknown sub-command")
	}
	fs := flag.NewFlagSet("scenario export", flag.ContinueOnError)
	fs.SetOutput(out)
	tenant := fs.String("tenant", "", "the tenant that owns the incident")
	file := fs.String("out", "", "the file to write (default: incident-<id>.json)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *tenant == "" || fs.NArg() != 1 {
		fmt.Fprint(out, scenarioUsage)
		return errors.New("scenario export: --tenant and one incident id are required")
	}
	cfg, err := config.Load(cfgPath, config.ModeAdmin)
	if err != nil {
		return err
	}
	addr := cfg.TemporalAddress
	if cfg.EmbeddedTemporal() {
		// make run's embedded server.
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.TemporalEmbeddedPort))
	}
	a, err := app.New(ctx, cfg, app.NewLogger(cfg.LogLevel), addr)
	if err != nil {
		return err
	}
	defer a.Close()
	s, err := service.NewOutcomes(a.Store, a.Temporal).Export(ctx, auth.Principal{TenantID: *tenant}, fs.Arg(0))
	if err != nil {
		return err
	}
	path := *file
	if path == "" {
		path = s.ID + ".json"
	}
	if err := replay.Write(path, *s); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s: %d answers from %d sources, expected %s (graded: %t)\n", path, len(s.Answers), len(s.Sources), s.Expected.Category, s.Graded)
	return nil
}
