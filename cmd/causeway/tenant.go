package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/identity"
	"github.com/causeway/causeway/models"
)

const tenantUsage = `usage: causeway [--config FILE] tenant SUBCOMMAND

subcommands:
  create --name NAME --owner-email EMAIL [--owner-name NAME] [--plan PLAN]
            create a tenant and its owner, and print once a one-time token the
            owner exchanges for a password (POST /auth/reset-password)
  plan TENANT_ID PLAN
            move a tenant to a plan (free, team, enterprise); what it used this
            month stays used and the new plan's quotas apply at once
`

// tenantCommand dispatches the operator's tenant sub-commands. Each writes
// what the operator must see to out, and nothing secret to any log.
func tenantCommand(ctx context.Context, cfgPath string, args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(out, tenantUsage)
		return errors.New("tenant: missing sub-command")
	}
	switch args[0] {
	case "create":
		return tenantCreate(ctx, cfgPath, args[1:], out)
	case "plan":
		return tenantPlan(ctx, cfgPath, args[1:], out)
	case "networks":
		return tenantNetworks(ctx, cfgPath, args[1:], out)
	default:
		fmt.Fprint(out, tenantUsage)
		return fmt.Errorf("tenant: unknown sub-command %q", args[0])
	}
}

// tenantCreate is `causeway tenant create`: the way an operator opens the
// first tenant (and any other) when self-service sign-up is off. The owner's
// way in is a one-time token printed here and nowhere else: only its hash is
// stored, it expires, and it is spent by the owner choosing a password.
func tenantCreate(ctx context.Context, cfgPath string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("tenant create", flag.ContinueOnError)
	fs.SetOutput(out)
	name := fs.String("name", "", "the tenant's name")
	email := fs.String("owner-email", "", "the owner's e-mail address (their login)")
	ownerName := fs.String("owner-name", "", "the owner's name (default: the e-mail's local part)")
	plan := fs.String("plan", models.PlanFree, "the tenant's plan: free, team or enterprise")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("tenant create: unexpected argument %q", fs.Arg(0))
	}
	cfg, store, err := migratedStore(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer store.Close()
	// Only the account operations are used: no tokens are issued here.
	accounts := identity.NewAccounts(store, auth.NewTokens(cfg.AuthJWTSecret, cfg.AuthIssuer, cfg.AuthAudience, cfg.AuthTokenTTL, models.ValidRole),
		identity.AccountsConfig{RefreshTTL: cfg.AuthRefreshTTL, QuotaEvents: cfg.QuotaEventsPerMonth, QuotaInvestigations: cfg.QuotaInvestigationsPerMonth, Plans: cfg.PlanQuotas()})
	t, err := accounts.CreateTenant(ctx, identity.CreateTenantInput{Name: *name, OwnerEmail: *email, OwnerName: *ownerName, Plan: *plan})
	if err != nil {
		if e, ok := errcode.As(err); ok {
			return fmt.Errorf("tenant create: %s", e.Message)
		}
		return err
	}
	base := strings.TrimRight(cfg.PublicURL, "/")
	if base == "" {
		base = "http://" + cfg.HTTPAddr
	}
	fmt.Fprintf(out, `Tenant created.

  tenant id  %s
  plan       %s
  owner      %s (%s)

One-time token for the owner, valid until %s. It is shown only now and
is not stored anywhere readable; hand it to the owner over a private channel:

  %s

The owner chooses a password with it (and is signed in):

  curl -s -X POST %s/auth/reset-password -H 'Content-Type: application/json' \
    -d '{"token":"<the token>","password":"<a new password, at least %d characters>"}'

A lost or expired token: delete nothing, run this command for a new tenant, or
ask an owner of the tenant to add the person with POST /v1/users.
`, t.TenantID, *plan, t.OwnerEmail, t.UserID, t.ExpiresAt.Format(time.RFC3339), t.ResetToken, base, auth.MinPasswordLength)
	return nil
}

