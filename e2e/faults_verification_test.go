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
