package analyzer

import "regexp"

// rule is one textual signal pattern. Rules are general mechanisms (error
// strings of runtimes, datastores, proxies and clouds), never scenario text.
type rule struct {
	cat   string
	what  string  // short noun phrase used in summaries
	str   float64 // strength when present
	roles []string
	re    *regexp.Regexp
	// need/unless are matched against the whole (lower-cased) line.
	need   *regexp.Regexp
	unless *regexp.Regexp
	// needClause checks need against the matched clause instead of the line.
	needClause bool
	// refStr is the strength of the refutation when the match is negated
	// (0 = negation is ignored).
	refStr float64
	// negOnly rules only ever refute (e.g. "no deploys").
	negOnly bool
	// polar rules carry their own polarity: they never get negated.
	polar  bool
	refute bool // polar rule that refutes
	pf     prefilter
}

func init() {
	for i := range rules {
		rules[i].pf = newPrefilter(rules[i].re)
	}
}

func re(p string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + p) }

var (
	cacheKW = re(`redis|memcache|valkey|elasticache|sentinel|twemproxy|mcrouter|\bcache\b|keydb|hazelcast`)
	dbCtx   = re(`\b(db|database|pg|postgres\w*|mysql\w*|mariadb|mongo\w*|sql|rds|aurora|innodb)\b`)
)

var (
	rDB     = []string{RoleDatabase, RoleLogs}
	rDBOnly = []string{RoleDatabase}
	rNet    = []string{RoleNetwork, RoleLogs}
	rNetI   = []string{RoleNetwork, RoleInfrastructure}
	rInfra  = []string{RoleInfrastructure, RoleLogs}
	rInfraM = []string{RoleInfrastructure, RoleMetrics}
	rDeploy = []string{RoleDeployments}
	rDepLog = []string{RoleDeployments, RoleLogs}
	rMet    = []string{RoleMetrics}
	rMetDB  = []string{RoleMetrics, RoleDatabase}
	rMetLog = []string{RoleMetrics, RoleLogs}
)

