package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/remediation"
	"go.temporal.io/sdk/client"
)

// waitingRemediations is how many proposals BenchmarkWorkerRSSWaiting leaves
// waiting for a decision.
const waitingRemediations = 1000

// BenchmarkWorkerRSSWaiting runs the worker binary as its own process and
// starts 1,000 RemediationWorkflows that wait for approval, as a tenant with
// many open proposals would have. Reported: the worker's resident set before
// and with all 1,000 waiting (each has run its first workflow task and
// answered a query, so it sits in the worker's cache), and the difference per
// waiting remediation.
func BenchmarkWorkerRSSWaiting(b *testing.B) {
	bin := buildWorker(b)
	e := startEnv(b, testConfig(b), false)
	cmd := workerProcess(b, bin, e, "worker.log")
	ctx := context.Background()
	var before, after int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Let the worker finish starting (connect, register, first polls).
		time.Sleep(3 * time.Second)
		before = rssKB(b, cmd.Process.Pid)
		if err := withWorkers(waitingRemediations, 32, func(n int) error {
			id := fmt.Sprintf("rem_rss_%d_%d", i, n)
			_, err := e.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: remediation.WorkflowID(id), TaskQueue: e.Config.TemporalTaskQueue,
			}, remediation.WorkflowName, remediation.Input{
				TenantID: "ten_rss", IncidentID: "inc_rss", RemediationID: id, PlanHash: "rss",
			})
			if err == nil {
				err = awaitAnswer(ctx, e, remediation.WorkflowID(id))
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
		after = rssKB(b, cmd.Process.Pid)
	}
	b.StopTimer()
	b.ReportMetric(float64(before)/1024, "rss_idle_MB")
	b.ReportMetric(float64(after)/1024, "rss_1000_waiting_MB")
	b.ReportMetric(float64(after-before)/waitingRemediations, "KB/waiting")
}

// awaitAnswer queries the workflow until it answers, which it does once its
// first workflow task ran on the worker.
func awaitAnswer(ctx context.Context, e *env, id string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		v, err := e.Temporal.QueryWorkflow(ctx, id, "", remediation.QueryState)
		if err == nil && v.HasValue() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remediation workflow %s never answered: %v", id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rssKB reads a process's resident set size from /proc.
func rssKB(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatal("no VmRSS in /proc status")
	return 0
}
