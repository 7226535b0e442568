//go:build faults

package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// verificationFault is a remediated incident whose verification waits wait
// on a worker process of its own: the stage both verification faults start
// from.
type verificationFault struct {
	e                      *env
	bin, verifyAfter       string
	worker                 *exec.Cmd
	proxy                  *switchingProxy
	incID, remID, tenantID string
}

// newVerificationFault investigates and remediates an incident over a sick
// Prometheus behind a proxy, which fix points at a healthy one before the
// steps run.
func newVerificationFault(t *testing.T, wait time.Duration, fix func(f *verificationFault, healthyURL string)) *verificationFault {
	f := &verificationFault{e: startEnv(t, testConfig(t), false), bin: buildWorker(t),
		verifyAfter: "CAUSEWAY_REMEDIATION_VERIFY_AFTER=" + wait.String()}
	f.worker = workerProcess(t, f.bin, f.e, "worker-1.log", f.verifyAfter)
	sick := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	healthy := testenv.Prometheus(t, promlab.Healthy(scenarioTarget))
	f.proxy = newSwitchingProxy(t, sick.URL)
	f.incID, f.remID, f.tenantID, _ = remediatedIncident(t, f.e, f.proxy, func() { fix(f, healthy.URL) })
	return f
}

// verifiedOnce waits for a second worker's verification and asserts it
// recovered and was recorded once: one outcome, one timeline entry, one
// remediation.verified event, and the workflow completed.
func (f *verificationFault) verifiedOnce(t *testing.T) {
	t.Helper()
	e, ctx := f.e, context.Background()
	if v := awaitVerification(t, e, f.tenantID, f.remID); v.Outcome != models.OutcomeRecovered {
		t.Fatalf("verification %+v", v)
	}
	eventually(t, time.Minute, "the remediation workflow to complete", func() bool {
		return e.workflowStatus(ctx, remediation.WorkflowID(f.remID)) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	var entries, outcomes int64
	if err := e.Store.DB().Model(&models.TimelineEntry{}).Where("tenant_id = ? AND incident_id = ? AND kind = ?", f.tenantID, f.incID, "remediation_verified").
		Count(&entries).Error; err != nil {
		t.Fatal(err)
	}
	if err := e.Store.DB().Model(&models.RemediationVerification{}).Where("remediation_id = ?", f.remID).Count(&outcomes).Error; err != nil {
		t.Fatal(err)
	}
	if n := verifiedEvents(t, e, f.tenantID); n != 1 || entries != 1 || outcomes != 1 {
		t.Fatalf("%d remediation.verified events, %d timeline entries and %d outcomes, want one each", n, entries, outcomes)
	}
}

// TestFaultWorkerKilledDuringVerificationTimer: the only worker is
// SIGKILLed while a completed remediation waits for its verification, and
// stays away past the timer's end. The timer lives in Temporal, so a new
// worker verifies once: one outcome, one timeline entry, one event.
func TestFaultWorkerKilledDuringVerificationTimer(t *testing.T) {
	const wait = 4 * time.Second
	f := newVerificationFault(t, wait, func(f *verificationFault, healthy string) { f.proxy.point(t, healthy) })
	e, ctx := f.e, context.Background()
	eventually(t, time.Minute, "the steps to complete", func() bool {
		r, err := remediation.NewStore(e.Store.DB()).GetRemediation(ctx, f.tenantID, f.remID)
		return err == nil && r.Status == remediation.Completed
	})
	_ = f.worker.Process.Signal(os.Kill)
	_ = f.worker.Wait()
	if _, err := e.Store.Verification(ctx, f.tenantID, f.remID); err == nil {
		t.Fatal("verified before the wait ended")
	}
	// The timer fires with no worker to act on it.
	time.Sleep(wait + time.Second)
	if _, err := e.Store.Verification(ctx, f.tenantID, f.remID); err == nil {
		t.Fatal("verified with no worker running")
	}
	workerProcess(t, f.bin, e, "worker-2.log", f.verifyAfter)
	f.verifiedOnce(t)
}

// TestFaultWorkerKilledInsideVerification: the only worker is SIGKILLed
// inside the verification activity, its query to the tenant's Prometheus in
// flight, so the activity has begun and must run again. Once its
// start-to-close timeout passes, a new worker runs it: one outcome, one
// timeline entry, one event.
func TestFaultWorkerKilledInsideVerification(t *testing.T) {
	f := newVerificationFault(t, 2*time.Second, func(f *verificationFault, healthy string) {
		f.proxy.point(t, healthy)
		f.proxy.hold.Store(true) // the next query is the verification's
	})
	select {
	case <-f.proxy.held:
	case <-time.After(2 * time.Minute):
		t.Fatal("the verification never queried the source")
	}
	_ = f.worker.Process.Signal(os.Kill)
	_ = f.worker.Wait()
	f.proxy.Release()
	if _, err := f.e.Store.Verification(context.Background(), f.tenantID, f.remID); err == nil {
		t.Fatal("the killed run recorded an outcome")
	}
	workerProcess(t, f.bin, f.e, "worker-2.log", f.verifyAfter)
	f.verifiedOnce(t)
}
