package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// Crash test shape: a burst of crashAlerts unique alerts from crashSenders
// goroutines, and the API process SIGKILLed once crashKillAfter of them were
// answered, so some requests are acknowledged, some are in flight and some never
// reach the process.
const (
	crashAlerts    = 300
	crashSenders   = 16
	crashKillAfter = 100
	crashRetries   = 8
)

// apiChild is the production API binary running as a separate process, so it can
// be killed without any chance to clean up.
type apiChild struct {
	cmd    *exec.Cmd
	url    string
	exited chan struct{}
	stderr *lockedWriter
}

// buildAPI compiles ./cmd/api once into the test's temp dir.
func buildAPI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "causeway-api")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/api")
	cmd.Dir = repoFile()
	if os.Getenv("GOTOOLCHAIN") == "" {
		// go.mod may pin a newer toolchain than the one on PATH.
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/api: %v\n%s", err, out)
	}
	return bin
}

// childEnv is the parent's environment without any CAUSEWAY_* setting, plus cfg's
// settings as CAUSEWAY_* variables, the way an operator configures the binary.
func childEnv(cfg *config.Config) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAUSEWAY_") {
			env = append(env, kv)
		}
	}
	// LOG_LEVEL is info for the line that names the port the child bound.
	set := map[string]string{
		"HTTP_ADDR":                      cfg.HTTPAddr,
		"DATA_DIR":                       cfg.DataDir,
		"LOG_LEVEL":                      "info",
		"TEMPORAL_ADDRESS":               stack.FrontendAddress(),
		"TEMPORAL_NAMESPACE":             cfg.TemporalNamespace,
		"TEMPORAL_TASK_QUEUE":            cfg.TemporalTaskQueue,
		"AUTH_JWT_SECRET":                cfg.AuthJWTSecret,
		"SECRETS_KEY":                    cfg.SecretsKey,
		"EGRESS_ALLOW_PRIVATE":           strconv.FormatBool(cfg.EgressAllowPrivate),
		"QUOTA_EVENTS_PER_MONTH":         strconv.Itoa(cfg.QuotaEventsPerMonth),
		"QUOTA_INVESTIGATIONS_PER_MONTH": strconv.Itoa(cfg.QuotaInvestigationsPerMonth),
		"RATE_LIMIT_PER_MINUTE":          strconv.Itoa(cfg.RateLimitPerMinute),
		"AUTH_SIGNUP_ENABLED":            strconv.FormatBool(cfg.AuthSignupEnabled),
	}
	if cfg.DatabaseURL != "" {
		set["DATABASE_URL"] = cfg.DatabaseURL
	}
	for k, v := range set {
		env = append(env, "CAUSEWAY_"+k+"="+v)
	}
	return env
}

// listeningLine is the child's log line naming the address it bound.
var listeningLine = regexp.MustCompile(`"msg":"api listening","addr":"([^"]+)"`)