var rules = []rule{
	// certificate_expired
	{cat: CategoryCertificateExpired, what: "an expired TLS certificate", str: 0.92, roles: []string{RoleNetwork, RoleLogs, RoleInfrastructure}, refStr: 0.3,
		re: re(`certificate has expired|certificate (is )?expired|cert(ificate)? expired|expired certificate|CERT_HAS_EXPIRED|CertificateExpired|certificate_expired|alert certificate expired|certificate validity (ended|has ended)|not after.*in the past`)},
	{cat: CategoryCertificateExpired, what: "TLS certificate verification failures", str: 0.55, roles: rNet,
		re: re(`x509:|certificate verify failed|CERTIFICATE_VERIFY_FAILED|PKIX path|unable to verify the first certificate|SSLHandshakeException|tls: (failed to verify|bad certificate|handshake failure)|self[- ]signed certificate|certificate signed by unknown authority|SSLCertVerificationError|ERR_TLS_CERT`)},
	{cat: CategoryCertificateExpired, what: "a certificate renewal or validity problem", str: 0.55, roles: rNetI,
		re:   re(`certificate request has failed|renewal (failed|error)|failed to renew|expir(y|es|ed|ation)`),
		need: re(`cert|tls|ssl|x509`)},
	{cat: CategoryCertificateExpired, what: "a certificate that is valid or was renewed", str: 0.5, roles: rNetI, polar: true, refute: true,
		re: re(`renewals? (all )?succeeded|renewed successfully|successfully renewed|cert(ificate)? (is )?(still )?valid\b|valid (until|through)\b|cert(ificate)? (is )?(fine|ok)\b`)},

	// dns_failure
	{cat: CategoryDNSFailure, what: "name resolution failures", str: 0.88, roles: rNet, refStr: 0.3,
		re: re(`NXDOMAIN|SERVFAIL|no such host|server misbehaving|Name or service not known|nodename nor servname|Temporary failure in name resolution|\b(EAI_AGAIN|ENOTFOUND)\b|UnknownHostException|could not resolve|couldn't resolve|unable to resolve|failed to resolve|name resolution|DNS resolution|no servers could be reached|lookup \S+( on \S+)?: (i/o timeout|no such host|server misbehaving|read udp)|dns (lookup|query|request)s? (failed|timed? ?out|error)`)},
	{cat: CategoryDNSFailure, what: "DNS server errors", str: 0.7, roles: rNetI,
		re:   re(`\b(coredns|kube-dns|node-local-dns|nodelocaldns|dnsmasq|unbound|named|bind9|route ?53 resolver|resolver)\b`),
		need: re(`error|fail|timeout|timed out|crashloop|refused|unreachable|down`)},
	{cat: CategoryDNSFailure, what: "requests by IP succeeding while names fail", str: 0.6, roles: []string{RoleNetwork},
		re: re(`(by|with|to) (the )?ip\b.*\b(works|worked|succeeds?|ok|fine)\b|--resolve\b.*\bworks|https?://\d+\.\d+\.\d+\.\d+\S*.*\b(200|ok)\b`)},

	// network_partition
	{cat: CategoryNetworkPartition, what: "hosts losing connectivity", str: 0.72, roles: rNetI, refStr: 0.35,
		re: re(`no route to host|EHOSTUNREACH|network is unreachable|ENETUNREACH|host unreachable|connectivity (issues|problems|loss) between|network partition|split[- ]brain|partitioned|lost connectivity|intermittent packet loss|packet loss affecting|Layer4 (timeout|connection problem)|L4TOUT|L4CON`)},
	{cat: CategoryNetworkPartition, what: "lost routes or links between networks", str: 0.8, roles: rNetI, refStr: 0.35,
		re: re(`\bbgp\b[^.;]*\b(down|lost|flap\w*|idle|not established|withdrawn|dropped)\b|bgp ?availability[^.;]*\b0(\.0+)?\s?%|no routes? (learned|to)\b|routes? (are )?(missing|withdrawn|lost)\b|missing routes?\b|fib(re|er) cut|circuit (is )?(down|outage|failure)|\blink (is )?down\b|interface \S+ (is )?down|tunnel (is )?down|peering (is )?(down|lost)|traceroute[^.;]*\b(stops|dies|times? out)|packet loss (between|across)|(increased|elevated|high|heavy) packet loss|cluster minority|minority (status|partition)|pause_minority|as a minority|isolated from (the )?(rest|other|fabric|network|cluster)`)},
	{cat: CategoryNetworkPartition, what: "connection attempts timing out", str: 0.45, roles: rNet,
		re:     re(`connection timed out|connect(ion)? timeout|\bETIMEDOUT\b|errno 110\b|dial tcp \S+: (i/o timeout|connect: connection timed out)|failed to connect to \S+ port \d+ after \d+ ms`),
		unless: cacheKW},
	{cat: CategoryNetworkPartition, what: "network problems", str: 0, roles: rNetI, refStr: 0.35, negOnly: true,
		re: re(`(network|connectivity) (alerts?|issues?|errors?|incidents?|problems?)|dropped packets|packet loss`)},

	// upstream_dependency
	{cat: CategoryUpstreamDependency, what: "a provider reporting degraded service", str: 0.8, roles: []string{RoleNetwork}, polar: true,
		re: re(`status( page)?\b.*(degraded|outage|incident|elevated error|investigating|partial)|(degraded performance|elevated (errors?|error rates?|failures|latenc\w*)|major outage|partial outage)|^\s*\d{1,2}:\d{2}(\s*utc)?\s*[-–]?\s*(investigating|identified)\b`)},
	{cat: CategoryUpstreamDependency, what: "a provider reporting healthy service", str: 0.5, roles: []string{RoleNetwork}, polar: true, refute: true,
		re: re(`(status( page)?|service health|provider)\b[^.]*\b(all systems operational|operational|no (known )?(issues|incidents))`)},
	{cat: CategoryUpstreamDependency, what: "a dependency answering 5xx", str: 0.65, roles: rNet,
		re:     re(`\b50[234]\b[^,;]{0,12}(service unavailable|bad gateway|gateway time-?out)|\b(service unavailable|bad gateway)\b|upstream connect error|no healthy upstream|upstream (prematurely closed|reset)|([^\d\s.]\s*->|failed:|response code|returned|status(code)?[=: ]+)\s*5\d\d\b`),
		unless: cacheKW},
	{cat: CategoryUpstreamDependency, what: "a client circuit breaker opening", str: 0.6, roles: rNet,
		re: re(`circuit ?breaker\b.*\b(open|tripped)|CircuitBreakerOpen|BrokenCircuit`)},
	{cat: CategoryUpstreamDependency, what: "calls to a dependency timing out or being refused", str: 0.4, roles: rNet,
		re:     re(`ECONNREFUSED|connection refused|ECONNRESET|connection reset by peer|read ?timed ?out|ReadTimeout|SocketTimeoutException|context deadline exceeded|awaiting headers|upstream (request )?time(d)? ?out|upstream timeouts?|dependency (down|unavailable|failing)`),
		unless: cacheKW},
	{cat: CategoryUpstreamDependency, what: "dependency problems", str: 0, roles: []string{RoleNetwork}, refStr: 0.3, negOnly: true,
		re: re(`(provider|upstream|dependency|partner) (alerts?|issues?|errors?|incidents?|problems?)`)},

	// rate_limited
	{cat: CategoryRateLimited, what: "requests rejected by a rate limit or quota", str: 0.88, roles: rNet, refStr: 0.35,
		re:     re(`\b429\b|too many requests|rate[- ]?limit(ed|ing)?\b|ratelimit-remaining[=: ]+0\b|quota (exceeded|exhausted)|exceeded (your |the )?(\w+ )?quota|RESOURCE_EXHAUSTED|ThrottlingException|\bthrottled\b|throttling|RequestLimitExceeded|ProvisionedThroughputExceeded|TooManyRequests|\bSlowDown\b|Rate exceeded|OVER_QUERY_LIMIT|request limit (exceeded|reached)|throughput [^.]*exceeded|limiting (requests|connections)|\blimit_(req|conn)\b|excess: \d`),
		unless: re(`cpu|cgroup|cfs|nr_throttled|periods|\b\d{3,4}m\b|watermark|cluster_block_exception|read[-_ ]only`)},
	{cat: CategoryRateLimited, what: "rate limiting as the trigger (the limits were hit by retries of failing calls)", str: 0.6, roles: rNet, polar: true, refute: true,
		re: re(`(429s?|rate[- ]limit\w*|throttl\w*)\b[^.;]*\b(caused by|because of|due to|are|were|come from|came from)\b[^.;]*\bretr(y|ies)\b|\bretr(y|ies)\b[^.;]*\b(multipl\w*|amplif\w*|storm)`)},

	// queue_backlog
	{cat: CategoryQueueBacklog, what: "a growing queue or consumer lag", str: 0.72, roles: rMetLog, refStr: 0.35,
		re:     re(`consumer (group )?lag|\blag\b|backlog|queue depth|queue (is )?(growing|length|size)|messages[_ ]ready|ready messages|\bunacked\b|oldest (unprocessed|message|unacked)|ApproximateAgeOfOldestMessage|ApproximateNumberOfMessages|pending (messages|jobs|tasks)|jobs? (are )?queued|queue[^.]*\b(grow|rising|piling)`),
		unless: re(`replica(tion)? lag|replica_lag|network lag|\blag(gy|ging)? (ui|input)`)},

	// A read replica replaying its source's log (PostgreSQL WAL, MySQL
	// binlog) slower than it is written: its lag grows like a consumer's.
	{cat: CategoryQueueBacklog, what: "a read replica falling behind its source", str: 0.72, roles: rDB,
		re: re(`replica(tion)? lag ((on|of|for) \S+ )?(has )?(exceeded|reached|is (now )?|of|at|above|over) \d|replica (is|are) \d+ ?(s|sec|seconds|minutes?) behind|Seconds_Behind_(Master|Source):\s*\d{3,}|replay (is|was|fell) (falling )?behind`)},
	{cat: CategoryQueueBacklog, what: "jobs waiting long in a queue", str: 0.7, roles: rMetLog, refStr: 0.35,
		re: re(`queue (latency|wait( time)?|age)\b|queue\b[^.;]{0,40}\blatency\b|latency of (the )?\S+ queue`)},
	{cat: CategoryQueueBacklog, what: "a burst of enqueued work", str: 0.5, roles: rMetLog,
		re: re(`\benqueued\b[^.;]*\d|\d[\d,.]*k?\s+(jobs|tasks|messages)\s+(were\s+)?enqueued`)},

	// cache_failure
	{cat: CategoryCacheFailure, what: "a cache miss storm or cold cache", str: 0.72, roles: []string{RoleDatabase, RoleLogs, RoleMetrics}, refStr: 0.35,
		re: re(`cache miss(es)? (storm|spike)|stampede|thundering herd|cold cache|cache (is )?(down|unavailable|unreachable|cold|flushed|empty|wiped)|fall(ing)? ?back to (the )?(db|database|origin|source|primary store)|master_link_status:down|cache[^.]*(flushed|wiped|lost)`)},
	{cat: CategoryCacheFailure, what: "the cache cluster failing", str: 0.75, roles: []string{RoleDatabase, RoleLogs, RoleInfrastructure}, refStr: 0.35,
		re:   re(`connection ?refused|ConnectionError|connection error|time(d)? ?out|\bdown\b|unreachable|READONLY|\bLOADING\b|MISCONF|OOM command not allowed|used_memory[^ ]*:[^ ]+ maxmemory|maxmemory_policy:noeviction|[+-]?[so]down\b|failover|restart(ed)?|terminated|CLUSTERDOWN|NotReady|items 0|evicted_keys:[1-9]|evictions`),
		need: cacheKW, needClause: true},

	// db_connection_exhaustion
	{cat: CategoryDBConnectionExhaustion, what: "the database connection limit or pool being exhausted", str: 0.88, roles: rDB, refStr: 0.35,
		re: re(`too many (clients|connections)|remaining connection slots|connection slots are reserved|max_user_connections|ER_CON_COUNT_ERROR|connection pool (is )?(exhausted|full)|pool (is )?exhausted|pool (timeout|timed out)|timeout (waiting for|acquiring) (a )?(idle )?connection|(could not|unable to|failed to) (get|obtain|acquire) (a )?(jdbc |database |db |pooled )?connection|connection is not available|QueuePool limit|PoolTimeout|no more connections allowed|max_client_conn|connection limit (exceeded|reached)|sorry, too many|ConnectionPoolTimeout|pool[^.]*waiting=[1-9]|acquire connection timeout|Knex: Timeout acquiring|connection not available|dropped from (the )?queue|checkout timeout|timed out waiting for (a |an )?(idle )?connection|maximum number of (processes|sessions)[^.]*exceeded|ORA-000(18|20)\b|ORA-1251[69]\b|listener could not find available handler`)},

	// db_lock_contention
	{cat: CategoryDBLockContention, what: "transactions waiting on database locks", str: 0.82, roles: rDB, refStr: 0.4,
		re: re(`lock wait timeout|deadlock|could not obtain lock|lock timeout|LockNotAvailable|waiting for \w*\s?lock|still waiting for|ShareLock|ExclusiveLock|row lock|lock[_ ]waits?|LOCK WAIT|blocked by (pid|process|transaction|session)|blocking (pid|query|transaction|session)|process holding the lock|CannotAcquireLock|metadata lock|lock contention|ORA-00060|SQLITE_BUSY|database is locked|lock_timeout`)},
	{cat: CategoryDBLockContention, what: "sessions waiting on locks held by another", str: 0.8, roles: rDB, refStr: 0.4,
		re: re(`\|\s*lock\s*\|\s*(transactionid|tuple|relation|advisory)|wait_event_type\W+lock\b|while (updating|locking|deleting) tuple|\bblocker\b|\d+ waiters\b|write intents?|intent (resolution|conflicts?)|WriteIntentError|TransactionRetryWithProtoRefreshError|RETRY_WRITE_TOO_OLD|contending (transactions|txns)`)},
	{cat: CategoryDBLockContention, what: "a blocking session being terminated", str: 0.6, roles: rDBOnly, polar: true,
		re: re(`pg_terminate_backend|pg_cancel_backend|\bkill (query )?\d+\b`)},
	{cat: CategoryDBLockContention, what: "a session idle in transaction holding locks", str: 0.6, roles: rDBOnly,
		re: re(`idle in transaction|long[- ]running transaction|ACTIVE \d{3,} sec`)},

	// db_slow_queries
	{cat: CategoryDBSlowQueries, what: "slow or unindexed queries", str: 0.72, roles: rDB, refStr: 0.45,
		re: re(`slow quer(y|ies)|slow[_ ]log|slow operation|seq scan|sequential scan|full (table|collection) scan|COLLSCAN|rows removed by filter|missing index|no index|without (an )?index|not indexed|unindexed|using filesort|using temporary|statement timeout|canceling statement due to statement timeout|long[- ]running quer|queries running longer|statements over|query plan (changed|regress)|plan regression`)},

	// memory_exhaustion
	{cat: CategoryMemoryExhaustion, what: "processes running out of memory", str: 0.88, roles: rInfra, refStr: 0.35,
		re:     re(`OOMKilled|OOM[- ]?kill|oom_kill|out of memory|OutOfMemory|Cannot allocate memory|heap limit|Allocation failed|MemoryError|memory limit exceeded|exceeded memory limit|memory cgroup out of memory|GC overhead limit|bad_alloc|MemoryPressure|memory leak|leaking memory|evicted[^.]*memory|(private|virtual) bytes memory limit|recycle[^.]*\bmemory limit|memory limit[^.]*recycle`),
		unless: re(`redis|memcache|maxmemory|OOM command not allowed`)},
	{cat: CategoryMemoryExhaustion, what: "containers killed by SIGKILL (exit 137)", str: 0.5, roles: []string{RoleInfrastructure},
		re: re(`exit code:?\s*137|exited with code 137|signal 9\b|SIGKILL`)},
	{cat: CategoryMemoryExhaustion, what: "garbage-collection thrashing", str: 0.55, roles: rMetLog,
		re: re(`\bGC time|gc pause|garbage collect|Mark-Compact|Full GC|allocation failure|gc overhead|GC thrash|stop-the-world`)},
	{cat: CategoryMemoryExhaustion, what: "container restarts", str: 0, roles: []string{RoleInfrastructure}, refStr: 0.3, negOnly: true,
		re: re(`\brestarts?\b|OOM`)},

	// cpu_saturation
	{cat: CategoryCPUSaturation, what: "CPU throttled at its limit", str: 0.75, roles: rInfraM, refStr: 0.3,
		re: re(`cpu throttl|throttled (periods|time)|cfs_throttled|nr_throttled|pinned at (exactly )?\d{3,5}m\b|throttled \d+(\.\d+)?% of (cfs )?periods`)},
	{cat: CategoryCPUSaturation, what: "CPU saturation", str: 0.62, roles: rInfraM, refStr: 0.3,
		re: re(`cpu (is )?(pegged|pinned|saturated|maxed|starv)|at (its |their |the )?cpu limit|(runnable|run) queue|soft lockup|hung task`)},
	{cat: CategoryCPUSaturation, what: "CPU credits exhausted or CPU stolen by the hypervisor", str: 0.8, roles: rInfraM,
		re: re(`cpu ?credit\w*[^.;]*(->\s*0\b|exhausted|depleted|ran out|out of|\bzero\b)|out of cpu credits|\bsteal\b[^.;]*\d{2}(\.\d+)?\s?%|\d{2}(\.\d+)? st\b|%steal|throttled to (its |the )?baseline|baseline (cap|performance)`)},
	{cat: CategoryCPUSaturation, what: "autoscaling exhausted", str: 0.5, roles: rInfraM,
		re: re(`\bat max(imum)? (capacity|replicas|size)|max(imum)? replicas reached|unable to scale|reached max`)},
	{cat: CategoryCPUSaturation, what: "CPU-bound hot code in a profile", str: 0.42, roles: []string{RoleInfrastructure},
		re: re(`pprof|py-spy|async-profiler|flame ?graph|perf top|% of samples|catastrophic backtracking|ReDoS|busy loop|hot loop`)},
	{cat: CategoryCPUSaturation, what: "workers timing out while busy", str: 0.3, roles: []string{RoleLogs},
		re: re(`WORKER TIMEOUT|worker timeout|event loop (lag|blocked)|blocked event loop`)},

	// disk_full
	{cat: CategoryDiskFull, what: "a full disk", str: 0.9, roles: rInfra, refStr: 0.35,
		re: re(`no space left on device|ENOSPC|Errno 28|errcode: 28|disk (is )?full|disk quota exceeded|filesystem (is )?full|volume (is )?full|DiskPressure|out of disk|insufficient (disk|storage)|ephemeral-storage|could not extend file|The disk is full|not enough space on the disk|flood[- ]stage|disk watermark|watermark[^.;]*exceeded|read[-_ ]only[-_ ]allow[-_ ]delete|disk usage exceeded`)},
	{cat: CategoryDiskFull, what: "disk space problems", str: 0, roles: []string{RoleInfrastructure}, refStr: 0.35, negOnly: true,
		re: re(`disk (alerts?|pressure|issues?|space issues?)`)},

	// Amazon RDS's own events about an instance's storage and its
	// Multi-AZ standby.
	{cat: CategoryDiskFull, what: "a database instance out of storage", str: 0.85, roles: []string{RoleDatabase, RoleLogs, RoleInfrastructure},
		re: re(`allocated storage has been exhausted|(ran|run|running) out of storage|free storage (capacity )?(for db instance \S+ )?is (critically )?low|storage is (getting |critically )?low|storage-full`)},
	{cat: CategoryNodeFailure, what: "a database host failing over to its standby", str: 0.75, roles: []string{RoleDatabase, RoleLogs, RoleInfrastructure},
		re: re(`multi-az (instance )?failover|failover (to|of) (the )?standby|promotion of (a|the) standby`)},
	// PostgreSQL's own warning when write volume forces checkpoints sooner
	// than checkpoint_timeout: every page written again, I/O saturated.
	{cat: CategoryDBSlowQueries, what: "write load forcing checkpoints faster than the server is set for", str: 0.72, roles: rDB,
		re: re(`checkpoints are occurring too frequently`)},

	// bad_deployment (code defects and version references)
	{cat: CategoryBadDeployment, what: "application code errors", str: 0.35, roles: []string{RoleLogs},
		re: re(`NullPointerException|TypeError|ReferenceError|AttributeError|KeyError|NameError|undefined is not|Cannot read propert(y|ies) of (undefined|null)|nil pointer dereference|\bpanic:|segmentation (fault|violation)|ClassNotFoundException|NoSuchMethodError|NoMethodError|ModuleNotFoundError|ImportError|IndexError|ClassCastException|unhandled (exception|rejection)|undefined method|NoSuchFieldError|IllegalStateException|MissingMethodException|TypeLoadException|Could not load (file or )?assembly|Method not found`)},
	{cat: CategoryBadDeployment, what: "code expecting a schema the database lacks", str: 0.5, roles: rDepLog,
		re: re(`UndefinedColumn|UndefinedTable|column \S+ does not exist|relation \S+ does not exist|unknown column|no such (column|table)|(missing|pending|skipped) migrations?|migrations? (skipped|not run|pending)`)},
	{cat: CategoryBadDeployment, what: "failing code introduced by a release", str: 0.7, roles: rDepLog,
		re: re(`(new|added|introduced|changed|landed) in (v|version |release |build )?\d[\w.]*|introduced (by|in) (the )?(release|deploy|version)|regression (in|from) (v|release|version)|only (the )?new (pods|version|release)|canary (pods )?(fail|errors?)`)},
	{cat: CategoryBadDeployment, what: "deploys", str: 0, roles: rDeploy, refStr: 0.55, negOnly: true,
		re: re(`\b(deploy(s|ed|ments?)?|releases?|rollouts?|new images?|code changes?)\b`),
		// A rollout that has not made progress is a rollout under way (the
		// deployment controller's ProgressDeadlineExceeded), not the absence
		// of one.
		unless: re(`progress|stalled|stuck|is blocked|mid-rollout`)},
	{cat: CategoryBadDeployment, what: "recent deploys", str: 0.45, roles: rDeploy, polar: true, refute: true,
		re: re(`(deploy\w*|release\w*|rollout)\b[^.;]*\b(\d+|two|three|four|five|six|several) (days|weeks) ago|(last|previous) (deploy|release)\w*[^.;]*\b(\d+|two|three|four|five|six|several) (days|weeks) ago|(last|previous) (deploy|release)\w* (was )?(yesterday|last week|on (mon|tue|wed|thu|fri|sat|sun)\w*)|(unrelated|different|another|other) (service|team|app)`)},

	// config_change
	{cat: CategoryConfigChange, what: "configuration changes", str: 0, roles: rDeploy, refStr: 0.5, negOnly: true,
		re: re(`\b(config(uration)?|parameter|flag|setting|schema)( or \w+)? changes?\b|\bchanges\b`)},
	{cat: CategoryConfigChange, what: "failures tied to a feature flag state", str: 0.6, roles: rDepLog,
		re: re(`flag[=: ]\S+[=:](on|true|enabled)|only (requests )?with (the )?flag|flag[- ]on requests|(fail|error)[^.]*\bflag\b|\bflag\b[^.]*\b(fail|error)`)},
}
