package devstack

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func greetWorkflow(_ workflow.Context, name string) (string, error) {
	return "hello " + name, nil
}

func awaitSignalWorkflow(ctx workflow.Context) (string, error) {
	var msg string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &msg)
	return "got " + msg, nil
}

// recordingHandler remembers the levels of the records it receives so tests
// can check the server's INFO chatter is filtered out.
type recordingHandler struct {
	mu     sync.Mutex
	levels []slog.Level
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.levels = append(h.levels, r.Level)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) belowWarn() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.levels {
		if l < slog.LevelWarn {
			n++
		}
	}
	return n
}

func startStack(t *testing.T, o Options) *Stack {
	t.Helper()
	begin := time.Now()
	st, err := Start(t.Context(), o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("stack up in %v at %s (ui %q)", time.Since(begin).Round(time.Millisecond), st.FrontendAddress(), st.UIURL())
	t.Cleanup(func() {
		if err := st.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return st
}

func dial(t *testing.T, st *Stack) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  st.FrontendAddress(),
		Namespace: st.Namespace(),
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", st.FrontendAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}

func startWorker(t *testing.T, c client.Client, queue string) worker.Worker {
	t.Helper()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterWorkflow(awaitSignalWorkflow)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	return w
}

func TestInMemoryRunsWorkflow(t *testing.T) {
	rec := &recordingHandler{}
	st := startStack(t, Options{Logger: slog.New(rec)})
	if st.Namespace() != "default" {
		t.Errorf("Namespace() = %q, want default", st.Namespace())
	}
	if st.UIURL() != "" {
		t.Errorf("UIURL() = %q without UIAddr", st.UIURL())
	}
	if !strings.HasPrefix(st.FrontendAddress(), "127.0.0.1:") {
		t.Errorf("FrontendAddress() = %q, want 127.0.0.1:<port>", st.FrontendAddress())
	}

	c := dial(t, st)
	ns, err := c.WorkflowService().DescribeNamespace(t.Context(), &workflowservice.DescribeNamespaceRequest{Namespace: st.Namespace()})
	if err != nil {
		t.Fatalf("DescribeNamespace: %v", err)
	}
	if r := ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(); r != 72*time.Hour {
		t.Errorf("retention = %v, want 72h", r)
	}
	w := startWorker(t, c, "greet")
	defer w.Stop()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "greet"}, greetWorkflow, "devstack")
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "hello devstack" {
		t.Fatalf("result = %q", got)
	}

	w.Stop()
	begin := time.Now()
	if err := st.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("stack stopped in %v", time.Since(begin).Round(time.Millisecond))
	if err := st.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if n := rec.belowWarn(); n != 0 {
		t.Errorf("logger received %d records below WARN", n)
	}
}

func TestWorkflowSurvivesRestart(t *testing.T) {
	// A nested, not yet existing directory also checks that parents are made.
	dir := filepath.Join(t.TempDir(), "state", "temporal")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// Search attributes are created on the first start and found, not added
	// twice, on the second.
	attrs := map[string]enumspb.IndexedValueType{"DevstackKeyword": enumspb.INDEXED_VALUE_TYPE_KEYWORD}
	begin := time.Now()
	first, err := Start(ctx, Options{DataDir: dir, Namespace: "causeway-test", Logger: testLogger(t), SearchAttributes: attrs})
	if err != nil {
		t.Fatalf("first Start: %v", err)
	}
	t.Logf("first stack up in %v", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() { _ = first.Stop() })
	c := dial(t, first)
	w := startWorker(t, c, "restart")
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "survivor",
		TaskQueue: "restart",
	}, awaitSignalWorkflow)
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	// Wait for the first workflow task so the run is really in progress, not
	// merely accepted, before the server goes away.
	waitFor(t, ctx, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, "survivor", run.GetRunID())
		return err == nil && d.GetWorkflowExecutionInfo().GetHistoryLength() >= 4
	})
	w.Stop()
	begin = time.Now()
	if err := first.Stop(); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	t.Logf("first stack stopped in %v", time.Since(begin).Round(time.Millisecond))

	second := startStack(t, Options{DataDir: dir, Namespace: "causeway-test", Logger: testLogger(t), SearchAttributes: attrs})
	c2 := dial(t, second)
	list, err := c2.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "causeway-test"})
	if err != nil {
		t.Fatalf("ListSearchAttributes: %v", err)
	}
	if got := list.GetCustomAttributes()["DevstackKeyword"]; got != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
		t.Fatalf("search attribute DevstackKeyword after restart: %v, want Keyword", got)
	}
	d, err := c2.DescribeWorkflowExecution(ctx, "survivor", "")
	if err != nil {
		t.Fatalf("DescribeWorkflowExecution after restart: %v", err)
	}
	if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("status after restart = %v, want RUNNING", s)
	}
	if got := d.GetWorkflowExecutionInfo().GetExecution().GetRunId(); got != run.GetRunID() {
		t.Fatalf("run id after restart = %q, want %q", got, run.GetRunID())
	}

	w2 := startWorker(t, c2, "restart")
	defer w2.Stop()
	if err := c2.SignalWorkflow(ctx, "survivor", "", "go", "ahead"); err != nil {
		t.Fatalf("SignalWorkflow: %v", err)
	}
	begin = time.Now()
	var got string
	if err := c2.GetWorkflow(ctx, "survivor", "").Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "got ahead" {
		t.Fatalf("result = %q", got)
	}
	t.Logf("signalled workflow completed in %v", time.Since(begin).Round(time.Millisecond))
}

// testLogger sends what the stack lets through (warnings and errors) to the
// test log, where it only shows up for failed or verbose runs.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

func TestWebUIServesHTML(t *testing.T) {
	st := startStack(t, Options{UIAddr: "127.0.0.1:0"})
	if !strings.HasPrefix(st.UIURL(), "http://127.0.0.1:") || strings.HasSuffix(st.UIURL(), ":0") {
		t.Fatalf("UIURL() = %q", st.UIURL())
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, st.UIURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", st.UIURL(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", st.UIURL(), resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	if !strings.Contains(strings.ToLower(string(body)), "<html") {
		t.Errorf("body does not look like HTML: %.200q", body)
	}
}

func TestBusyPortIsAnError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	if st, err := Start(t.Context(), Options{Port: port}); err == nil {
		_ = st.Stop()
		t.Fatalf("Start on busy frontend port %d succeeded", port)
	}
	if st, err := Start(t.Context(), Options{UIAddr: l.Addr().String()}); err == nil {
		_ = st.Stop()
		t.Fatalf("Start on busy UI address %s succeeded", l.Addr())
	}
}

func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("condition not met: %v", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