// startAPI runs bin with cfg (its HTTP address with port 0, so the kernel picks a
// free port that nothing else can take in between), reads the bound address from
// the child's log and waits until /health answers there.
func startAPI(t testing.TB, bin string, cfg *config.Config) *apiChild {
	t.Helper()
	stderr := &lockedWriter{w: &bytes.Buffer{}}
	c := &apiChild{exited: make(chan struct{}), stderr: stderr}
	c.cmd = exec.Command(bin)
	c.cmd.Env = childEnv(cfg)
	c.cmd.Stdout = io.Discard
	c.cmd.Stderr = stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start api: %v", err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.kill)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c.url == "" {
			if m := listeningLine.FindStringSubmatch(stderr.String()); m != nil {
				c.url = "http://" + m[1]
			}
		}
		if c.url != "" {
			resp, err := http.Get(c.url + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return c
				}
			}
		}
		select {
		case <-c.exited:
			t.Fatalf("api exited during start: %s", c.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("api not healthy after 20s: %s", c.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill SIGKILLs the process (no shutdown hook runs) and waits until it is gone.
func (c *apiChild) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

func (c *apiChild) log() string {
	s := c.stderr.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// lockedWriter lets exec's copier and the test read the child's stderr safely.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// String is what was written so far.
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// crashOutcome is what the sender learned about one alert.
type crashOutcome struct {
	status     int // 0: no answer
	incidentID string
	err        error
}

// postAlert sends one signed custom alert to the child and decodes the answer.
func postAlert(client *http.Client, baseURL, tenantID, key, secret string, body []byte) crashOutcome {
	req, _ := http.NewRequest("POST", baseURL+"/v1/webhooks/"+tenantID+"/custom", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set(providers.HeaderSignature, "sha256="+providers.Sign([]byte(secret), body, ""))
	resp, err := client.Do(req)
	if err != nil {
		return crashOutcome{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		// The status line arrived but the body did not: the process died while
		// answering, so the caller cannot rely on it.
		return crashOutcome{err: err}
	}
	var out struct {
		IncidentID string `json:"incidentId"`
	}
	_ = json.Unmarshal(raw, &out)
	return crashOutcome{status: resp.StatusCode, incidentID: out.IncidentID}
}

// TestCrashDuringIngestBurstKeepsEveryAcknowledgedAlert kills the API process in
// the middle of a burst of unique alerts and restarts it: every 202 must stand for
// exactly one incident with exactly one workflow, an unanswered request may have
// produced at most one incident, and retrying one is deduplicated.
func TestCrashDuringIngestBurstKeepsEveryAcknowledgedAlert(t *testing.T) {
	bin := buildAPI(t)
	cfg := testConfig(t)
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.AuthJWTSecret = "crash-test-jwt-secret-0123456789abcdef"
	// One investigation per tenant: the worker then parks the burst's incidents as
	// open instead of running hundreds of analyses on a small machine.
	cfg.QuotaInvestigationsPerMonth = 1
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// cmd/api expects a migrated schema (`causeway migrate` in production).
	admin, err := models.Open(ctx, cfg.DatabaseURL, cfg.SQLitePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	admin.Close()

	child := startAPI(t, bin, cfg)
	api := &env{URL: child.url}
	token, tenantID := api.signup(t, "crash")
	key, secret := api.hookKey(t, token)

	run := strings.ToLower(strconv.FormatInt(time.Now().UnixNano(), 36))
	alertID := func(i int) string { return fmt.Sprintf("crash-%s-%03d", run, i) }
	bodies := make([][]byte, crashAlerts)
	for i := range bodies {
		bodies[i], _ = json.Marshal(firing(alertID(i)))
	}

	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: crashSenders, DisableCompression: true},
	}
	t.Cleanup(client.CloseIdleConnections)
	outcomes := make([]crashOutcome, crashAlerts)
	var answered atomic.Int64
	killed := make(chan struct{})
	var killOnce sync.Once
	_ = withWorkers(crashAlerts, crashSenders, func(i int) error {
		outcomes[i] = postAlert(client, child.url, tenantID, key, secret, bodies[i])
		if outcomes[i].status != 0 && answered.Add(1) == crashKillAfter {
			killOnce.Do(func() { child.kill(); close(killed) })
		}
		return nil
	})
	select {
	case <-killed:
	default:
		t.Fatalf("the burst finished with %d answers before the kill threshold %d", answered.Load(), crashKillAfter)
	}

	accepted := map[int]string{}
	var unanswered []int
	for i, o := range outcomes {
		switch o.status {
		case http.StatusAccepted:
			if o.incidentID == "" {
				t.Fatalf("alert %d: 202 without an incident id", i)
			}
			accepted[i] = o.incidentID
		case 0:
			unanswered = append(unanswered, i)
		default:
			t.Fatalf("alert %d: unexpected status %d", i, o.status)
		}
	}
	t.Logf("burst: %d accepted, %d unanswered of %d (database: %s)", len(accepted), len(unanswered), crashAlerts, dbKind(cfg))
	if len(accepted) < crashKillAfter-crashSenders || len(unanswered) == 0 {
		t.Fatalf("the kill did not land mid-burst: %d accepted, %d unanswered", len(accepted), len(unanswered))
	}

	// Restart the same binary with the same configuration, and bring up a worker
	// and dispatcher on the same database and task queue.
	child = startAPI(t, bin, cfg)
	wcfg := *cfg
	wcfg.HTTPAddr = "127.0.0.1:0"
	e := newEnvWith(t, &wcfg)
	api.URL = child.url

	// Retry unanswered alerts: each is either recorded already (409 naming the
	// recorded incident) or recorded now (202), and never twice.
	recordedBefore := 0
	for _, i := range unanswered[:min(crashRetries, len(unanswered))] {
		before, err := e.Store.IncidentBySourceAlert(ctx, tenantID, "custom", alertID(i))
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			t.Fatal(err)
		}
		o := postAlert(client, child.url, tenantID, key, secret, bodies[i])
		switch {
		case before != nil && (o.status != http.StatusConflict || o.incidentID != before.ID):
			t.Fatalf("retry of recorded alert %d: %d %q, want 409 naming %s", i, o.status, o.incidentID, before.ID)
		case before == nil && (o.status != http.StatusAccepted || o.incidentID == ""):
			t.Fatalf("retry of unrecorded alert %d: %d %v, want 202", i, o.status, o.err)
		}
		again := postAlert(client, child.url, tenantID, key, secret, bodies[i])
		if again.status != http.StatusConflict || again.incidentID != o.incidentID {
			t.Fatalf("second retry of alert %d: %d %q, want 409 naming %s", i, again.status, again.incidentID, o.incidentID)
		}
		if before == nil {
			accepted[i] = o.incidentID
		} else {
			recordedBefore++
		}
	}
	t.Logf("retried %d unanswered alerts: %d had been recorded before the crash (409), the rest were recorded now (202)",
		min(crashRetries, len(unanswered)), recordedBefore)

	// At most one incident per alert, exactly one per acknowledged alert, and it is
	// the incident the 202 named.
	type row struct {
		SourceAlertID string
		N             int
		ID            string
	}
	var rows []row
	if err := e.Store.DB().Model(&models.Incident{}).
		Select("source_alert_id, COUNT(*) AS n, MIN(id) AS id").
		Where("tenant_id = ? AND source = ?", tenantID, "custom").
		Group("source_alert_id").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	byAlert := map[string]row{}
	for _, r := range rows {
		if r.N != 1 {
			t.Fatalf("alert %s has %d incidents", r.SourceAlertID, r.N)
		}
		byAlert[r.SourceAlertID] = r
	}
	for i, id := range accepted {
		r, ok := byAlert[alertID(i)]
		if !ok {
			t.Fatalf("acknowledged alert %d (incident %s) has no incident after the crash", i, id)
		}
		if r.ID != id {
			t.Fatalf("acknowledged alert %d: 202 named %s, the database holds %s", i, id, r.ID)
		}
	}
	t.Logf("incidents after restart: %d (%d acknowledged, %d from unanswered requests)", len(rows), len(accepted), len(rows)-len(accepted))

	// Every incident gets its workflow once the dispatchers settle.
	eventually(t, 40*time.Second, "every incident to have its workflow", func() bool {
		var pending int64
		e.Store.DB().Model(&models.Incident{}).
			Where("tenant_id = ? AND workflow_started_at IS NULL", tenantID).Count(&pending)
		return pending == 0
	})
	for _, r := range rows {
		if !e.workflowExists(r.ID) {
			t.Fatalf("incident %s is marked started but has no workflow %s", r.ID, investigation.IncidentWorkflowID(r.ID))
		}
	}
	// Exactly one IncidentWorkflow per incident: the task queue belongs to this
	// test, so visibility must count as many as there are incidents (eventually,
	// since visibility lags).
	query := fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", investigation.IncidentWorkflowName, cfg.TemporalTaskQueue)
	eventually(t, 20*time.Second, "visibility to count one workflow per incident", func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := e.Temporal.CountWorkflow(cctx, &workflowservice.CountWorkflowExecutionsRequest{
			Namespace: cfg.TemporalNamespace, Query: query,
		})
		if err != nil {
			t.Logf("count workflows: %v", err)
			return false
		}
		return resp.GetCount() == int64(len(rows))
	})
}

func dbKind(cfg *config.Config) string {
	if cfg.DatabaseURL != "" {
		return "postgres"
	}
	return "sqlite"
}
