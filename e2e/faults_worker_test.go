//go:build faults

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// Shape of the worker-kill test: wkIncidents alerts, each ending in one
// remediation, while the worker process is SIGKILLed at random moments
// wkKillMin to wkKillMax apart (at most wkMaxKills times), every other kill
// aimed at a moment when a step's request waits at the target for its answer.
// The kills stop once fewer than wkKillWhile incidents are unfinished: aimed at
// the last few, they would strike the same step again and again, which tests
// how many lost workers a step's retry budget allows rather than a crash at a
// random point.
const (
	wkIncidents = 50
	wkMaxKills  = 16
	wkKillMin   = 1500 * time.Millisecond
	wkKillMax   = 5 * time.Second
	wkKillWhile = 10
)

// changeTarget is the system the remediations change. Requests to /plain/ are
// applied every time they arrive, as by an API that knows nothing of
// Idempotency-Key; requests to /keyed/ are applied once per key, as by one that
// honours it; /verify/ only answers. Each request's effect is applied when it
// arrives and the answer follows a moment later, so a worker killed in between
// never learns the outcome of a change that happened.
type changeTarget struct {
	mu       sync.Mutex
	rng      *rand.Rand
	requests map[string]int            // per path
	applied  map[string]int            // effects per path
	keys     map[string]map[string]int // Idempotency-Keys seen per path
	inFlight atomic.Int64
	caught   int // kills that found a request waiting for its answer
}

func newChangeTarget(seed uint64) *changeTarget {
	return &changeTarget{rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), requests: map[string]int{}, applied: map[string]int{}, keys: map[string]map[string]int{}}
}

func (s *changeTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	p := r.URL.Path
	s.requests[p]++
	if s.keys[p] == nil {
		s.keys[p] = map[string]int{}
	}
	s.keys[p][key]++
	switch {
	case strings.HasPrefix(p, "/plain/"):
		s.applied[p]++
	case strings.HasPrefix(p, "/keyed/") && s.keys[p][key] == 1:
		s.applied[p]++
	}
	delay := time.Duration(100+s.rng.IntN(500)) * time.Millisecond
	s.mu.Unlock()
	time.Sleep(delay)
	w.WriteHeader(http.StatusOK)
}

// counts returns the requests, effects and distinct keys at path.
func (s *changeTarget) counts(path string) (requests, applied, keys int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path], s.applied[path], len(s.keys[path])
}

// workerSupervisor runs the worker binary and kills it on demand.
type workerSupervisor struct {
	t    *testing.T
	bin  string
	e    *env
	mu   sync.Mutex
	cmd  *exec.Cmd
	runs int
}

func (w *workerSupervisor) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs++
	// Verification after the steps runs within the test, not 10 min later.
	w.cmd = workerProcess(w.t, w.bin, w.e, fmt.Sprintf("worker-%d.log", w.runs), "CAUSEWAY_REMEDIATION_VERIFY_AFTER=1s")
}

// kill SIGKILLs the running worker: no shutdown hook, no graceful drain.
func (w *workerSupervisor) kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.cmd.Process.Signal(os.Kill)
	_ = w.cmd.Wait()
}

