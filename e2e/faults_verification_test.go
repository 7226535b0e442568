//go:build faults

package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/remediation"
)

// TestFaultWorkerKilledDuringVerificationTimer: the only worker is
// SIGKILLed while a completed remediation waits for its verification, and
// stays away past the timer's end. The timer lives in Temporal, so a new
// worker verifies once: one outcome, one timeline entry, one event.
func TestFaultWorkerKilledDuringVerificationTimer(t *testing.T) {
	const wait = 4 * time.Second
	e := startEnv(t, testConfig(t), false)
	bin := buildWorker(t)
	verifyAfter := "CAUSEWAY_REMEDIATION_VERIFY_AFTER=" + wait.String()
	worker := workerProcess(t, bin, e, "worker-1.log", verifyAfter)
	sick := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	healthy := testenv.Prometheus(t, promlab.Healthy(scenarioTarget))
	proxy := newSwitchingProxy(t, sick.URL)
	incID, remID, tenantID, _ := remediatedIncident(t, e, proxy, func() { proxy.point(t, healthy.URL) })

	ctx := context.Background()
	eventually(t, time.Minute, "the steps to complete", func() bool {
		r, err := remediation.NewStore(e.Store.DB()).GetRemediation(ctx, tenantID, remID)
		return err == nil && r.Status == remediation.Completed
	})
	_ = worker.Process.Signal(os.Kill)
	_ = worker.Wait()
	if _, err := e.Store.Verification(ctx, tenantID, remID); err == nil {
		t.Fatal("verified before the wait ended")
	}
	// The timer fires with no worker to act on it.
	time.Sleep(wait + time.Second)
	if _, err := e.Store.Verification(ctx, tenantID, remID); err == nil {
		t.Fatal("verified with no worker running")
	}
	workerProcess(t, bin, e, "worker-2.log", verifyAfter)

	v := awaitVerification(t, e, tenantID, remID)
	if v.Outcome != models.OutcomeRecovered {
		t.Fatalf("verification %+v", v)
	}
	eventually(t, time.Minute, "the remediation workflow to complete", func() bool {
		return e.workflowStatus(ctx, remediation.WorkflowID(remID)) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	var entries int64
	if err := e.Store.DB().Model(&models.TimelineEntry{}).Where("tenant_id = ? AND incident_id = ? AND kind = ?", tenantID, incID, "remediation_verified").
		Count(&entries).Error; err != nil {
		t.Fatal(err)
	}
	if n := verifiedEvents(t, e, tenantID); n != 1 || entries != 1 {
		t.Fatalf("%d remediation.verified events and %d timeline entries, want one each", n, entries)
	}
}

// TestFaultWorkerKilledInsideVerification: the only worker is SIGKILLed
// inside the verification activity, its query to the tenant's Prometheus in
// flight, so the activity has begun and must run again. Once its
// start-to-close timeout passes, a new worker runs it: one outcome, one
// timeline entry, one event.
func TestFaultWorkerKilledInsideVerification(t *testing.T) {
	const wait = 2 * time.Second
	e := startEnv(t, testConfig(t), false)
	bin := buildWorker(t)
	verifyAfter := "CAUSEWAY_REMEDIATION_VERIFY_AFTER=" + wait.String()
	first := workerProcess(t, bin, e, "worker-1.log", verifyAfter)
	sick := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	healthy := testenv.Prometheus(t, promlab.Healthy(scenarioTarget))
	proxy := newSwitchingProxy(t, sick.URL)
	incID, remID, tenantID, _ := remediatedIncident(t, e, proxy, func() {
		proxy.point(t, healthy.URL)
		proxy.hold.Store(true) // the next query is the verification's
	})
	select {
	case <-proxy.held:
	case <-time.After(2 * time.Minute):
		t.Fatal("the verification never queried the source")
	}
	_ = first.Process.Signal(os.Kill)
	_ = first.Wait()
	proxy.Release()
	if _, err := e.Store.Verification(context.Background(), tenantID, remID); err == nil {
		t.Fatal("the killed run recorded an outcome")
	}
	workerProcess(t, bin, e, "worker-2.log", verifyAfter)

	ctx := context.Background()
	v := awaitVerification(t, e, tenantID, remID)
	if v.Outcome != models.OutcomeRecovered {
		t.Fatalf("verification %+v", v)
	}
	eventually(t, time.Minute, "the remediation workflow to complete", func() bool {
		return e.workflowStatus(ctx, remediation.WorkflowID(remID)) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	var entries, outcomes int64
	if err := e.Store.DB().Model(&models.TimelineEntry{}).Where("tenant_id = ? AND incident_id = ? AND kind = ?", tenantID, incID, "remediation_verified").
		Count(&entries).Error; err != nil {
		t.Fatal(err)
	}
	if err := e.Store.DB().Model(&models.RemediationVerification{}).Where("remediation_id = ?", remID).Count(&outcomes).Error; err != nil {
		t.Fatal(err)
	}
	if n := verifiedEvents(t, e, tenantID); n != 1 || entries != 1 || outcomes != 1 {
		t.Fatalf("%d remediation.verified events, %d timeline entries and %d outcomes, want one each", n, entries, outcomes)
	}
}
