package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/remediation"
)

// deploySystem stands in for a real deploy API that honours Idempotency-Key: a
// repeated key gets the stored answer and nothing is applied again. The first
// call of step 1 applies its effect, then hangs until the worker is killed, so
// the worker never learns that it succeeded.
type deploySystem struct {
	mu      sync.Mutex
	calls   map[string]int // requests per idempotency key
	applied map[string]int // effects applied per idempotency key
	hang    chan struct{}  // closed once the worker is dead
	hung    chan struct{}  // closed when step 1's first call arrives
	once    sync.Once
}

func (d *deploySystem) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	d.mu.Lock()
	d.calls[key]++
	first := d.applied[key] == 0
	if first {
		d.applied[key]++
	}
	d.mu.Unlock()
	if first && strings.HasSuffix(r.URL.Path, "/step/1") {
		d.once.Do(func() { close(d.hung) })
		<-d.hang
		return
	}
	w.WriteHeader(http.StatusOK)
}

// workerProcess runs the worker binary against the test's Temporal, database and
// task queue.
func workerProcess(t testing.TB, bin string, e *env, logName string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	c := e.Config
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"CAUSEWAY_TEMPORAL_ADDRESS="+stack.FrontendAddress(), "CAUSEWAY_TEMPORAL_NAMESPACE="+c.TemporalNamespace,
		"CAUSEWAY_TEMPORAL_TASK_QUEUE="+c.TemporalTaskQueue, "CAUSEWAY_DATABASE_URL="+c.DatabaseURL,
		"CAUSEWAY_DATA_DIR="+c.DataDir, "CAUSEWAY_AUTH_JWT_SECRET="+c.AuthJWTSecret, "CAUSEWAY_SECRETS_KEY="+c.SecretsKey,
		"CAUSEWAY_EGRESS_ALLOW_PRIVATE=true", "CAUSEWAY_LOG_LEVEL=warn", "CAUSEWAY_HTTP_ADDR=127.0.0.1:0",
		"CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS="+c.DataSourceAllowedNetworks, "CAUSEWAY_DATASOURCE_GRANT_ALL="+strconv.FormatBool(c.DataSourceGrantAll))
	cmd.Env = append(cmd.Env, extraEnv...)
	logf, err := os.Create(filepath.Join(t.TempDir(), logName))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s:\n%s", logName, b)
		}
	})
	return cmd
}

// buildWorker compiles ./cmd/worker into the test's temp dir.
func buildWorker(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "worker")
	build := exec.Command("go", "build", "-o", bin, "./cmd/worker")
	build.Dir = repoFile()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build worker: %v\n%s", err, out)
	}
	return bin
}

// crashMidStep runs a three-step http remediation against a deploySystem with
// the worker as a separate process, and SIGKILLs that process while step 2's
// request is at the target. The target then applies it (its answer goes
// nowhere) and a new worker starts. The steps declare idempotent as given.
func crashMidStep(t *testing.T, idempotent bool) (e *env, owner, incID, remID string, target *deploySystem) {
	t.Helper()
	bin := buildWorker(t)
	target = &deploySystem{calls: map[string]int{}, applied: map[string]int{}, hang: make(chan struct{}), hung: make(chan struct{})}
	srv := httptest.NewServer(target)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-target.hang:
		default:
			close(target.hang)
		}
	})

	e = startEnv(t, testConfig(t), false)
	first := workerProcess(t, bin, e, "worker-1.log")
	owner, _ = e.signup(t, "Acme")
	step := func(i int) map[string]any {
		params := map[string]any{"method": "POST", "url": srv.URL + "/deploy/{{.IncidentID}}/step/" + strconv.Itoa(i), "expectStatus": 200}
		if idempotent {
			params["idempotent"] = true
		}
		return map[string]any{"type": "http", "description": "step " + strconv.Itoa(i), "params": params}
	}
	e.createRunbook(t, owner, "three calls", step(0), step(1), step(2))
	incID, rems := e.investigatedIncident(t, owner, 1)
	remID = rems[0].RemediationID
	expectCall(t, e, "approve", "POST", "/v1/remediation/"+remID+"/approve", owner, nil, http.StatusOK, "")
	expectCall(t, e, "execute", "POST", "/v1/remediation/"+remID+"/execute", owner, nil, http.StatusOK, "")

	select {
	case <-target.hung:
	case <-time.After(time.Minute):
		t.Fatal("step 2 never reached the target")
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL: no graceful shutdown
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()
	close(target.hang)
	workerProcess(t, bin, e, "worker-2.log")
	return e, owner, incID, remID, target
}

// TestRemediationExactlyOnceAcrossWorkerCrash kills the worker process while step
// 2 of 3 is in flight, starts a new one, and shows the remediation completes with
// every step's effect applied once at the target. The steps declare
// idempotent: true (the target honours Idempotency-Key), so the step whose
// outcome the crash hid is sent again with the same key.
func TestRemediationExactlyOnceAcrossWorkerCrash(t *testing.T) {
	e, owner, incID, remID, target := crashMidStep(t, true)
	rem := remediationJSON{RemediationID: remID}
	eventually(t, 2*time.Minute, "remediation to complete after the crash", func() bool {
		return e.remediation(t, owner, incID, rem.RemediationID).Status == remediation.Completed
	})
	done := e.remediation(t, owner, incID, rem.RemediationID)
	target.mu.Lock()
	defer target.mu.Unlock()
	if len(target.applied) != 3 {
		t.Fatalf("keys seen %v, want 3", target.calls)
	}
	for key, n := range target.applied {
		if n != 1 {
			t.Errorf("effect of %s applied %d times", key, n)
		}
	}
	key1 := "remediation/" + rem.RemediationID + "/step/1"
	if target.calls[key1] < 2 || done.Steps[1].Attempts < 2 {
		t.Errorf("step 2: %d calls, %d attempts; want it retried after the crash", target.calls[key1], done.Steps[1].Attempts)
	}
	for _, s := range done.Steps {
		if s.Status != remediation.StepCompleted {
			t.Errorf("step %+v", s)
		}
	}
}

// TestNonIdempotentStepAtMostOnceAcrossWorkerCrash kills the worker process
// while a step's request is at the target, which applies it and answers after
// the worker is gone. The step does not declare idempotent, so the new worker
// must not send it again: the target sees the request once, and the
// remediation fails at that step with a reason that asks a person to check.
func TestNonIdempotentStepAtMostOnceAcrossWorkerCrash(t *testing.T) {
	e, owner, incID, remID, target := crashMidStep(t, false)
	rem := remediationJSON{RemediationID: remID}
	eventually(t, 2*time.Minute, "remediation to fail after the crash", func() bool {
		return e.remediation(t, owner, incID, rem.RemediationID).Status == remediation.Failed
	})
	done := e.remediation(t, owner, incID, rem.RemediationID)
	target.mu.Lock()
	defer target.mu.Unlock()
	for key, n := range target.calls {
		if n != 1 {
			t.Errorf("%s sent %d times, want at most once", key, n)
		}
	}
	if len(target.calls) != 2 {
		t.Errorf("keys seen %v, want steps 1 and 2 only", target.calls)
	}
	s1 := done.Steps[1]
	if s1.Status != remediation.StepFailed || !strings.Contains(s1.Error, "StepOutcomeUnknown") || !strings.Contains(s1.Error, "check the target") {
		t.Errorf("step 2: %+v", s1)
	}
	if done.Steps[2].Status != remediation.StepPending || !strings.Contains(done.FailureReason, "outcome is unknown") {
		t.Errorf("remediation %+v", done)
	}
}
