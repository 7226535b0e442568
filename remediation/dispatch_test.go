package remediation_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/internal/testdb"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// counter is a target that records every request's Idempotency-Key and
// answers with the next status of its script (200 once the script is spent).
type counter struct {
	mu     sync.Mutex
	keys   []string
	script []int
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.keys = append(c.keys, r.Header.Get("Idempotency-Key"))
	status := http.StatusOK
	if len(c.script) > 0 {
		status, c.script = c.script[0], c.script[1:]
	}
	c.mu.Unlock()
	w.WriteHeader(status)
}

func (c *counter) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// oneStep stores a remediation with a single step of typ and params.
func oneStep(t *testing.T, store *models.Store, typ string, params map[string]any) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	ten := &models.Tenant{ID: models.NewID("ten"), Name: "Acme", CreatedAt: now}
	u := &models.User{ID: models.NewID("usr"), Email: models.NewID("u") + "@example.com", Name: "O", Role: models.RoleOwner, CreatedAt: now}
	if err := store.CreateTenantWithOwner(ctx, ten, u); err != nil {
		t.Fatal(err)
	}
	remID := models.NewID("rem")
	rem := remediation.Remediation{ID: remID, TenantID: ten.ID, IncidentID: "inc_x", InvestigationID: "inv_x", RunbookID: "rb_x",
		Description: "d", Status: remediation.Executing, PlanHash: "h", CreatedAt: now,
		Steps: []remediation.RemediationStep{{RemediationID: remID, Index: 0, Type: typ, Description: "call", Params: params, Status: remediation.StepPending}}}
	if err := remediation.NewStore(store.DB()).ProposeRemediations(ctx, []remediation.Remediation{rem}, []models.TimelineEntry{{TenantID: ten.ID, IncidentID: "inc_x", At: now,
		Kind: "remediation_proposed", Message: "m", Actor: "causeway", DedupKey: remID + "/proposed"}}); err != nil {
		t.Fatal(err)
	}
	return remID
}

func runStep(t *testing.T, a *remediation.Activities, remID string) error {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.RunRemediationStep, remediation.StepInput{RemediationID: remID, Index: 0, Type: "http",
		IdempotencyKey: "remediation/" + remID + "/step/0"})
	return err
}

func stepAPI(t *testing.T, h http.Handler) (*httptest.Server, *remediation.Activities, *models.Store) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	store := testdb.Open(t)
	a := &remediation.Activities{Kernel: store, Store: remediation.NewStore(store.DB()), Egress: egress.NewClient(egress.Options{AllowAddrs: []netip.AddrPort{netip.MustParseAddrPort(srv.Listener.Addr().String())}})}
	return srv, a, store
}

// TestDispatchedStepIsNotSentTwice shows the exactly-once rule of request
// steps: the step is recorded as dispatched before its request leaves, and an
// attempt that finds that record (an earlier attempt sent the request and
// then its worker died, or its answer was lost) fails for a person to check
// rather than sending again, unless the step is declared idempotent, in which
// case it re-sends with the same Idempotency-Key.
func TestDispatchedStepIsNotSentTwice(t *testing.T) {
	target := &counter{}
	srv, a, store := stepAPI(t, target)
	ctx := context.Background()

	remID := oneStep(t, store, "http", map[string]any{"method": "POST", "url": srv.URL + "/scale"})
	// An earlier attempt got as far as sending: its worker died before the
	// answer was recorded.
	if _, err := remediation.NewStore(store.DB()).StartStep(ctx, remID, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := remediation.NewStore(store.DB()).MarkStepDispatched(ctx, remID, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	err := runStep(t, a, remID)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != remediation.ErrTypeStepOutcomeUnknown {
		t.Fatalf("retry of a dispatched step: %v, want a non-retryable %s", err, remediation.ErrTypeStepOutcomeUnknown)
	}
	if n := len(target.seen()); n != 0 {
		t.Fatalf("target received %d requests on the retry, want none", n)
	}

	idem := oneStep(t, store, "http", map[string]any{"method": "POST", "url": srv.URL + "/scale", "idempotent": true})
	if err := remediation.NewStore(store.DB()).MarkStepDispatched(ctx, idem, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := runStep(t, a, idem); err != nil {
		t.Fatalf("idempotent step: %v", err)
	}
	if keys := target.seen(); len(keys) != 1 || keys[0] != "remediation/"+idem+"/step/0" {
		t.Fatalf("idempotent re-send keys %v", keys)
	}
}

// TestStepRecordsDispatchBeforeSending shows the record is written before the
// request reaches the target, and withdrawn when the target refused the request
// unprocessed (503), so such a step is simply retried.
func TestStepRecordsDispatchBeforeSending(t *testing.T) {
	var store *models.Store
	var remID string
	recorded := make(chan bool, 4)
	target := &counter{script: []int{http.StatusServiceUnavailable}}
	srv, a, s := stepAPI(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rows []remediation.RemediationStep
		store.DB().Where("remediation_id = ?", remID).Find(&rows)
		recorded <- len(rows) == 1 && rows[0].DispatchedAt != nil
		target.ServeHTTP(w, r)
	}))
	store = s
	remID = oneStep(t, store, "http", map[string]any{"method": "POST", "url": srv.URL + "/scale"})
	err := runStep(t, a, remID)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.NonRetryable() {
		t.Fatalf("503: %v, want a retryable error", err)
	}
	if !<-recorded {
		t.Fatal("request arrived before the dispatch was recorded")
	}
	if err := runStep(t, a, remID); err != nil {
		t.Fatalf("retry after a 503: %v", err)
	}
	if !<-recorded || len(target.seen()) != 2 {
		t.Fatalf("target saw %v", target.seen())
	}
}
