// Package devstack runs a complete Temporal cluster, and optionally its Web
// UI, inside the current process. It lets `make run` and the integration tests
// work on a machine with nothing installed: state lives in SQLite, either in
// memory or in a file under a data directory so that workflows survive a
// restart of the process.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

const (
	defaultHost      = "127.0.0.1"
	defaultNamespace = "default"
	clusterName      = "active"
	storeName        = "sqlite-default"
	// readyTimeout bounds how long Start waits for the cluster to answer. A
	// cold start on a busy two-core machine takes a few seconds; a minute
	// leaves room without hanging forever on a broken configuration.
	readyTimeout = 60 * time.Second
)

// Options says where the stack keeps its state and where it listens. The zero
// value is a throwaway in-memory cluster on free loopback ports without a UI,
// which is what tests want.
type Options struct {
	// DataDir holds temporal.db; it and its parents are created if missing.
	// Empty keeps everything in memory and loses it on Stop.
	DataDir string
	// Host is the IP every server port binds to; empty means 127.0.0.1.
	Host string
	// Port is the frontend gRPC port that clients dial; 0 picks a free one.
	Port int
	// UIAddr is host:port for the Web UI; empty runs no UI, port 0 picks a
	// free one and an empty host means Host.
	UIAddr string
	// Namespace is registered (72h retention) if it does not exist yet;
	// empty means "default".
	Namespace string
	// Logger receives the server's warnings and errors; the server is far too
	// chatty below that. Nil discards them.
	Logger *slog.Logger
	// SearchAttributes are custom search attributes to create in the
	// namespace (name → type) unless they exist, as an operator would with
	// `temporal operator search-attribute create` on a cluster.
	SearchAttributes map[string]enumspb.IndexedValueType
}

// Stack is a running cluster. Its addresses are fixed for its lifetime, so
// callers can hand them to clients and print them for humans.
type Stack struct {
	frontend  string
	uiURL     string
	namespace string

	server temporal.Server
	ui     *uiserver.Server
	uiDone chan struct{}

	stopping atomic.Bool
	stopOnce sync.Once
	stopErr  error
}

// Start boots the cluster (and the UI when asked) and returns once the
// frontend answers health checks and the namespace can be described, so the
// caller may start workers and workflows straight away. ctx bounds the wait
// in addition to an internal one-minute limit.
//
// The server takes port numbers, not listeners, so the ports Start picks are
// free when picked and bound a moment later; another process can take one in
// between. When every port was picked here (Port 0 and no fixed UI port), a
// start that fails on a taken address is retried with fresh ports.
func Start(ctx context.Context, o Options) (*Stack, error) {
	autoPorts := o.Port == 0 && (o.UIAddr == "" || strings.HasSuffix(o.UIAddr, ":0"))
	for attempt := 1; ; attempt++ {
		st, err := start(ctx, o)
		if err == nil || !autoPorts || attempt == startAttempts || !addressInUse(err) {
			return st, err
		}
	}
}

// startAttempts bounds the retries of a start whose picked port was taken.
const startAttempts = 3

// addressInUse reports whether err is a failure to bind a port someone else holds.
func addressInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