// tenantPlan is `causeway tenant plan`: plans are the operator's to change
// (billing lives outside Causeway), so there is no tenant API for it.
func tenantPlan(ctx context.Context, cfgPath string, args []string, out io.Writer) error {
	if len(args) != 2 {
		fmt.Fprint(out, tenantUsage)
		return errors.New("tenant plan: want TENANT_ID PLAN")
	}
	cfg, store, err := migratedStore(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer store.Close()
	t, err := identity.NewPlans(store, cfg.PlanQuotas()).Change(ctx, args[0], args[1])
	if err != nil {
		if e, ok := errcode.As(err); ok {
			return fmt.Errorf("tenant plan: %s", e.Message)
		}
		return err
	}
	limit := func(n int) string {
		if n == 0 {
			return "unlimited"
		}
		return fmt.Sprintf("%d", n)
	}
	fmt.Fprintf(out, "Tenant %s (%s) is on plan %s: %s events and %s investigations a month.\nWhat it used this month still counts; GET /v1/tenant shows it.\n",
		t.ID, t.Name, t.Plan, limit(t.QuotaEvents), limit(t.QuotaInvestigations))
	return nil
}

// tenantNetworks is `causeway tenant networks`: which private networks a
// tenant's data sources may reach is the operator's to say, like the ceiling
// it must fit under, so there is no tenant API for it. A grant reaching past
// the ceiling is refused rather than cut, so the operator sees what was
// meant not to be reachable.
func tenantNetworks(ctx context.Context, cfgPath string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("tenant networks", flag.ContinueOnError)
	fs.SetOutput(out)
	withdraw := fs.Bool("clear", false, "withdraw the tenant's grant")
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	if len(positional) == 0 {
		fmt.Fprint(out, tenantUsage)
		return errors.New("tenant networks: want TENANT_ID [CIDR...] [--clear]")
	}
	tenantID, cidrs := positional[0], positional[1:]
	if len(cidrs) == 1 && cidrs[0] == "none" {
		cidrs, *withdraw = nil, true
	}
	if *withdraw && len(cidrs) > 0 {
		return errors.New("tenant networks: give networks or --clear, not both")
	}
	cfg, store, err := migratedStore(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer store.Close()
	ceiling := cfg.DataSourceNetworks()
	if *withdraw || len(cidrs) > 0 {
		grant, err := config.ParseNetworks(strings.Join(cidrs, ","))
		if err != nil {
			return fmt.Errorf("tenant networks: %w", err)
		}
		for _, n := range grant {
			if !egress.Within(n, ceiling) {
				return fmt.Errorf("tenant networks: %s is not inside CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS (%s); widen the ceiling first", n, listOrNone(ceiling))
			}
		}
		err = store.SetTenantNetworks(ctx, tenantID, grant)
		if errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("tenant networks: no tenant %q", tenantID)
		}
		if err != nil {
			return err
		}
	} else if _, err := store.TenantByID(ctx, tenantID); errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("tenant networks: no tenant %q", tenantID)
	} else if err != nil {
		return err
	}
	grant, err := store.TenantNetworks(ctx, tenantID)
	if err != nil {
		return err
	}
	reach := egress.Intersect(grant, ceiling)
	fmt.Fprintf(out, "Tenant %s is granted: %s\nCeiling (CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS): %s\nIts data sources reach, besides public addresses: %s\n",
		tenantID, listOrNone(grant), listOrNone(ceiling), listOrNone(reach))
	if cfg.DataSourceGrantAll {
		fmt.Fprintln(out, "CAUSEWAY_DATASOURCE_GRANT_ALL is on: every tenant reaches the whole ceiling, whatever its grant.")
	}
	return nil
}

// listOrNone prints networks as the settings write them.
func listOrNone(networks []netip.Prefix) string {
	if len(networks) == 0 {
		return "none"
	}
	s := make([]string, len(networks))
	for i, n := range networks {
		s[i] = n.String()
	}
	return strings.Join(s, ",")
}