// TestFaultWorkerKilledDuringRemediations runs 50 incidents from alert to
// resolution, each with a remediation of two HTTP changes, a wait and a
// verification, while the worker process is SIGKILLed at random moments and
// started again. Every incident and remediation must reach a final state, and
// no change may take effect twice: a step the target does not deduplicate is
// sent at most once (a remediation whose crash hid such a step's outcome fails
// at that step, saying so, instead of sending it again), and a step declared
// idempotent is re-sent only with its own Idempotency-Key, so the target
// applies it once.
func TestFaultWorkerKilledDuringRemediations(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CAUSEWAY_FAULT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set CAUSEWAY_FAULT_SEED to repeat the kill schedule)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	bin := filepath.Join(t.TempDir(), "worker")
	build := exec.Command("go", "build", "-o", bin, "./cmd/worker")
	build.Dir = repoFile()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build worker: %v\n%s", err, out)
	}
	target := newChangeTarget(seed)
	srv := httptest.NewServer(target)
	t.Cleanup(srv.Close)

	e := startEnv(t, testConfig(t), false)
	workers := &workerSupervisor{t: t, bin: bin, e: e}
	workers.start()
	owner, tenantID := e.signup(t, "worker-kill")
	key, secret := e.hookKey(t, owner)
	// The runbook matches every category, so each pass proposes it. Step 2
	// declares that its target honours Idempotency-Key.
	steps := []any{
		map[string]any{"type": "http", "description": "scale out (not idempotent)",
			"params": map[string]any{"method": "POST", "url": srv.URL + "/plain/{{.IncidentID}}", "expectStatus": 200}},
		map[string]any{"type": "wait", "description": "let it settle", "params": map[string]any{"duration": "1s"}},
		map[string]any{"type": "http", "description": "shift traffic (idempotent)",
			"params": map[string]any{"method": "POST", "url": srv.URL + "/keyed/{{.IncidentID}}", "expectStatus": 200, "idempotent": true}},
		map[string]any{"type": "verification", "description": "service answers",
			"params": map[string]any{"url": srv.URL + "/verify/{{.IncidentID}}", "expectStatus": 200, "timeout": "5s", "retries": 3}},
	}
	if st, raw, _ := e.raw(t, "POST", "/v1/runbooks", owner, map[string]any{"name": "scale out and verify", "description": "fault test",
		"match": map[string]any{"categories": analyzer.Categories}, "steps": steps}); st != http.StatusCreated {
		t.Fatalf("create runbook: %d %s", st, raw)
	}

	// The killer: SIGKILL at random moments until every incident is done, each
	// time starting a new worker after a random pause. Uniformly random moments
	// mostly fall between steps (a step's request is a small part of the run),
	// so every other kill waits for a request at the target and strikes while
	// it waits for its answer.
	done := make(chan struct{})
	var unfinished atomic.Int64
	unfinished.Store(wkIncidents)
	var kills []string
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for len(kills) < wkMaxKills {
			select {
			case <-done:
				return
			case <-time.After(wkKillMin + time.Duration(rng.Int64N(int64(wkKillMax-wkKillMin)))):
			}
			if unfinished.Load() < wkKillWhile {
				return
			}
			if len(kills)%2 == 1 {
				for target.inFlight.Load() == 0 {
					select {
					case <-done:
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
				time.Sleep(time.Duration(rng.Int64N(int64(80 * time.Millisecond))))
			}
			waiting := target.inFlight.Load()
			workers.kill()
			if waiting > 0 {
				target.mu.Lock()
				target.caught++
				target.mu.Unlock()
			}
			kills = append(kills, strconv.FormatInt(waiting, 10))
			time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
			workers.start()
		}
	}()

	// Each incident from alert to resolution, the way an operator drives it.
	type result struct {
		incidentID, remediationID string
		err                       error
	}
	results := make([]result, wkIncidents)
	var wg sync.WaitGroup
	for i := range wkIncidents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer unfinished.Add(-1)
			r := &results[i]
			r.incidentID, r.remediationID, r.err = driveIncident(t, e, owner, tenantID, key, secret, fmt.Sprintf("wk-%d-%02d", seed%1e6, i))
		}()
	}
	wg.Wait()
	close(done)
	<-killerDone
	t.Logf("worker killed %d times, %d of them while a step's request waited for its answer (requests waiting at each kill: %s)",
		len(kills), target.caught, strings.Join(kills, " "))
	if target.caught == 0 {
		t.Errorf("no kill struck while a step's request waited for its answer; the test proved nothing about steps")
	}
	for i, r := range results {
		if r.err != nil {
			t.Errorf("incident %d (%s): %v", i, r.incidentID, r.err)
		}
	}
	if t.Failed() {
		return
	}

	// Every incident and remediation is final, and every change took effect at
	// most once; a completed step's change took effect exactly once.
	ctx := context.Background()
	var completed, failed, plainSent, keyedApplied, keyedResent int
	for _, r := range results {
		rem := e.remediation(t, owner, r.incidentID, r.remediationID)
		plainReq, plainApplied, plainKeys := target.counts("/plain/" + r.incidentID)
		keyedReq, keyedEff, keyedKeys := target.counts("/keyed/" + r.incidentID)
		verifyReq, _, _ := target.counts("/verify/" + r.incidentID)
		plainSent += plainReq
		keyedApplied += keyedEff
		keyedResent += keyedReq - keyedEff
		if plainReq > 1 || plainApplied > 1 || keyedEff > 1 || plainKeys > 1 || keyedKeys > 1 {
			t.Errorf("incident %s: not idempotent step sent %d times, idempotent step applied %d times from %d requests with %d keys",
				r.incidentID, plainReq, keyedEff, keyedReq, keyedKeys)
		}
		switch rem.Status {
		case remediation.Completed:
			completed++
			for _, s := range rem.Steps {
				if s.Status != remediation.StepCompleted {
					t.Errorf("remediation %s completed with step %d %s", rem.RemediationID, s.Index, s.Status)
				}
			}
			if plainApplied != 1 || keyedEff != 1 || verifyReq < 1 {
				t.Errorf("remediation %s completed: changes applied %d and %d times, %d probes; want once, once, at least one",
					rem.RemediationID, plainApplied, keyedEff, verifyReq)
			}
		case remediation.Failed:
			failed++
			// The one legitimate failure: the crash hid whether the change that
			// is not idempotent was applied, and the step stops for a person
			// instead of risking it twice. Nothing after it ran.
			if len(rem.Steps) != 4 {
				t.Errorf("remediation %s has %d steps", rem.RemediationID, len(rem.Steps))
				continue
			}
			s0 := rem.Steps[0]
			if s0.Status != remediation.StepFailed || !strings.Contains(s0.Error, "StepOutcomeUnknown") {
				t.Errorf("remediation %s failed at %+v (reason %q); the only acceptable failure is step 0 with its outcome unknown",
					rem.RemediationID, rem.Steps, rem.FailureReason)
			}
			if keyedReq != 0 || verifyReq != 0 {
				t.Errorf("remediation %s failed at step 0 but later steps reached the target (%d, %d requests)", rem.RemediationID, keyedReq, verifyReq)
			}
		default:
			t.Errorf("remediation %s is %s, not final", rem.RemediationID, rem.Status)
		}
		// A completed remediation's workflow verifies it a second later, then
		// ends; a verification whose worker was killed is retried once its
		// one-minute timeout has passed.
		var st enumspb.WorkflowExecutionStatus
		if !poll(90*time.Second, func() bool {
			st = e.workflowStatus(ctx, remediation.WorkflowID(r.remediationID))
			return st == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		}) {
			t.Errorf("remediation workflow %s: %s", r.remediationID, st)
		}
		if st := e.workflowStatus(ctx, investigation.IncidentWorkflowID(r.incidentID)); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Errorf("incident workflow %s: %s", r.incidentID, st)
		}
	}
	byStatus := incidentStatuses(t, e, tenantID)
	if byStatus[models.StatusResolved] != wkIncidents || len(byStatus) != 1 {
		t.Errorf("incidents %v, want all %d resolved", byStatus, wkIncidents)
	}
	t.Logf("%d incidents resolved; remediations: %d completed, %d failed with the outcome unknown; "+
		"not-idempotent changes sent %d times, idempotent changes applied %d times (%d re-sends with the same key)",
		byStatus[models.StatusResolved], completed, failed, plainSent, keyedApplied, keyedResent)
}