func start(ctx context.Context, o Options) (st *Stack, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Namespace == "" {
		o.Namespace = defaultNamespace
	}
	logger := newFilteredLogger(o.Logger)

	bindIP, dialIP, err := resolveHost(o.Host)
	if err != nil {
		return nil, err
	}
	var uiBind, uiDial string
	uiPort := 0
	if o.UIAddr != "" {
		uiBind, uiDial, uiPort, err = resolveUIAddr(o.UIAddr, o.Host)
		if err != nil {
			return nil, err
		}
	}

	// Reserve every port at once so they are distinct; they are released just
	// before the servers bind them.
	res := &reservation{}
	frontendPort := res.take(bindIP, o.Port)
	var servicePorts [4]int
	for i := range servicePorts {
		servicePorts[i] = res.take(bindIP, 0)
	}
	if uiBind != "" {
		uiPort = res.take(uiBind, uiPort)
	}
	if err := res.release(); err != nil {
		return nil, err
	}

	sqlCfg, dbPath, err := sqlConfig(o.DataDir)
	if err != nil {
		return nil, err
	}
	if dbPath != "" {
		if err := ensureSchema(sqlCfg); err != nil {
			return nil, err
		}
	}
	if err := registerNamespace(sqlCfg, clusterName, o.Namespace); err != nil {
		return nil, fmt.Errorf("register namespace %q: %w", o.Namespace, err)
	}

	st = &Stack{
		frontend:  net.JoinHostPort(dialIP, strconv.Itoa(frontendPort)),
		namespace: o.Namespace,
	}
	cfg, hosts := serverConfig(sqlCfg, bindIP, dialIP, frontendPort, servicePorts)

	// The server reports unrecoverable failures (a port taken in the
	// meantime, say) through Logger.Fatal, which panics here instead of
	// exiting; turn that into an error for the caller.
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(fatalError)
			if !ok {
				panic(r)
			}
			if st != nil {
				_ = st.Stop()
			}
			st, err = nil, fe
		}
	}()

	srvLog := serverLogger{log: logger, stopping: &st.stopping}
	authorizer, err := authorization.GetAuthorizerFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&cfg.Global.Authorization, srvLog)
	if err != nil {
		return nil, fmt.Errorf("claim mapper: %w", err)
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(srvLog),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(devDynamicConfig()),
		temporal.WithStaticHosts(hosts),
	)
	if err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	st.server = srv

	if uiBind != "" {
		st.startUI(uiBind, uiDial, uiPort, logger)
	}

	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := st.waitReady(ctx, logger); err != nil {
		_ = st.Stop()
		return nil, err
	}
	if err := st.addSearchAttributes(ctx, logger, o.SearchAttributes); err != nil {
		_ = st.Stop()
		return nil, err
	}
	return st, nil
}

