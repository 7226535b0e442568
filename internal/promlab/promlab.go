// Package promlab runs a real Prometheus server holding a scenario's series,
// for tests and for `causeway demo`: it writes the series as OpenMetrics,
// backfills them into a fresh TSDB with `promtool tsdb create-blocks-from
// openmetrics`, and starts `prometheus` on that TSDB on a free local port.
// Timestamps are relative to now, so the blocks fall inside the server's
// retention and the queries' window.
package promlab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Series is one series of a scenario: a metric name, its labels, and either
// its value as a function of how long before the end of the scenario a sample
// is, or Samples at the times they were taken (a recorded snapshot's).
type Series struct {
	Metric  string
	Labels  map[string]string
	Value   func(ago time.Duration) float64
	Samples []Sample
}

// Sample is one value of a series at one time.
type Sample struct {
	At    time.Time
	Value float64
}

// Binaries returns the paths of prometheus and promtool, or an error saying
// how to install them.
func Binaries() (prometheus, promtool string, err error) {
	prometheus, err1 := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	if err1 != nil || err2 != nil {
		return "", "", errors.New("prometheus and promtool are not installed (Debian/Ubuntu: apt-get install -y prometheus)")
	}
	return prometheus, promtool, nil
}

// Server is a running Prometheus.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string
	// End is the time of the scenario's last samples.
	End  time.Time
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Options shape a scenario's samples.
type Options struct {
	// Span is how far back the series go; zero means 90 minutes.
	Span time.Duration
	// Interval between samples; zero means 15 s.
	Interval time.Duration
}

// Start writes series into dir, backfills them and starts Prometheus on
// them. Series with Samples keep their times, which must fall within the
// server's retention (30 days); the others are sampled every Interval over
// Span up to now. The caller stops it with Stop (tests in t.Cleanup).
func Start(ctx context.Context, dir string, series []Series, o Options) (*Server, error) {
	prom, promtool, err := Binaries()
	if err != nil {
		return nil, err
	}
	if o.Span <= 0 {
		o.Span = 90 * time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 15 * time.Second
	}
	end := time.Now().Truncate(time.Second)
	input := filepath.Join(dir, "series.om")
	if err := writeOpenMetrics(input, series, end, o.Span, o.Interval); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "tsdb")
	if out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", input, data).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("promtool backfill: %v: %s", err, lastLines(string(out), 5))
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\nscrape_configs: []\n"), 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prom,
		"--config.file="+cfg,
		"--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=30d",
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start prometheus: %w", err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), End: end, cmd: cmd, done: make(chan struct{}), log: logf}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		_ = s.Stop()
		log, _ := os.ReadFile(logf.Name())
		return nil, fmt.Errorf("%w; log: %s", err, lastLines(string(log), 5))
	}
	return s, nil
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop ends the server by its process id and waits for it to exit.
func (s *Server) Stop() error {
	defer s.log.Close()
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("prometheus exited during start-up")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("prometheus not ready within %s", within)
}

// writeOpenMetrics writes every series' samples (from end-span to end, or
// its own Samples in time order), one metric family at a time as OpenMetrics
// requires, ending with # EOF.
func writeOpenMetrics(path string, series []Series, end time.Time, span, interval time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	byMetric := map[string][]Series{}
	var names []string
	for _, s := range series {
		if _, ok := byMetric[s.Metric]; !ok {
			names = append(names, s.Metric)
		}
		byMetric[s.Metric] = append(byMetric[s.Metric], s)
	}
	sort.Strings(names)
	for _, name := range names {
		// Every family is written as a gauge: PromQL does not care, and a
		// gauge may carry any name (_total, _bucket) in OpenMetrics.
		fmt.Fprintf(w, "# TYPE %s gauge\n", name)
		for _, s := range byMetric[name] {
			labels := renderLabels(s.Labels)
			if s.Samples != nil {
				samples := slices.Clone(s.Samples)
				slices.SortStableFunc(samples, func(a, b Sample) int { return a.At.Compare(b.At) })
				for _, p := range samples {
					fmt.Fprintf(w, "%s%s %s %s\n", name, labels, strconv.FormatFloat(p.Value, 'g', -1, 64),
						strconv.FormatFloat(float64(p.At.UnixMilli())/1000, 'f', 3, 64))
				}
				continue
			}
			for ago := span; ago >= 0; ago -= interval {
				ts := end.Add(-ago)
				fmt.Fprintf(w, "%s%s %s %d\n", name, labels, strconv.FormatFloat(s.Value(ago), 'g', -1, 64), ts.Unix())
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func renderLabels(ls map[string]string) string {
	if len(ls) == 0 {
		return ""
	}
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(ls[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