// workflowStatus is the status of the workflow's latest run.
func (e *env) workflowStatus(ctx context.Context, id string) enumspb.WorkflowExecutionStatus {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := e.Temporal.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED
	}
	return d.GetWorkflowExecutionInfo().GetStatus()
}

// driveIncident posts one alert and takes its incident through its remediation
// to resolution the way an operator would: approve and execute once the
// remediation is proposed, wait for it to finish, resolve. A 503 (the worker
// is down, so a workflow cannot answer) is retried; a 409 means an earlier
// attempt went through, which the remediation's status confirms.
func driveIncident(t *testing.T, e *env, token, tenantID, key, secret, alertID string) (incidentID, remediationID string, err error) {
	body := mustJSON(firing(alertID))
	o := postAlert(http.DefaultClient, e.URL, tenantID, key, secret, body)
	if o.status != http.StatusAccepted {
		return "", "", fmt.Errorf("alert: %d %v", o.status, o.err)
	}
	incidentID = o.incidentID
	var rem remediationJSON
	if !poll(5*time.Minute, func() bool {
		var out struct {
			Remediations []remediationJSON `json:"remediations"`
		}
		if st, _ := callQuiet(e, "GET", "/v1/remediation/"+incidentID, token, &out); st != http.StatusOK || len(out.Remediations) == 0 {
			return false
		}
		rem = out.Remediations[0]
		return true
	}) {
		return incidentID, "", fmt.Errorf("no remediation proposed within 5m")
	}
	remediationID = rem.RemediationID
	status := func() string {
		var out struct {
			Remediations []remediationJSON `json:"remediations"`
		}
		callQuiet(e, "GET", "/v1/remediation/"+incidentID, token, &out)
		for _, r := range out.Remediations {
			if r.RemediationID == remediationID {
				return r.Status
			}
		}
		return ""
	}
	for _, step := range []struct{ action, from string }{{"approve", remediation.AwaitingApproval}, {"execute", remediation.Approved}} {
		if !poll(5*time.Minute, func() bool {
			st, _ := callQuiet(e, "POST", "/v1/remediation/"+remediationID+"/"+step.action, token, nil)
			if st == http.StatusOK {
				return true
			}
			s := status()
			return s != "" && s != step.from
		}) {
			return incidentID, remediationID, fmt.Errorf("%s did not go through within 5m (status %s)", step.action, status())
		}
	}
	if !poll(5*time.Minute, func() bool {
		s := status()
		return s == remediation.Completed || s == remediation.Failed
	}) {
		return incidentID, remediationID, fmt.Errorf("remediation %s not final within 5m: %s", remediationID, status())
	}
	if !poll(3*time.Minute, func() bool {
		st, _ := callQuiet(e, "POST", "/v1/incidents/"+incidentID+"/resolve", token, nil)
		return st == http.StatusOK || st == http.StatusConflict
	}) {
		return incidentID, remediationID, fmt.Errorf("resolve did not go through within 3m")
	}
	if !poll(3*time.Minute, func() bool {
		return e.workflowStatus(context.Background(), investigation.IncidentWorkflowID(incidentID)) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}) {
		return incidentID, remediationID, fmt.Errorf("incident workflow not completed within 3m")
	}
	return incidentID, remediationID, nil
}

// callQuiet is call for goroutines other than the test's: failures come back
// as status 0 instead of ending the test.
func callQuiet(e *env, method, path, token string, out any) (int, error) {
	req, err := http.NewRequest(method, e.URL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := patientClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return 0, err
		}
	}
	return resp.StatusCode, nil
}

// poll checks cond every 200 ms until it holds (true) or within passes (false).
func poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}