// addSearchAttributes creates the attributes the namespace does not have yet.
// A persisted data dir keeps them from the previous run, and adding one that
// exists is an error, hence the list first.
func (s *Stack) addSearchAttributes(ctx context.Context, logger *slog.Logger, want map[string]enumspb.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: s.frontend, Namespace: s.namespace, Logger: sdklog.NewStructuredLogger(logger)})
	if err != nil {
		return fmt.Errorf("devstack: search attributes: %w", err)
	}
	defer c.Close()
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.namespace})
	if err != nil {
		return fmt.Errorf("devstack: list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case got != typ:
			return fmt.Errorf("devstack: search attribute %s exists as %s, want %s", name, got, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: s.namespace, SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("devstack: add search attributes: %w", err)
	}
	return nil
}

// FrontendAddress is the host:port SDK clients and workers dial.
func (s *Stack) FrontendAddress() string { return s.frontend }

// UIURL is where a browser reaches the Web UI, or "" when it was not started.
func (s *Stack) UIURL() string { return s.uiURL }

// Namespace is the namespace Start made sure exists, for client options.
func (s *Stack) Namespace() string { return s.namespace }

// Stop shuts down the UI and then the server, in that order so the UI stops
// issuing requests first. Later calls return the first call's result, which
// lets callers both defer Stop and call it explicitly.
func (s *Stack) Stop() error {
	s.stopOnce.Do(func() {
		s.stopping.Store(true)
		if s.ui != nil {
			s.ui.Stop()
			<-s.uiDone
		}
		if s.server != nil {
			s.stopErr = s.server.Stop()
		}
	})
	return s.stopErr
}

// serverConfig assembles a single-node cluster: every service in this process,
// all ports on bindIP, one history shard and SQLite for both the main and the
// visibility store.
//
// Membership is static rather than gossiped. With ringpop a restarted process
// would seed its ring from the members the previous run left in the database,
// whose ports are gone, and route nothing until the join times out (about 40s
// in practice). A single process has nothing to discover anyway; the server's
// own functional tests run the same way.
func serverConfig(sqlCfg *config.SQL, bindIP, dialIP string, frontendPort int, ports [4]int) (*config.Config, map[primitives.ServiceName]static.Hosts) {
	grpcPorts := map[primitives.ServiceName]int{
		primitives.FrontendService: frontendPort,
		primitives.HistoryService:  ports[0],
		primitives.MatchingService: ports[1],
		primitives.WorkerService:   ports[2],
	}
	services := make(map[string]config.Service, len(grpcPorts))
	hosts := make(map[primitives.ServiceName]static.Hosts, len(grpcPorts))
	for name, port := range grpcPorts {
		services[string(name)] = config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: bindIP}}
		hosts[name] = static.SingleLocalHost(net.JoinHostPort(dialIP, strconv.Itoa(port)))
	}
	frontendAddr := hosts[primitives.FrontendService].Self
	// The frontend's HTTP API also carries Nexus callbacks; without it the
	// server warns on every start that Nexus is unavailable.
	frontend := services[string(primitives.FrontendService)]
	frontend.RPC.HTTPPort = ports[3]
	services[string(primitives.FrontendService)] = frontend
	httpAddr := net.JoinHostPort(dialIP, strconv.Itoa(ports[3]))

	cfg := &config.Config{Services: services}
	cfg.Global.Membership.BroadcastAddress = dialIP
	cfg.Persistence = config.Persistence{
		DefaultStore:     storeName,
		VisibilityStore:  storeName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{storeName: {SQL: sqlCfg}},
	}
	cfg.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			// The cluster ID is left empty: the server generates one on the
			// first start and keeps the stored one afterwards.
			clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontendAddr, HTTPAddress: httpAddr},
		},
	}
	cfg.DCRedirectionPolicy.Policy = "noop"
	cfg.Archival.History.State = "disabled"
	cfg.Archival.Visibility.State = "disabled"
	cfg.NamespaceDefaults.Archival.History.State = "disabled"
	cfg.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The server's own worker service dials the frontend through this.
	cfg.PublicClient.HostPort = frontendAddr
	return cfg, hosts
}

// devDynamicConfig turns on the APIs a developer expects from a local server
// and makes changes visible immediately rather than after cache refreshes.
func devDynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key():            true,
		// The UI lists and counts workflows through visibility on every page;
		// the production default of 10 per second throttles it visibly.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// One partition per task queue, as the Temporal CLI's dev server does.
		// Partitions spread a busy queue over matching hosts; on one node they
		// only make a task and an idle poller miss each other (the task waits to
		// be forwarded between partitions), which adds latency to every first
		// workflow task of a child workflow.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// This cluster has one history shard, so every transfer task (start a
		// child, dispatch a workflow or activity task) waits for the shard's
		// transfer queue to load it, by default at most 20 times a second: up to
		// 50 ms per hop. Loads are triggered by new tasks, so a higher cap only
		// costs small reads on the local database while the cluster is busy.
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): 500,
		// Causeway starts each incident's workflow with a fairness key (its
		// tenant) and a priority (its severity), which its passes, agents and
		// activities inherit: matching then hands out a busy queue's tasks
		// round-robin across tenants, most severe first, instead of first come,
		// first served (docs/failure-modes.md, "Storms").
		dynamicconfig.MatchingEnableFairness.Key(): true,
	}
}

