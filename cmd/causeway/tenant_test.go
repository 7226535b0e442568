package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/internal/testdb"
)

// TestTenantCreate runs `causeway tenant create` against a real database: it
// creates the tenant and its owner and prints, once, a one-time token. The
// owner exchanges it for a password at POST /auth/reset-password and is signed
// in; the token then no longer works, and only its hash was ever stored.
func TestTenantCreate(t *testing.T) {
	dir := t.TempDir()
	dbURL := testdb.URL(t)
	for k, v := range map[string]string{
		"CAUSEWAY_DATABASE_URL": dbURL, "CAUSEWAY_DATA_DIR": dir, "CAUSEWAY_LOG_LEVEL": "warn",
		"CAUSEWAY_AUTH_JWT_SECRET": strings.Repeat("s", 40), "CAUSEWAY_SECRETS_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"CAUSEWAY_PUBLIC_URL": "https://causeway.example.com",
	} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := tenantCommand(ctx, "", []string{"create", "--name", "Acme Corp", "--owner-email", "Boss@Example.com", "--owner-name", "Bo Ss"}, &out); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out.String())
	}
	printed := out.String()
	m := regexp.MustCompile(`(?m)^\s+(crt_[A-Za-z0-9_-]+)\s*$`).FindStringSubmatch(printed)
	if m == nil || !strings.Contains(printed, "ten_") || !strings.Contains(printed, "https://causeway.example.com/auth/reset-password") {
		t.Fatalf("output does not give a way in:\n%s", printed)
	}
	token := m[1]

	for _, bad := range [][]string{{"create", "--owner-email", "x@example.com"}, {"create", "--name", "x", "--owner-email", "not-an-address"}, {"nope"}} {
		if err := tenantCommand(ctx, "", bad, io.Discard); err == nil {
			t.Errorf("tenant %v accepted", bad)
		}
	}
	if err := tenantCommand(ctx, "", []string{"create", "--name", "Again", "--owner-email", "boss@example.com"}, io.Discard); err == nil {
		t.Error("a second tenant for the same owner e-mail was created")
	}

	a := appFor(t, config.ModeProduction)
	var stored int64
	a.Store.DB().Table("password_reset_tokens").Where("token_hash = ?", token).Count(&stored)
	if stored != 0 {
		t.Fatal("the token is stored in plain text")
	}
	srv := httptest.NewServer(a.Router())
	defer srv.Close()
	post := func(path string, body any) (int, map[string]any) {
		raw, _ := json.Marshal(body)
		resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if st, _ := post("/auth/login", map[string]string{"email": "boss@example.com", "password": ""}); st != http.StatusUnauthorized {
		t.Fatalf("login before the password is set: %d", st)
	}
	if st, body := post("/auth/reset-password", map[string]string{"token": token, "password": "short"}); st != http.StatusBadRequest {
		t.Fatalf("short password: %d %v", st, body)
	}
	st, body := post("/auth/reset-password", map[string]string{"token": token, "password": "a long new password"})
	if st != http.StatusOK || body["accessToken"] == nil {
		t.Fatalf("reset: %d %v", st, body)
	}
	if st, body := post("/auth/reset-password", map[string]string{"token": token, "password": "another new password"}); st != http.StatusUnauthorized {
		t.Fatalf("token used twice: %d %v", st, body)
	}
	st, body = post("/auth/login", map[string]string{"email": "boss@example.com", "password": "a long new password"})
	if st != http.StatusOK {
		t.Fatalf("login with the new password: %d %v", st, body)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/users", nil)
	req.Header.Set("Authorization", "Bearer "+body["accessToken"].(string))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var users struct {
		Users []struct{ Email, Name, Role string } `json:"users"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&users)
	if len(users.Users) != 1 || users.Users[0].Role != "owner" || users.Users[0].Name != "Bo Ss" || users.Users[0].Email != "boss@example.com" {
		t.Fatalf("users %+v", users)
	}
}

// TestTenantPlan opens a tenant on the team plan and moves it with `causeway
// tenant plan`: each plan's quotas come from CAUSEWAY_PLAN_* (free's from
// CAUSEWAY_QUOTA_*), the month's usage survives the change, and bad input
// changes nothing.
func TestTenantPlan(t *testing.T) {
	dbURL := testdb.URL(t)
	for k, v := range map[string]string{
		"CAUSEWAY_DATABASE_URL": dbURL, "CAUSEWAY_DATA_DIR": t.TempDir(), "CAUSEWAY_LOG_LEVEL": "warn",
		"CAUSEWAY_AUTH_JWT_SECRET": strings.Repeat("s", 40), "CAUSEWAY_SECRETS_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"CAUSEWAY_QUOTA_EVENTS_PER_MONTH": "7", "CAUSEWAY_QUOTA_INVESTIGATIONS_PER_MONTH": "3",
		"CAUSEWAY_PLAN_TEAM_EVENTS_PER_MONTH": "70", "CAUSEWAY_PLAN_TEAM_INVESTIGATIONS_PER_MONTH": "30",
		"CAUSEWAY_PLAN_ENTERPRISE_EVENTS_PER_MONTH": "0", "CAUSEWAY_PLAN_ENTERPRISE_INVESTIGATIONS_PER_MONTH": "300",
	} {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	var out bytes.Buffer
	if err := tenantCommand(ctx, "", []string{"create", "--name", "Planned", "--owner-email", "plan@example.com", "--plan", "team"}, &out); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out.String())
	}
	id := regexp.MustCompile(`ten_[A-Za-z0-9]+`).FindString(out.String())
	if err := tenantCommand(ctx, "", []string{"create", "--name", "Bad", "--owner-email", "bad@example.com", "--plan", "gold"}, io.Discard); err == nil {
		t.Fatal("a tenant was created on an unknown plan")
	}
	a := appFor(t, config.ModeProduction)
	read := func() (plan string, events, investigations int) {
		row := a.Store.DB().Table("tenants").Select("plan, quota_events, quota_investigations").Where("id = ?", id).Row()
		if err := row.Scan(&plan, &events, &investigations); err != nil {
			t.Fatal(err)
		}
		return
	}
	if p, e, i := read(); p != "team" || e != 70 || i != 30 {
		t.Fatalf("created as %s %d/%d, want team 70/30", p, e, i)
	}
	period := time.Now().UTC().Format("2006-01")
	if err := a.Store.DB().Exec("INSERT INTO usage_counters (tenant_id, period, events, investigations) VALUES (?, ?, 12, 4)", id, period).Error; err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := tenantCommand(ctx, "", []string{"plan", id, "enterprise"}, &out); err != nil {
		t.Fatalf("tenant plan: %v", err)
	}
	if !strings.Contains(out.String(), "unlimited events and 300 investigations") {
		t.Fatalf("output: %s", out.String())
	}
	if p, e, i := read(); p != "enterprise" || e != 0 || i != 300 {
		t.Fatalf("after the change %s %d/%d, want enterprise 0/300", p, e, i)
	}
	for _, bad := range [][]string{{"plan", id, "gold"}, {"plan", "ten_nobody", "team"}, {"plan", id}} {
		if err := tenantCommand(ctx, "", bad, io.Discard); err == nil {
			t.Errorf("tenant %v accepted", bad)
		}
	}
	if err := tenantCommand(ctx, "", []string{"plan", id, "free"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if p, e, i := read(); p != "free" || e != 7 || i != 3 {
		t.Fatalf("after the downgrade %s %d/%d, want free 7/3", p, e, i)
	}
	var ev, inv int
	if err := a.Store.DB().Table("usage_counters").Select("events, investigations").Where("tenant_id = ? AND period = ?", id, period).Row().Scan(&ev, &inv); err != nil || ev != 12 || inv != 4 {
		t.Fatalf("usage after two changes: %d/%d %v, want 12/4", ev, inv, err)
	}
	// A release that changes the free plan's quotas reaches its tenants at migrate.
	t.Setenv("CAUSEWAY_QUOTA_EVENTS_PER_MONTH", "8")
	if err := migrate(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if p, e, _ := read(); p != "free" || e != 8 {
		t.Fatalf("after migrate %s %d, want free 8", p, e)
	}
}

// TestAdminCommandsUseMakeRunsKeys: against `make run`'s installation, with
// nothing but its data dir in the environment, the operator's commands read
// the keys `make run` generated, work on its database, and what they make is
// usable by `make run` itself.
func TestAdminCommandsUseMakeRunsKeys(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CAUSEWAY_DATA_DIR", dir)
	t.Setenv("CAUSEWAY_LOG_LEVEL", "warn")
	t.Setenv("CAUSEWAY_DATABASE_URL", "")
	if _, err := config.Load("", config.ModeDev); err != nil { // what `make run` does first
		t.Fatal(err)
	}
	if err := run([]string{"migrate"}); err != nil {
		t.Fatalf("migrate against make run's data dir: %v", err)
	}
	var out bytes.Buffer
	if err := tenantCommand(context.Background(), "", []string{"create", "--name", "Laptop", "--owner-email", "me@example.com"}, &out); err != nil {
		t.Fatalf("tenant create against make run's data dir: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`(?m)^\s+(crt_[A-Za-z0-9_-]+)\s*$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no token printed:\n%s", out.String())
	}
	// The commands read make run's installation with make run's settings:
	// what a tenant's sources reach is what make run gives them.
	id := regexp.MustCompile(`ten_[A-Za-z0-9]+`).FindString(out.String())
	out.Reset()
	if err := tenantCommand(context.Background(), "", []string{"networks", id}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "CAUSEWAY_DATASOURCE_GRANT_ALL is on") || strings.Contains(got, "Ceiling (CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS): none") {
		t.Errorf("tenant networks against make run's data dir:\n%s", got)
	}
	a := appFor(t, config.ModeDev)
	srv := httptest.NewServer(a.Router())
	defer srv.Close()
	body, _ := json.Marshal(map[string]string{"token": m[1], "password": "my laptop password"})
	resp, err := http.Post(srv.URL+"/auth/reset-password", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("make run does not know the tenant the command made: %d", resp.StatusCode)
	}
	// Nothing is generated for a command: an empty data dir is still refused.
	t.Setenv("CAUSEWAY_DATA_DIR", t.TempDir())
	if err := run([]string{"migrate"}); err == nil || !strings.Contains(err.Error(), "SECRETS_KEY") {
		t.Errorf("migrate with no keys anywhere = %v, want an error naming CAUSEWAY_SECRETS_KEY", err)
	}
}

// TestTenantNetworks grants a tenant networks with `causeway tenant
// networks`: a grant inside the ceiling is stored and printed with what it
// reaches, one reaching past the ceiling is refused and changes nothing,
// and --clear and "none" withdraw it.
func TestTenantNetworks(t *testing.T) {
	commandEnv(t, t.TempDir())
	t.Setenv("CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS", "10.0.0.0/8,192.168.0.0/16")
	ctx := context.Background()
	var out bytes.Buffer
	if err := tenantCommand(ctx, "", []string{"create", "--name", "Net", "--owner-email", "net@example.com"}, &out); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out.String())
	}
	id := regexp.MustCompile(`ten_[A-Za-z0-9]+`).FindString(out.String())
	a := appFor(t, config.ModeProduction)
	stored := func() string {
		var s string
		if err := a.Store.DB().Table("tenants").Select("data_source_networks").Where("id = ?", id).Row().Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	out.Reset()
	if err := tenantCommand(ctx, "", []string{"networks", id, "10.20.0.0/16", "192.168.7.9"}, &out); err != nil {
		t.Fatalf("grant: %v\n%s", err, out.String())
	}
	if got := stored(); got != "10.20.0.0/16,192.168.7.9/32" {
		t.Fatalf("stored grant %q", got)
	}
	if !strings.Contains(out.String(), "Its data sources reach, besides public addresses: 10.20.0.0/16,192.168.7.9/32") {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, bad := range [][]string{{"networks", id, "10.20.0.0/16", "127.0.0.0/8"}, {"networks", id, "0.0.0.0/0"}, {"networks", id, "not-a-cidr"},
		{"networks", "ten_nobody", "10.0.0.0/8"}, {"networks", id, "10.0.0.0/8", "--clear"}, {"networks"}} {
		if err := tenantCommand(ctx, "", bad, io.Discard); err == nil {
			t.Errorf("tenant %v accepted", bad)
		}
	}
	if got := stored(); got != "10.20.0.0/16,192.168.7.9/32" {
		t.Fatalf("a refused grant changed the stored one to %q", got)
	}
	out.Reset()
	if err := tenantCommand(ctx, "", []string{"networks", id}, &out); err != nil || !strings.Contains(out.String(), "is granted: 10.20.0.0/16,192.168.7.9/32") {
		t.Fatalf("printing the grant: %v\n%s", err, out.String())
	}
	for _, withdraw := range [][]string{{"networks", id, "--clear"}, {"networks", "--clear", id}, {"networks", id, "none"}} {
		if err := tenantCommand(ctx, "", []string{"networks", id, "10.1.0.0/16"}, io.Discard); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := tenantCommand(ctx, "", withdraw, &out); err != nil || stored() != "" || !strings.Contains(out.String(), "is granted: none") {
			t.Fatalf("%v: %v, stored %q\n%s", withdraw, err, stored(), out.String())
		}
	}
}

// appFor is the application of the configuration the commands load in
// mode, closed when t ends: what a server on the same installation sees.
func appFor(t *testing.T, mode config.Mode) *app.App {
	t.Helper()
	cfg, err := config.Load("", mode)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
