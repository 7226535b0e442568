//go:build faults

package e2e

// The fault tests (make test-faults) stop dependencies while Causeway runs. The
// machine's shared PostgreSQL and Redis serve other test runs at the same time,
// so every dependency a test stops is a private one it starts itself: a
// throwaway PostgreSQL cluster, a redis-server and an embedded Temporal server
// with its own persistence. Each is a process (or server) this file starts and
// stops by its own id, also when the test fails.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"

	"github.com/causeway/causeway/devstack"
	"github.com/causeway/causeway/internal/testenv"
)

// proc is one child process: its output is kept for the failure report, and
// it is stopped by its pid (its process group, for servers that fork) when the
// test ends.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	out    *lockedWriter
}

// startProc starts cmd in its own process group; the caller's cleanup stops
// it.
func startProc(name string, cmd *exec.Cmd) (*proc, error) {
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), out: &lockedWriter{w: &bytes.Buffer{}}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// cleanup kills the process current() returns when t ends, and shows its last
// output if t failed.
func cleanup(t *testing.T, current func() *proc) {
	t.Cleanup(func() {
		p := current()
		if p == nil {
			return
		}
		p.kill()
		if t.Failed() {
			t.Logf("%s output (last 3000 bytes):\n%s", p.name, p.tail(3000))
		}
	})
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends sig to the process and waits for it to exit; after grace it is
// killed with its whole process group.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.kill()
	}
}