// startUI serves the Temporal Web UI in a goroutine. The UI server's Start
// blocks and exits the process when it cannot bind, which is why the port
// was probed together with the others beforehand.
func (s *Stack) startUI(bindIP, dialIP string, port int, logger *slog.Logger) {
	s.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                bindIP,
		Port:                port,
		TemporalGRPCAddress: s.frontend,
		EnableUI:            true,
		DefaultNamespace:    s.namespace,
		// The UI is served over plain HTTP, so its CSRF cookie must not be
		// marked Secure or browsers drop it and every write action fails.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true,
	}))
	s.uiURL = "http://" + net.JoinHostPort(dialIP, strconv.Itoa(port))
	s.uiDone = make(chan struct{})
	go func() {
		defer close(s.uiDone)
		if err := s.ui.Start(); err != nil {
			logger.Error("temporal web ui stopped", "error", err)
		}
	}()
}

// waitReady polls until an SDK client can connect, the frontend reports
// healthy and the namespace is visible, or ctx ends. It also waits for the
// UI to answer so UIURL is usable as soon as Start returns.
func (s *Stack) waitReady(ctx context.Context, logger *slog.Logger) error {
	var lastErr error
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if lastErr = s.probe(ctx, logger); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporal at %s not ready: %w (last error: %v)", s.frontend, ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

func (s *Stack) probe(ctx context.Context, logger *slog.Logger) error {
	attemptCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.DialContext(attemptCtx, client.Options{
		HostPort:  s.frontend,
		Namespace: s.namespace,
		Logger:    sdklog.NewStructuredLogger(logger),
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.CheckHealth(attemptCtx, &client.CheckHealthRequest{}); err != nil {
		return err
	}
	if _, err := c.WorkflowService().DescribeNamespace(attemptCtx, &workflowservice.DescribeNamespaceRequest{
		Namespace: s.namespace,
	}); err != nil {
		return err
	}
	if s.uiURL != "" {
		req, err := http.NewRequestWithContext(attemptCtx, http.MethodGet, s.uiURL+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("web ui health: %s", resp.Status)
		}
	}
	return nil
}

// resolveHost returns the IP to bind to and the IP to dial or advertise. An
// unspecified bind address (0.0.0.0, ::) cannot be dialled or broadcast to
// the membership ring, so loopback stands in for it there.
func resolveHost(host string) (bindIP, dialIP string, err error) {
	if host == "" || host == "localhost" {
		// The server's RPC config needs a literal IP, not a name.
		host = defaultHost
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", "", fmt.Errorf("devstack: host %q is not an IP address", host)
	}
	if !ip.IsUnspecified() {
		return ip.String(), ip.String(), nil
	}
	if ip.To4() != nil {
		return ip.String(), "127.0.0.1", nil
	}
	return ip.String(), "::1", nil
}

// resolveUIAddr splits UIAddr, falling back to Host when it has no host.
func resolveUIAddr(addr, host string) (bindIP, dialIP string, port int, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", 0, fmt.Errorf("devstack: UI address %q: %w", addr, err)
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", "", 0, fmt.Errorf("devstack: UI address %q: bad port", addr)
	}
	if h == "" {
		h = host
	}
	bindIP, dialIP, err = resolveHost(h)
	return bindIP, dialIP, port, err
}

// reservation holds listeners on the ports chosen for one stack. Holding them
// all until every port is chosen guarantees they are distinct, and trying a
// fixed port here reports "address in use" as an error instead of the server
// failing deep inside start-up.
type reservation struct {
	listeners []net.Listener
	err       error
}

// take reserves port on ip (0 for any free one) and returns the port number.
func (r *reservation) take(ip string, port int) int {
	if r.err != nil {
		return 0
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		r.err = fmt.Errorf("devstack: reserve port: %w", err)
		return 0
	}
	r.listeners = append(r.listeners, l)
	return l.Addr().(*net.TCPAddr).Port
}

// release frees the reserved ports for the servers to bind and reports the
// first failure to reserve one.
func (r *reservation) release() error {
	var errs []error
	for _, l := range r.listeners {
		errs = append(errs, l.Close())
	}
	r.listeners = nil
	return errors.Join(append([]error{r.err}, errs...)...)
}
