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
	// alertNeed, when set, must also match an alert's own title or
	// description: words a provider's status page uses ("elevated error
	// rates") describe, in an alert, the tenant's own symptom.
	alertNeed *regexp.Regexp
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
	// Cache products and proxies by name: Redis, Valkey, KeyDB, Memcached,
	// Amazon ElastiCache, Redis Sentinel, twemproxy, mcrouter, Hazelcast.
	cacheKW = re(`redis|memcache|valkey|elasticache|sentinel|twemproxy|mcrouter|\bcache\b|keydb|hazelcast`)
	// Database products and their usual short names: PostgreSQL, MySQL,
	// MariaDB, MongoDB, Amazon RDS/Aurora, InnoDB.
	dbCtx = re(`\b(db|database|pg|postgres\w*|mysql\w*|mariadb|mongo\w*|sql|rds|aurora|innodb)\b`)
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
	// Go crypto/x509 and OpenSSL ("certificate has expired"), OpenSSL/nginx
	// ("sslv3 alert certificate expired"), Node.js CERT_HAS_EXPIRED, the TLS
	// alert certificate_expired (RFC 8446), Kubernetes/cert-manager
	// CertificateExpired, Erlang/OTP ssl ("certificate expired").
	{cat: CategoryCertificateExpired, what: "an expired TLS certificate", str: 0.92, roles: []string{RoleNetwork, RoleLogs, RoleInfrastructure}, refStr: 0.3,
		re: re(`certificate has expired|certificate (is )?expired|cert(ificate)? expired|expired certificate|CERT_HAS_EXPIRED|CertificateExpired|certificate_expired|alert certificate expired`)},
	// Go crypto/x509 and crypto/tls ("x509:", "tls: bad certificate"), Python
	// ssl (CERTIFICATE_VERIFY_FAILED, SSLCertVerificationError), Java JSSE
	// (SSLHandshakeException, "PKIX path building failed"), Node.js
	// ("unable to verify the first certificate", ERR_TLS_CERT_ALTNAME_INVALID),
	// OpenSSL ("self signed certificate").
	{cat: CategoryCertificateExpired, what: "TLS certificate verification failures", str: 0.55, roles: rNet,
		re: re(`x509:|certificate verify failed|CERTIFICATE_VERIFY_FAILED|PKIX path|unable to verify the first certificate|SSLHandshakeException|tls: (failed to verify|bad certificate|handshake failure)|self[- ]signed certificate|certificate signed by unknown authority|SSLCertVerificationError|ERR_TLS_CERT`)},
	// cert-manager ("The certificate request has failed to complete"), certbot
	// ("Failed to renew certificate", "All renewals failed"), expiry metrics
	// (Prometheus blackbox_exporter probe_ssl_earliest_cert_expiry, AWS ACM
	// DaysToExpiry).
	{cat: CategoryCertificateExpired, what: "a certificate renewal or validity problem", str: 0.55, roles: rNetI,
		re:   re(`certificate request has failed|renewal (failed|error)|failed to renew|expir(y|es|ed|ation)`),
		need: re(`cert|tls|ssl|x509`)},
	// certbot ("Congratulations, all renewals succeeded"), Caddy/CertMagic
	// ("certificate renewed successfully"), AWS ACM renewal notices.
	{cat: CategoryCertificateExpired, what: "a certificate that was renewed", str: 0.5, roles: rNetI, polar: true, refute: true,
		re: re(`renewals? (all )?succeeded|renewed successfully|successfully renewed`)},

	// dns_failure
	// DNS RCODEs (NXDOMAIN, SERVFAIL), Go net ("no such host", "server
	// misbehaving", "lookup x on y: i/o timeout"), glibc getaddrinfo ("Name or
	// service not known", "Temporary failure in name resolution"), macOS
	// ("nodename nor servname provided"), Node.js EAI_AGAIN/ENOTFOUND, Java
	// UnknownHostException, curl ("Could not resolve host"), nginx ("could not
	// be resolved"), dig (";; connection timed out; no servers could be reached").
	{cat: CategoryDNSFailure, what: "name resolution failures", str: 0.88, roles: rNet, refStr: 0.3,
		re: re(`NXDOMAIN|SERVFAIL|no such host|server misbehaving|Name or service not known|nodename nor servname|Temporary failure in name resolution|\b(EAI_AGAIN|ENOTFOUND)\b|UnknownHostException|could not resolve|couldn't resolve|unable to resolve|failed to resolve|name resolution|DNS resolution|no servers could be reached|lookup \S+( on \S+)?: (i/o timeout|no such host|server misbehaving|read udp)|dns (lookup|query|request)s? (failed|timed? ?out|error)`)},
	// The resolvers themselves: CoreDNS, kube-dns, NodeLocal DNSCache,
	// dnsmasq, Unbound, BIND named, Amazon Route 53 Resolver.
	{cat: CategoryDNSFailure, what: "DNS server errors", str: 0.7, roles: rNetI,
		re:   re(`\b(coredns|kube-dns|node-local-dns|nodelocaldns|dnsmasq|unbound|named|bind9|route ?53 resolver|resolver)\b`),
		need: re(`error|fail|timeout|timed out|crashloop|refused|unreachable|down`)},

	// network_partition
	// Linux errno EHOSTUNREACH/ENETUNREACH ("No route to host", "Network is
	// unreachable"), ping/ICMP ("Destination Host Unreachable"), AWS Health
	// ("connectivity issues between instances"), RabbitMQ ("network
	// partition", running_partitioned_network), Pacemaker/DRBD split-brain,
	// HAProxy health checks ("Layer4 timeout", L4TOUT, L4CON).
	{cat: CategoryNetworkPartition, what: "hosts losing connectivity", str: 0.72, roles: rNetI, refStr: 0.35,
		re: re(`no route to host|EHOSTUNREACH|network is unreachable|ENETUNREACH|host unreachable|connectivity (issues|problems|loss) between|network partition|split[- ]brain|partitioned|Layer4 (timeout|connection problem)|L4TOUT|L4CON`)},
	// BGP session states (Cisco/Juniper/FRR "neighbor ... Down", Idle, "not
	// established", withdrawn routes), Azure ExpressRoute BgpAvailability,
	// Linux NIC drivers ("Link is Down"), Cisco NX-OS ("Interface Ethernet1/49
	// is down"), IPsec/AWS Site-to-Site VPN tunnel state, carrier and cloud
	// status notices ("fiber cut", "increased packet loss between
	// Availability Zones"), RabbitMQ pause_minority ("Cluster
	// minority/secondary status detected").
	{cat: CategoryNetworkPartition, what: "lost routes or links between networks", str: 0.8, roles: rNetI, refStr: 0.35,
		re: re(`\bbgp\b[^.;]*\b(down|lost|flap\w*|idle|not established|withdrawn|dropped)\b|bgp ?availability[^.;]*\b0(\.0+)?\s?%|routes? (are )?(missing|withdrawn|lost)\b|missing routes?\b|fib(re|er) cut|circuit (is )?(down|outage|failure)|\blink (is )?down\b|interface \S+ (is )?down|tunnel (is )?down|peering (is )?(down|lost)|packet loss (between|across)|(increased|elevated|high|heavy) packet loss|cluster minority|minority (status|partition)|pause_minority`)},
	// Linux ETIMEDOUT (errno 110, "Connection timed out"), Go net ("dial tcp
	// ...: i/o timeout"), curl ("Failed to connect to x port 443 after N ms",
	// "Connection timeout after"), Python urllib3/requests ("connect
	// timeout=").
	{cat: CategoryNetworkPartition, what: "connection attempts timing out", str: 0.45, roles: rNet,
		re:     re(`connection timed out|connect(ion)? timeout|\bETIMEDOUT\b|errno 110\b|dial tcp \S+: (i/o timeout|connect: connection timed out)|failed to connect to \S+ port \d+ after \d+ ms`),
		unless: cacheKW},
	// The network's own vocabulary, for "no network issues": ping/mtr packet
	// loss, interface drop counters (ip -s link, node_exporter
	// node_network_receive_drop_total).
	{cat: CategoryNetworkPartition, what: "network problems", str: 0, roles: rNetI, refStr: 0.35, negOnly: true,
		re: re(`(network|connectivity) (alerts?|issues?|errors?|incidents?|problems?)|dropped packets|packet loss`)},

	// upstream_dependency
	// Atlassian Statuspage component and incident states ("Degraded
	// Performance", "Partial Outage", "Major Outage", "Investigating",
	// "Identified"), AWS Health and Google Cloud Service Health ("elevated
	// error rates", "increased latency"). In an alert's own title they are
	// the tenant's symptom unless the alert comes from such a page.
	{cat: CategoryUpstreamDependency, what: "a provider reporting degraded service", str: 0.8, roles: []string{RoleNetwork}, polar: true,
		alertNeed: re(`status ?page|statuspage|status\.|service health|health dashboard|aws health|\bprovider\b`),
		re:        re(`status( page)?\b.*(degraded|outage|incident|elevated error|investigating|partial)|(degraded performance|elevated (errors?|error rates?|failures|latenc\w*)|major outage|partial outage)|^\s*\d{1,2}:\d{2}(\s*utc)?\s*[-–]?\s*(investigating|identified)\b`)},
	// Statuspage ("All Systems Operational"), Google Cloud Service Health
	// ("No incidents"), AWS Health ("no issues", "operating normally").
	{cat: CategoryUpstreamDependency, what: "a provider reporting healthy service", str: 0.5, roles: []string{RoleNetwork}, polar: true, refute: true,
		re: re(`(status( page)?|service health|provider)\b[^.]*\b(all systems operational|operational|no (known )?(issues|incidents))`)},
	// HTTP 502/503/504 reason phrases, Envoy ("upstream connect error or
	// disconnect/reset before headers", "no healthy upstream"), nginx
	// ("upstream prematurely closed connection"), HTTP client logs
	// ("status=503", "returned 503").
	{cat: CategoryUpstreamDependency, what: "a dependency answering 5xx", str: 0.65, roles: rNet,
		re:     re(`\b50[234]\b[^,;]{0,12}(service unavailable|bad gateway|gateway time-?out)|\b(service unavailable|bad gateway)\b|upstream connect error|no healthy upstream|upstream (prematurely closed|reset)|([^\d\s.]\s*->|failed:|response code|returned|status(code)?[=: ]+)\s*5\d\d\b`),
		unless: cacheKW},
	// resilience4j ("CircuitBreaker 'x' is OPEN"), Hystrix, Polly
	// (BrokenCircuitException), Spring Cloud CircuitBreaker.
	{cat: CategoryUpstreamDependency, what: "a client circuit breaker opening", str: 0.6, roles: rNet,
		re: re(`circuit ?breaker\b.*\b(open|tripped)|CircuitBreakerOpen|BrokenCircuit`)},
	// Linux ECONNREFUSED/ECONNRESET ("Connection refused", "Connection reset
	// by peer"), Java SocketTimeoutException ("Read timed out"), Python
	// requests ReadTimeout, Go context ("context deadline exceeded") and
	// net/http ("Client.Timeout exceeded while awaiting headers"), Envoy
	// ("upstream request timeout", upstream_rq_timeout), nginx ("upstream
	// timed out").
	{cat: CategoryUpstreamDependency, what: "calls to a dependency timing out or being refused", str: 0.4, roles: rNet,
		re:     re(`ECONNREFUSED|connection refused|ECONNRESET|connection reset by peer|read ?timed ?out|ReadTimeout|SocketTimeoutException|context deadline exceeded|awaiting headers|upstream (request )?time(d)? ?out|upstream timeouts?`),
		unless: cacheKW},
	// For "no provider incidents": Statuspage incidents, nginx/Envoy upstream
	// errors.
	{cat: CategoryUpstreamDependency, what: "dependency problems", str: 0, roles: []string{RoleNetwork}, refStr: 0.3, negOnly: true,
		re: re(`(provider|upstream|dependency|partner) (alerts?|issues?|errors?|incidents?|problems?)`)},

	// rate_limited
	// HTTP 429 "Too Many Requests", RateLimit headers (x-ratelimit-remaining:
	// GitHub, IETF draft), Google APIs (RESOURCE_EXHAUSTED, "Quota
	// exceeded"), AWS (ThrottlingException "Rate exceeded",
	// RequestLimitExceeded, DynamoDB ProvisionedThroughputExceededException
	// "provisioned throughput ... was exceeded", S3 SlowDown), Kubernetes
	// ResourceQuota ("exceeded quota"), Google Maps OVER_QUERY_LIMIT, Docker
	// Hub TOOMANYREQUESTS, Salesforce REQUEST_LIMIT_EXCEEDED, nginx
	// limit_req/limit_conn ("limiting requests, excess: 20.440 by zone").
	// unless: throttling that is the kernel's CPU bandwidth control (cgroup
	// CFS cpu.stat nr_throttled, periods, millicore limits) or Elasticsearch's
	// flood-stage disk block (watermark, cluster_block_exception,
	// read_only_allow_delete).
	{cat: CategoryRateLimited, what: "requests rejected by a rate limit or quota", str: 0.88, roles: rNet, refStr: 0.35,
		re:     re(`\b429\b|too many requests|rate[- ]?limit(ed|ing)?\b|ratelimit-remaining[=: ]+0\b|quota (exceeded|exhausted)|exceeded (your |the )?(\w+ )?quota|RESOURCE_EXHAUSTED|ThrottlingException|\bthrottled\b|throttling|RequestLimitExceeded|ProvisionedThroughputExceeded|TooManyRequests|\bSlowDown\b|Rate exceeded|OVER_QUERY_LIMIT|request limit (exceeded|reached)|throughput [^.]*exceeded|limiting (requests|connections)|\blimit_(req|conn)\b|excess: \d`),
		unless: re(`cpu|cgroup|cfs|nr_throttled|periods|\b\d{3,4}m\b|watermark|cluster_block_exception|read[-_ ]only`)},

	// queue_backlog
	// Kafka (kafka-consumer-groups LAG, "consumer lag"), Google Pub/Sub
	// (backlog, oldest_unacked_message_age), RabbitMQ (messages_ready,
	// messages_unacknowledged), Amazon SQS (ApproximateAgeOfOldestMessage,
	// ApproximateNumberOfMessagesVisible), IBM MQ / Amazon MQ queue depth,
	// Sidekiq (Queue#size), Redis Streams XPENDING and Cassandra nodetool
	// ("pending tasks").
	// unless: a database replica's lag (the rule below) and lag that is not a
	// queue's.
	{cat: CategoryQueueBacklog, what: "a growing queue or consumer lag", str: 0.72, roles: rMetLog, refStr: 0.35,
		re:     re(`consumer (group )?lag|\blag\b|backlog|queue depth|queue (length|size)|messages[_ ]ready|ready messages|\bunacked\b|oldest (message|unacked)|ApproximateAgeOfOldestMessage|ApproximateNumberOfMessages|pending (messages|jobs|tasks)`),
		unless: re(`replica(tion)? lag|replica_lag|network lag|\blag(gy|ging)? (ui|input)`)},

	// A read replica replaying its source's log (PostgreSQL WAL, MySQL
	// binlog) slower than it is written: its lag grows like a consumer's.
	// Amazon RDS events ("replication lag has exceeded 900 seconds", "Read
	// replica replay is behind the source"), MySQL SHOW REPLICA STATUS
	// (Seconds_Behind_Source/Master), MongoDB rs.printSecondaryReplicationInfo
	// ("secs ... behind the primary").
	{cat: CategoryQueueBacklog, what: "a read replica falling behind its source", str: 0.72, roles: rDB,
		re: re(`replica(tion)? lag ((on|of|for) \S+ )?(has )?(exceeded|reached|is (now )?|of|at|above|over) \d|replica (is|are) \d+ ?(s|sec|seconds|minutes?) behind|Seconds_Behind_(Master|Source):\s*\d{3,}|replay (is|was|fell) (falling )?behind`)},
	// Sidekiq (Queue#latency, the Web UI's "Latency"), Amazon SQS message
	// age, Heroku router queue time.
	{cat: CategoryQueueBacklog, what: "jobs waiting long in a queue", str: 0.7, roles: rMetLog, refStr: 0.35,
		re: re(`queue (latency|wait( time)?|age)\b|queue\b[^.;]{0,40}\blatency\b`)},
	// Sidekiq::Stats ("enqueued 180,412"), RQ/Celery enqueued counts.
	{cat: CategoryQueueBacklog, what: "a burst of enqueued work", str: 0.5, roles: rMetLog,
		re: re(`\benqueued\b[^.;]*\d`)},

	// cache_failure
	// Cache stampede and thundering herd (the terms of the Memcached and
	// Varnish documentation), Redis INFO replication (master_link_status:down).
	{cat: CategoryCacheFailure, what: "a cache miss storm or cold cache", str: 0.72, roles: []string{RoleDatabase, RoleLogs, RoleMetrics}, refStr: 0.35,
		re: re(`stampede|thundering herd|cold cache|master_link_status:down`)},
	// Redis server errors (READONLY, LOADING, MISCONF, "OOM command not
	// allowed", CLUSTERDOWN), Redis INFO (used_memory vs maxmemory,
	// maxmemory_policy:noeviction, evicted_keys), Redis Sentinel (+sdown,
	// +odown, failover), redis-py ConnectionError/TimeoutError ("Connection
	// refused"), Memcached stats (curr_items, evictions), Kubernetes node
	// NotReady; each only beside a cache's name.
	{cat: CategoryCacheFailure, what: "the cache cluster failing", str: 0.75, roles: []string{RoleDatabase, RoleLogs, RoleInfrastructure}, refStr: 0.35,
		re:   re(`connection ?refused|ConnectionError|connection error|time(d)? ?out|\bdown\b|unreachable|READONLY|\bLOADING\b|MISCONF|OOM command not allowed|used_memory[^ ]*:[^ ]+ maxmemory|maxmemory_policy:noeviction|[+-]?[so]down\b|failover|restart(ed)?|terminated|CLUSTERDOWN|NotReady|curr_items:?\s+0\b|evicted_keys:[1-9]|evictions`),
		need: cacheKW, needClause: true},

	// db_connection_exhaustion
	// PostgreSQL 53300 ("sorry, too many clients already", "remaining
	// connection slots are reserved"), MySQL 1040/1203 ("Too many
	// connections", ER_CON_COUNT_ERROR, max_user_connections), PgBouncer ("no
	// more connections allowed (max_client_conn)"), HikariCP ("Connection is
	// not available, request timed out", pool stats "waiting=N"), Spring
	// ("Could not get JDBC Connection"), ActiveRecord ("could not obtain a
	// connection from the pool"), Apache Commons DBCP / Tomcat JDBC ("Pool
	// exhausted", "Timeout waiting for idle object"), SQLAlchemy ("QueuePool
	// limit of size 5 overflow 10 reached"), psycopg_pool PoolTimeout, Rust
	// sqlx ("pool timed out while waiting for an open connection"), Knex
	// ("Knex: Timeout acquiring a connection"), Elixir DBConnection
	// ("connection not available and request was dropped from queue"),
	// Oracle (ORA-00018, ORA-00020 "maximum number of processes exceeded",
	// ORA-12516/12519 "listener could not find available handler").
	// unless: go-redis's own pool (ErrPoolTimeout, "redis: connection pool
	// timeout"), a cache client's pool, which the cache rule reads.
	{cat: CategoryDBConnectionExhaustion, what: "the database connection limit or pool being exhausted", str: 0.88, roles: rDB, refStr: 0.35,
		unless: re(`\bredis: (connection )?pool timeout`),
		re:     re(`too many (clients|connections)|remaining connection slots|connection slots are reserved|max_user_connections|ER_CON_COUNT_ERROR|connection pool (is )?(exhausted|full)|pool (is )?exhausted|pool (timeout|timed out)|timeout (waiting for|acquiring) (a )?(idle )?connection|(could not|unable to|failed to) (get|obtain|acquire) (a )?(jdbc |database |db |pooled )?connection|connection is not available|QueuePool limit|PoolTimeout|no more connections allowed|max_client_conn|connection limit (exceeded|reached)|sorry, too many|ConnectionPoolTimeout|pool[^.]*waiting=[1-9]|acquire connection timeout|Knex: Timeout acquiring|connection not available|dropped from (the )?queue|timed out waiting for (a |an )?(idle )?connection|maximum number of (processes|sessions)[^.]*exceeded|ORA-000(18|20)\b|ORA-1251[69]\b|listener could not find available handler`)},

	// db_lock_contention
	// MySQL/InnoDB (1205 "Lock wait timeout exceeded", 1213 "Deadlock found",
	// SHOW ENGINE INNODB STATUS "LOCK WAIT", "row lock(s)", "Waiting for table
	// metadata lock"), PostgreSQL (55P03 LockNotAvailable "could not obtain
	// lock", lock_timeout, log_lock_waits "still waiting for ShareLock",
	// "Process holding the lock", ExclusiveLock, pg_blocking_pids), Spring
	// CannotAcquireLockException, SQL Server blocking sessions, Oracle
	// ORA-00060, SQLite SQLITE_BUSY ("database is locked").
	{cat: CategoryDBLockContention, what: "transactions waiting on database locks", str: 0.82, roles: rDB, refStr: 0.4,
		re: re(`lock wait timeout|deadlock|could not obtain lock|lock timeout|LockNotAvailable|waiting for \w*\s?lock|still waiting for|ShareLock|ExclusiveLock|row lock|lock[_ ]waits?|LOCK WAIT|blocked by (pid|process|transaction|session)|blocking (pid|query|transaction|session)|process holding the lock|CannotAcquireLock|metadata lock|lock contention|ORA-00060|SQLITE_BUSY|database is locked|lock_timeout`)},
	// PostgreSQL pg_stat_activity/pg_locks (wait_event_type Lock, locktype
	// transactionid/tuple/relation/advisory) and its CONTEXT line ("while
	// updating tuple"), CockroachDB (write intents, WriteIntentError,
	// TransactionRetryWithProtoRefreshError, RETRY_WRITE_TOO_OLD, intent
	// resolution, contending transactions).
	{cat: CategoryDBLockContention, what: "sessions waiting on locks held by another", str: 0.8, roles: rDB, refStr: 0.4,
		re: re(`\|\s*lock\s*\|\s*(transactionid|tuple|relation|advisory)|wait_event_type\W+lock\b|while (updating|locking|deleting) tuple|write intents?|intent (resolution|conflicts?)|WriteIntentError|TransactionRetryWithProtoRefreshError|RETRY_WRITE_TOO_OLD|contending (transactions|txns)`)},
	// PostgreSQL pg_terminate_backend/pg_cancel_backend, MySQL and SQL Server
	// KILL.
	{cat: CategoryDBLockContention, what: "a blocking session being terminated", str: 0.6, roles: rDBOnly, polar: true,
		re: re(`pg_terminate_backend|pg_cancel_backend|\bkill (query )?\d+\b`)},
	// PostgreSQL state "idle in transaction", InnoDB ("ACTIVE 1843 sec"),
	// SQL Server/pganalyze long-running transactions.
	{cat: CategoryDBLockContention, what: "a session idle in transaction holding locks", str: 0.6, roles: rDBOnly,
		re: re(`idle in transaction|long[- ]running transaction|ACTIVE \d{3,} sec`)},

	// db_slow_queries
	// MySQL slow query log and EXPLAIN ("Using filesort", "Using temporary"),
	// MongoDB ("Slow query", COLLSCAN, unindexed queries), PostgreSQL (EXPLAIN
	// "Seq Scan", "Rows Removed by Filter", 57014 "canceling statement due to
	// statement timeout"), Heroku pg:diagnose ("Long Running Queries"), SQL
	// Server missing-index DMVs and Query Store plan regressions.
	{cat: CategoryDBSlowQueries, what: "slow or unindexed queries", str: 0.72, roles: rDB, refStr: 0.45,
		re: re(`slow quer(y|ies)|slow[_ ]log|slow operation|seq scan|sequential scan|full (table|collection) scan|COLLSCAN|rows removed by filter|missing index|no index|without (an )?index|not indexed|unindexed|using filesort|using temporary|statement timeout|canceling statement due to statement timeout|long[- ]running quer|query plan (changed|regress)|plan regression`)},

	// memory_exhaustion
	// Kubernetes OOMKilled, Linux kernel OOM killer ("Out of memory: Killed
	// process", "Memory cgroup out of memory", oom_kill_process), JVM
	// OutOfMemoryError ("GC overhead limit exceeded"), V8 ("Reached heap
	// limit Allocation failed - JavaScript heap out of memory"), Python
	// MemoryError, ENOMEM ("Cannot allocate memory"), C++ std::bad_alloc,
	// kubelet MemoryPressure and memory evictions, Cloud Run ("Memory limit
	// of 512 MiB exceeded"), Node.js ("Possible EventEmitter memory leak
	// detected"), IIS WAS event 5117 ("requested a recycle because it reached
	// its private bytes memory limit").
	// unless: Redis's own maxmemory refusals, a cache's problem.
	{cat: CategoryMemoryExhaustion, what: "processes running out of memory", str: 0.88, roles: rInfra, refStr: 0.35,
		re:     re(`OOMKilled|OOM[- ]?kill|oom_kill|out of memory|OutOfMemory|Cannot allocate memory|heap limit|Allocation failed|MemoryError|memory limit exceeded|exceeded memory limit|memory cgroup out of memory|GC overhead limit|bad_alloc|MemoryPressure|memory leak|leaking memory|evicted[^.]*memory|(private|virtual) bytes memory limit|recycle[^.]*\bmemory limit|memory limit[^.]*recycle`),
		unless: re(`redis|memcache|maxmemory|OOM command not allowed`)},
	// Docker/Kubernetes exit code 137 (128+SIGKILL), "signal 9".
	{cat: CategoryMemoryExhaustion, what: "containers killed by SIGKILL (exit 137)", str: 0.5, roles: []string{RoleInfrastructure},
		re: re(`exit code:?\s*137|exited with code 137|signal 9\b|SIGKILL`)},
	// JVM GC logs (JDK 8 G1 "GC pause (G1 Evacuation Pause)", "Full GC",
	// "(Allocation Failure)", "GC overhead", stop-the-world safepoints), V8
	// --trace-gc ("Mark-Compact", "allocation failure"), garbage collection.
	{cat: CategoryMemoryExhaustion, what: "garbage-collection thrashing", str: 0.55, roles: rMetLog,
		re: re(`gc pause|garbage collect|Mark-Compact|Full GC|allocation failure|gc overhead|stop-the-world`)},
	// kubectl's RESTARTS column and OOM kills, for "no restarts".
	{cat: CategoryMemoryExhaustion, what: "container restarts", str: 0, roles: []string{RoleInfrastructure}, refStr: 0.3, negOnly: true,
		re: re(`\brestarts?\b|OOM`)},

	// cpu_saturation
	// cgroup CPU bandwidth control (cpu.stat nr_throttled, throttled_time),
	// cAdvisor container_cpu_cfs_throttled_periods_total/_seconds_total,
	// kubernetes-mixin CPUThrottlingHigh.
	{cat: CategoryCPUSaturation, what: "CPU throttled at its limit", str: 0.75, roles: rInfraM, refStr: 0.3,
		re: re(`cpu throttl|throttled (periods|time)|cfs_throttled|nr_throttled`)},
	// Linux scheduler run queue (vmstat "r", BEAM run queue), Linux kernel
	// watchdog ("BUG: soft lockup - CPU#3 stuck"), hung task detector.
	{cat: CategoryCPUSaturation, what: "CPU saturation", str: 0.62, roles: rInfraM, refStr: 0.3,
		re: re(`(runnable|run) queue|soft lockup|hung task`)},
	// Amazon EC2 burstable instances (CloudWatch CPUCreditBalance), Linux
	// steal time (top "st", sar/mpstat %steal, node_exporter mode="steal").
	{cat: CategoryCPUSaturation, what: "CPU credits exhausted or CPU stolen by the hypervisor", str: 0.8, roles: rInfraM,
		re: re(`cpu ?credit\w*[^.;]*(->\s*0\b|exhausted|depleted|ran out|out of|\bzero\b)|\bsteal\b[^.;]*\d{2}(\.\d+)?\s?%|\d{2}(\.\d+)? st\b|%steal`)},
	// kubernetes-mixin KubeHpaMaxedOut ("running at max replicas"), EC2 Auto
	// Scaling group at its MaxSize.
	{cat: CategoryCPUSaturation, what: "autoscaling exhausted", str: 0.5, roles: rInfraM,
		re: re(`\bat max(imum)? (capacity|replicas|size)|max(imum)? replicas reached`)},
	// Profilers by name (Go pprof, py-spy, async-profiler, perf top, flame
	// graphs); regex backtracking (ReDoS, .NET RegexMatchTimeoutException
	// "catastrophic backtracking").
	{cat: CategoryCPUSaturation, what: "CPU-bound hot code in a profile", str: 0.42, roles: []string{RoleInfrastructure},
		re: re(`pprof|py-spy|async-profiler|flame ?graph|perf top|catastrophic backtracking|ReDoS`)},
	// gunicorn ("[CRITICAL] WORKER TIMEOUT"), Node.js event loop lag
	// (prom-client nodejs_eventloop_lag_seconds), Vert.x blocked event loop.
	{cat: CategoryCPUSaturation, what: "workers timing out while busy", str: 0.3, roles: []string{RoleLogs},
		re: re(`WORKER TIMEOUT|worker timeout|event loop (lag|blocked)|blocked event loop`)},

	// disk_full
	// Linux ENOSPC ("No space left on device", Python "[Errno 28]", MySQL
	// "Errcode: 28"), EDQUOT ("Disk quota exceeded"), Windows ("The disk is
	// full", "There is not enough space on the disk"), kubelet DiskPressure
	// and ephemeral-storage evictions, Kubernetes OutOfDisk, PostgreSQL
	// ("could not extend file"), Amazon RDS ("insufficient storage"),
	// Elasticsearch ("flood stage disk watermark [95%] exceeded", "disk usage
	// exceeded flood-stage watermark, index has read-only-allow-delete
	// block").
	{cat: CategoryDiskFull, what: "a full disk", str: 0.9, roles: rInfra, refStr: 0.35,
		re: re(`no space left on device|ENOSPC|Errno 28|errcode: 28|disk (is )?full|disk quota exceeded|filesystem (is )?full|volume (is )?full|DiskPressure|out of disk|insufficient (disk|storage)|ephemeral-storage|could not extend file|The disk is full|not enough space on the disk|flood[- ]stage|disk watermark|watermark[^.;]*exceeded|read[-_ ]only[-_ ]allow[-_ ]delete|disk usage exceeded`)},
	// kubelet DiskPressure, for "no disk alerts".
	{cat: CategoryDiskFull, what: "disk space problems", str: 0, roles: []string{RoleInfrastructure}, refStr: 0.35, negOnly: true,
		re: re(`disk (alerts?|pressure|issues?|space issues?)`)},

	// Amazon RDS's own events about an instance's storage and its
	// Multi-AZ standby: RDS-EVENT-0007 ("Allocated storage has been
	// exhausted"), RDS-EVENT-0089 ("The free storage capacity for DB Instance
	// ... is low"), the storage-full instance status.
	{cat: CategoryDiskFull, what: "a database instance out of storage", str: 0.85, roles: []string{RoleDatabase, RoleLogs, RoleInfrastructure},
		re: re(`allocated storage has been exhausted|(ran|run|running) out of storage|free storage (capacity )?(for db instance \S+ )?is (critically )?low|storage is (getting |critically )?low|storage-full`)},
	// RDS Multi-AZ events ("Multi-AZ instance failover started", "A Multi-AZ
	// failover that resulted in the promotion of a standby instance is
	// complete").
	{cat: CategoryNodeFailure, what: "a database host failing over to its standby", str: 0.75, roles: []string{RoleDatabase, RoleLogs, RoleInfrastructure},
		re: re(`multi-az (instance )?failover|failover (to|of) (the )?standby|promotion of (a|the) standby`)},
	// PostgreSQL's own warning when write volume forces checkpoints sooner
	// than checkpoint_timeout: every page written again, I/O saturated.
	{cat: CategoryDBSlowQueries, what: "write load forcing checkpoints faster than the server is set for", str: 0.72, roles: rDB,
		re: re(`checkpoints are occurring too frequently`)},

	// bad_deployment (code defects and version references)
	// Runtime exceptions: Java (NullPointerException, ClassNotFoundException,
	// NoSuchMethodError, ClassCastException, IllegalStateException), JavaScript
	// (TypeError, ReferenceError, "Cannot read properties of undefined"),
	// Python (AttributeError, KeyError, NameError, ImportError,
	// ModuleNotFoundError, IndexError), Go ("panic:", "nil pointer
	// dereference", "segmentation violation"), Ruby (NoMethodError, "undefined
	// method"), .NET ("Unhandled exception.", MissingMethodException "Method
	// not found", TypeLoadException, "Could not load file or assembly").
	{cat: CategoryBadDeployment, what: "application code errors", str: 0.35, roles: []string{RoleLogs},
		re: re(`NullPointerException|TypeError|ReferenceError|AttributeError|KeyError|NameError|undefined is not|Cannot read propert(y|ies) of (undefined|null)|nil pointer dereference|\bpanic:|segmentation (fault|violation)|ClassNotFoundException|NoSuchMethodError|NoMethodError|ModuleNotFoundError|ImportError|IndexError|ClassCastException|unhandled (exception|rejection)|undefined method|NoSuchFieldError|IllegalStateException|MissingMethodException|TypeLoadException|Could not load (file or )?assembly|Method not found`)},
	// PostgreSQL 42703/42P01 (UndefinedColumn "column x does not exist",
	// UndefinedTable "relation x does not exist"), MySQL 1054 ("Unknown
	// column"), SQLite ("no such column/table"), Rails
	// ActiveRecord::PendingMigrationError, Django ("unapplied migrations").
	{cat: CategoryBadDeployment, what: "code expecting a schema the database lacks", str: 0.5, roles: rDepLog,
		re: re(`UndefinedColumn|UndefinedTable|column \S+ does not exist|relation \S+ does not exist|unknown column|no such (column|table)|(missing|pending|skipped) migrations?|migrations? (skipped|not run|pending)`)},
	// Release notes' wording (Sphinx "New in version 2.14", "Changed in
	// version", Keep a Changelog "Added"), Flagger ("Canary failed!") and Argo
	// Rollouts canary analysis.
	{cat: CategoryBadDeployment, what: "failing code introduced by a release", str: 0.7, roles: rDepLog,
		re: re(`(new|added|introduced|changed) in (v|version |release |build )?\d[\w.]*|canary (pods )?(fail|errors?)`)},
	// Kubernetes Deployments and rollouts, Helm releases, container images,
	// for "no deploys".
	{cat: CategoryBadDeployment, what: "deploys", str: 0, roles: rDeploy, refStr: 0.55, negOnly: true,
		re: re(`\b(deploy(s|ed|ments?)?|releases?|rollouts?|new images?|code changes?)\b`),
		// A rollout that has not made progress is a rollout under way (the
		// deployment controller's ProgressDeadlineExceeded), not the absence
		// of one.
		unless: re(`progress|stalled|stuck|is blocked|mid-rollout`)},
	// Relative release times as GitHub Deployments, Argo CD ("Last Sync: 3
	// days ago") and Heroku releases show them.
	{cat: CategoryBadDeployment, what: "recent deploys", str: 0.45, roles: rDeploy, polar: true, refute: true,
		re: re(`(deploy\w*|release\w*|rollout)\b[^.;]*\b(\d+|two|three|four|five|six|several) (days|weeks) ago|(last|previous) (deploy|release)\w*[^.;]*\b(\d+|two|three|four|five|six|several) (days|weeks) ago|(last|previous) (deploy|release)\w* (was )?(yesterday|last week|on (mon|tue|wed|thu|fri|sat|sun)\w*)`)},

	// config_change
	// Kubernetes ConfigMaps, feature flags, RDS parameter groups, schema
	// migrations, for "no config changes".
	{cat: CategoryConfigChange, what: "configuration changes", str: 0, roles: rDeploy, refStr: 0.5, negOnly: true,
		re: re(`\b(config(uration)?|parameter|flag|setting|schema)( or \w+)? changes?\b|\bchanges\b`)},
	// Feature-flag evaluation fields in logs (LaunchDarkly, Unleash,
	// OpenFeature: flag=key:on) and failures that name a flag.
	{cat: CategoryConfigChange, what: "failures tied to a feature flag state", str: 0.6, roles: rDepLog,
		re: re(`flag[=: ]\S+[=:](on|true|enabled)|(fail|error)[^.]*\bflag\b|\bflag\b[^.]*\b(fail|error)`)},
}