// kill SIGKILLs the process group the process leads and waits for the process.
func (p *proc) kill() {
	if !p.running() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

func (p *proc) tail(n int) string {
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	s := p.out.w.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// pickPort returns a loopback port that was free a moment ago. A server may
// still lose it to another process before binding, so the callers below retry
// with a new port when their server cannot bind.
func pickPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitUntil polls ready every 100 ms until it returns nil, the process exits or
// the deadline passes; a process that never became ready is killed.
func waitUntil(p *proc, within time.Duration, ready func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if !p.running() {
			return fmt.Errorf("%s exited: %v", p.name, err)
		}
		if time.Now().After(deadline) {
			p.kill()
			return fmt.Errorf("%s not ready after %s: %w", p.name, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// onFreePort runs launch on a free port, and on another one when it fails (the
// port may be taken between choosing and binding it), and returns the port.
func onFreePort(t *testing.T, what string, launch func(port int) error) int {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port := pickPort(t)
		err := launch(port)
		if err == nil {
			return port
		}
		if attempt == 2 {
			t.Fatalf("start %s: %v", what, err)
		}
		t.Logf("start %s on port %d: %v; trying another port", what, port, err)
	}
}

// pgCluster is a throwaway PostgreSQL cluster in a temp dir, for the test that
// stops the database under a running Causeway.
type pgCluster struct {
	t      *testing.T
	bindir string
	root   string // owned by the server's user; holds data/ and the socket
	port   int
	cred   *syscall.Credential // nil: run as the current user
	proc   *proc
}

// pgBinDir finds initdb and postgres: CAUSEWAY_TEST_PG_BINDIR, then
// `pg_config --bindir`, then the newest /usr/lib/postgresql/*/bin.
func pgBinDir(t *testing.T) string {
	t.Helper()
	has := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "initdb"))
		return err == nil
	}
	if d := os.Getenv("CAUSEWAY_TEST_PG_BINDIR"); d != "" {
		if !has(d) {
			t.Fatalf("CAUSEWAY_TEST_PG_BINDIR=%s holds no initdb", d)
		}
		return d
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); has(d) {
			return d
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	testenv.Missing(t, "the PostgreSQL server binaries (initdb, postgres) are not installed: install the postgresql package "+
		"or set CAUSEWAY_TEST_PG_BINDIR")
	return ""
}

func pgMajor(bindir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return n
}

// pgCredential is the user the server runs as: PostgreSQL refuses to run as
// root, so under root (CI) it is the postgres account.
func pgCredential(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		testenv.Missing(t, "running as root needs a postgres account to run the throwaway cluster: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// startPostgres initialises a cluster with trust authentication and starts it
// on a free loopback port.
func startPostgres(t *testing.T) *pgCluster {
	t.Helper()
	c := &pgCluster{t: t, bindir: pgBinDir(t), cred: pgCredential(t)}
	root, err := os.MkdirTemp("", "causeway-faults-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if c.cred != nil {
		if err := os.Chown(root, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	c.root = root
	cleanup(t, func() *proc { return c.proc })
	initdb := exec.Command(filepath.Join(c.bindir, "initdb"), "-D", c.dataDir(), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	onFreePort(t, "postgres", func(port int) error { c.port = port; return c.launch() })
	return c
}

func (c *pgCluster) dataDir() string { return filepath.Join(c.root, "data") }

// URL is the connection URL of the cluster's postgres database.
func (c *pgCluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// launch starts the server on c.port and waits until it accepts queries.
// fsync is off: the tests kill the server, never the machine, and what a
// committed transaction wrote is in the kernel's cache either way.
func (c *pgCluster) launch() error {
	cmd := exec.Command(filepath.Join(c.bindir, "postgres"), "-D", c.dataDir(), "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+c.root,
		"-c", "fsync=off", "-c", "max_connections=150", "-c", "log_min_messages=warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	p, err := startProc("postgres", cmd)
	if err != nil {
		return err
	}
	c.proc = p
	return waitUntil(p, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgconn.Connect(ctx, c.URL())
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	})
}

// Crash stops the server the way a crash looks to its clients: an immediate
// shutdown (SIGQUIT) ends every backend at once without a checkpoint, open
// transactions are lost, and the next start runs crash recovery.
func (c *pgCluster) Crash() {
	c.t.Helper()
	c.proc.stop(syscall.SIGQUIT, 20*time.Second)
}

// Restart starts the server again on the same port and data directory.
func (c *pgCluster) Restart() {
	c.t.Helper()
	if err := c.launch(); err != nil {
		c.t.Fatalf("restart postgres on port %d: %v", c.port, err)
	}
}

// redisServer is a private redis-server without persistence.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	proc *proc
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	r := &redisServer{t: t, bin: testenv.Program(t, "redis-server")}
	cleanup(t, func() *proc { return r.proc })
	onFreePort(t, "redis-server", func(port int) error { r.port = port; return r.launch() })
	return r
}

// URL is the redis:// URL of the server.
func (r *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *redisServer) launch() error {
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--loglevel", "warning")
	p, err := startProc("redis-server", cmd)
	if err != nil {
		return err
	}
	r.proc = p
	opts, _ := redis.ParseURL(r.URL())
	rc := redis.NewClient(opts)
	defer rc.Close()
	return waitUntil(p, 15*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return rc.Ping(ctx).Err()
	})
}

// Kill ends the server with SIGKILL: its state is gone, as after a crash.
func (r *redisServer) Kill() { r.proc.kill() }

// Restart starts an empty server on the same port.
func (r *redisServer) Restart() {
	r.t.Helper()
	if err := r.launch(); err != nil {
		r.t.Fatalf("restart redis-server on port %d: %v", r.port, err)
	}
}

// temporalServer is an embedded Temporal server with its own SQLite
// persistence, which a test stops and starts again on the same port.
type temporalServer struct {
	t    *testing.T
	dir  string
	port int
	st   *devstack.Stack
}

func startTemporal(t *testing.T) *temporalServer {
	t.Helper()
	s := &temporalServer{t: t, dir: t.TempDir()}
	s.launch()
	_, port, _ := net.SplitHostPort(s.st.FrontendAddress())
	s.port, _ = strconv.Atoi(port)
	t.Cleanup(func() {
		if s.st != nil {
			_ = s.st.Stop()
		}
	})
	return s
}

func (s *temporalServer) launch() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := devstack.Start(ctx, devstack.Options{DataDir: s.dir, Port: s.port})
	if err != nil {
		s.t.Fatalf("start temporal on port %d: %v", s.port, err)
	}
	s.st = st
}

// Address is the frontend's host:port; it stays the same across Restart.
func (s *temporalServer) Address() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Stop shuts the server down; clients see connection refused until Restart.
func (s *temporalServer) Stop() {
	s.t.Helper()
	if err := s.st.Stop(); err != nil {
		s.t.Logf("stop temporal: %v", err)
	}
	s.st = nil
}

// Restart starts the server again on the same port and persistence.
func (s *temporalServer) Restart() { s.launch() }

// switchableServer is an httptest server on a fixed loopback port that a test
// can switch off (connections refused, requests in flight cut) and on again
// at the same address, the way an endpoint goes away and comes back.
type switchableServer struct {
	t       *testing.T
	handler http.Handler
	addr    string
	mu      sync.Mutex
	srv     *httptest.Server
}

func newSwitchableServer(t *testing.T, h http.Handler) *switchableServer {
	t.Helper()
	s := &switchableServer{t: t, handler: h}
	onFreePort(t, "the switchable server", func(port int) error {
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		return s.listen()
	})
	t.Cleanup(s.Off)
	return s
}

func (s *switchableServer) listen() error {
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	srv := httptest.NewUnstartedServer(s.handler)
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	return nil
}

// URL is the server's base URL, the same whether it is on or off.
func (s *switchableServer) URL() string { return "http://" + s.addr }

// Off cuts every open connection and stops listening.
func (s *switchableServer) Off() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

// On listens again on the same address.
func (s *switchableServer) On() {
	s.t.Helper()
	var err error
	for range 50 { // the port may linger for a moment after Off
		if err = s.listen(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("listen again on %s: %v", s.addr, err)
}

// patientClient gives up on an answer after 30 s, as many HTTP clients and
// proxies do (the API's own server cuts a response at 60 s): a dependency
// outage must be answered before that, or the caller sees a dropped
// connection instead of a 503 it can act on.
var patientClient = &http.Client{Timeout: 30 * time.Second}

// raw sends a JSON request and returns the status, the body and the headers of
// the answer.
func (e *env) raw(t *testing.T, method, path, token string, body any) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(mustJSON(body))
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := patientClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0, nil, http.Header{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// errorBody is the {error, message} answer of the API.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// healthReport is the body of GET /health/detailed.
type healthReport struct {
	Status   string `json:"status"`
	Services map[string]struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"services"`
}

// health reads /health/detailed.
func (e *env) health(t *testing.T) healthReport {
	t.Helper()
	var h healthReport
	if st := e.call(t, "GET", "/health/detailed", "", nil, &h); st != http.StatusOK {
		t.Fatalf("/health/detailed: status %d", st)
	}
	return h
}

// awaitHealth waits until /health/detailed reports status overall and, for
// each named service, the given state.
func (e *env) awaitHealth(t *testing.T, within time.Duration, overall string, services map[string]string) healthReport {
	t.Helper()
	var h healthReport
	eventually(t, within, fmt.Sprintf("health %s with %v", overall, services), func() bool {
		h = e.health(t)
		if h.Status != overall {
			return false
		}
		for name, want := range services {
			if h.Services[name].Status != want {
				return false
			}
		}
		return true
	})
	return h
}

// endOutage lets the outage that began at downAt last at least d, brings the
// dependency back with restart, waits until /health/detailed reports service
// healthy again, and logs both durations. It returns when restart returned.
func (e *env) endOutage(t *testing.T, service string, downAt time.Time, d time.Duration, restart func()) time.Time {
	t.Helper()
	time.Sleep(time.Until(downAt.Add(d)))
	restart()
	upAt := time.Now()
	e.awaitHealth(t, time.Minute, "healthy", map[string]string{service: "healthy"})
	t.Logf("%s down %s; Causeway healthy again %s after it came back", service, upAt.Sub(downAt).Round(time.Millisecond),
		time.Since(upAt).Round(time.Millisecond))
	return upAt
}

// statusCounts tallies answers by status (0: no answer) for the test log.
type statusCounts map[int]int

func (c statusCounts) String() string {
	keys := make([]int, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d×%d", c[k], k)
	}
	return strings.Join(parts, " ")
}
