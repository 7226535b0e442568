package analyzer

import (
	"regexp"
	"strconv"
	"strings"
)

// Readings as tools print them: before -> after series, percentages, a/b
// ratios against a limit. metricKW names the metrics a percentage belongs to:
// Redis keyspace_hits and Memcached get_hits, node_exporter and cAdvisor CPU,
// memory (RSS, working set) and filesystem use (df "Use%", inodes, /dev/),
// ping/mtr packet loss, HTTP 4xx/5xx and error ratios, latency quantiles
// (p99), LaunchDarkly percentage rollouts. loadAvgRe is uptime/top ("load
// average:") and node_exporter's node_load1/5/15, hikariRe HikariCP's pool stats ("active=10, idle=0,
// waiting=23"), maxConnRe/curConnRe PostgreSQL max_connections and
// pg_stat_database numbackends, MySQL Threads_connected, PgBouncer clients;
// produceRe/consumeRe RabbitMQ's management rates (publish, deliver/ack) and
// Kafka's incoming byte rate; growthRe a memory series (JVM heap, RSS,
// Kubernetes working set, Windows "Private Bytes") rising; dfRowRe a df row
// at 95-100%.
var (
	arrowRe   = regexp.MustCompile(`->|→|=>`)
	fromToRe  = regexp.MustCompile(`(?i)\bfrom\s+(\d[\d,]*(?:\.\d+)?)\s*([kmg]?)\S*\s+to\s+(\d[\d,]*(?:\.\d+)?)\s*([kmg]?)`)
	numRe     = regexp.MustCompile(`(?i)\b(\d[\d,]*(?:\.\d+)?)\s*([km](?:\b|/)|%)?`)
	timeRe    = regexp.MustCompile(`\b\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\b|\d{4}-\d{2}-\d{2}[T ]?`)
	parenRe   = regexp.MustCompile(`\([^)]*\)`)
	pctRe     = regexp.MustCompile(`(\d{1,3}(?:\.\d+)?)\s*%`)
	metricKW  = regexp.MustCompile(`(?i)(hit(s)?[ _]?(ratio|rate)|get_hits|cpu\w*|processor|memory|\bmem\b|heap|\brss\b|working set|\bgc\b|garbage|disk|use%|filesystem|volume|inodes|/dev/|packet loss|\bloss\b|error\w*|5xx|4xx|success|fail\w*|timeouts?|rollout|percentage|threshold|ratio|latency|p\d\d)`)
	ratioRe   = regexp.MustCompile(`(?i)(\d[\d,]*(?:\.\d+)?)\s*([a-z]+)?\s*(?:/|\bof\b)\s*(?:(max\w*|limit|provisioned|capacity)\s*[=:]?\s*)?(\d[\d,]*(?:\.\d+)?)`)
	loadAvgRe = regexp.MustCompile(`(?i)(?:load average:?|\b(?:node_)?load(?:1|5|15)\b\s*[=:]?)\s*(\d+(?:\.\d+)?)`)
	// topNodeRe is a row of `kubectl top nodes` (metrics-server): name,
	// CPU in millicores and percent of allocatable, memory and percent.
	topNodeRe  = regexp.MustCompile(`^\s*([a-z0-9][a-z0-9.-]*)\s+\d+m\s+(\d{1,3})%\s+\d+(?:Ki|Mi|Gi)\s+\d{1,3}%\s*$`)
	vcpuRe     = regexp.MustCompile(`(?i)(\d+)\s*v?(cpus?|cores)\b`)
	hikariRe   = regexp.MustCompile(`(?i)active=(\d+)[^\n]*?idle=0\b[^\n]*?(waiting|pending)=([1-9]\d*)`)
	maxConnRe  = regexp.MustCompile(`(?i)max_connections\s*[=:]?\s*(\d+)`)
	curConnRe  = regexp.MustCompile(`(?i)(numbackends|threads_connected|connections|backends|clients)\s*[=:]?\s*(\d+)`)
	produceRe  = regexp.MustCompile(`(?i)(produce|publish|incoming|arrival|enqueue|ingest)\w*\s+rate`)
	consumeRe  = regexp.MustCompile(`(?i)(consume|deliver|ack|processing|dequeue)\w*(/\w+)?\s+rate`)
	growthRe   = regexp.MustCompile(`(?i)(heap|memory|rss|working set|private bytes)[^.]*\b(climb|grow|rising|increas|leak)`)
	gcCtxRe    = regexp.MustCompile(`(?i)\bgc\b|garbage|collection`)
	memUnitRe  = regexp.MustCompile(`(?i)^(gi|gib|gb|mi|mib|mb|g|m)$`)
	dfRowRe    = regexp.MustCompile(`\b(9[5-9]|100)%\s+/`)
	connWordRe = regexp.MustCompile(`(?i)connection|backend|client|threads_connected|\bpool\b|sessions`)
)

func parseNum(s, suffix string) float64 {
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		return 0
	}
	switch strings.ToLower(strings.TrimSuffix(suffix, "/")) {
	case "k":
		v *= 1e3
	case "m":
		v *= 1e6
	case "g":
		v *= 1e9
	}
	return v
}

// series extracts a before→after pair from a clause ("97% -> 0%", "from 0.9 GB to 3.0 GB").
func series(clause string) (a, b float64, ok bool) {
	if m := fromToRe.FindStringSubmatch(clause); m != nil {
		return parseNum(m[1], m[2]), parseNum(m[3], m[4]), true
	}
	loc := arrowRe.FindAllStringIndex(clause, -1)
	if len(loc) == 0 {
		return 0, 0, false
	}
	left := clean(clause[:loc[0][0]])
	right := clean(clause[loc[len(loc)-1][1]:])
	ln := numRe.FindAllStringSubmatch(left, -1)
	rn := numRe.FindAllStringSubmatch(right, -1)
	if len(ln) == 0 || len(rn) == 0 {
		return 0, 0, false
	}
	l, r := ln[len(ln)-1], rn[0]
	return parseNum(l[1], l[2]), parseNum(r[1], r[2]), true
}

func clean(s string) string {
	return timeRe.ReplaceAllString(parenRe.ReplaceAllString(s, " "), " ")
}

type seriesRule struct {
	kw    *regexp.Regexp
	cat   string
	what  string
	roles []string
	str   float64
	// up: the signal is an increase (after > factor*before); else a drop of more than factor points.
	up     bool
	factor float64
}

// seriesRules name the metric a before -> after series belongs to: Redis INFO
// (keyspace_hits/keyspace_misses, evicted_keys) and Memcached stats
// (get_hits, get_misses, evictions); Kafka consumer lag, RabbitMQ
// messages_ready/unacked, SQS ApproximateAgeOfOldestMessage; cgroup CFS
// throttling (nr_throttled, container_cpu_cfs_throttled_periods_total);
// request throttling (AWS ThrottledRequests, HTTP 429, rejected); database
// lock waits (pg_locks, innodb_row_lock_waits); TCP retransmits and drops
// (node_netstat_Tcp_RetransSegs, interface drops); DNS RCODEs (CoreDNS
// coredns_dns_responses_total{rcode="SERVFAIL"}); table and collection sizes
// (pg_class reltuples, MongoDB collStats count); memory (JVM heap, RSS,
// container_memory_working_set_bytes).
var seriesRules = []seriesRule{
	{re(`hit(s)?[ _]?(ratio|rate)|get_hits`), CategoryCacheFailure, "the cache hit ratio collapsing", rMetDB, 0.85, false, 15},
	{re(`\bmiss(es)?\b|get_misses|keyspace_misses`), CategoryCacheFailure, "cache misses surging", rMet, 0.6, true, 3},
	{re(`evict`), CategoryCacheFailure, "cache evictions surging", rMet, 0.5, true, 3},
	{re(`\blag\b|backlog|queue|messages|depth|oldest|unacked|ready`), CategoryQueueBacklog, "a queue or consumer lag growing", rMet, 0.72, true, 2},
	{re(`(cpu|cfs)\w*[ _]throttl|throttled[ _]periods|nr_throttled`), CategoryCPUSaturation, "CPU throttling rising", rInfraM, 0.7, true, 2},
	{re(`throttl|429|rejected`), CategoryRateLimited, "throttled requests rising", rMet, 0.75, true, 2},
	{re(`lock`), CategoryDBLockContention, "lock waits rising", rMetDB, 0.75, true, 3},
	{re(`retransmi|packet loss|\bdrops?\b|dropped`), CategoryNetworkPartition, "packet loss or retransmits rising", []string{RoleMetrics, RoleNetwork}, 0.6, true, 3},
	{re(`servfail|nxdomain|dns (errors|failures)`), CategoryDNSFailure, "DNS failures rising", []string{RoleMetrics, RoleNetwork}, 0.8, true, 3},
	{re(`row count|\brows\b|table size|documents|collection size`), CategoryDBSlowQueries, "a table growing far beyond its previous size", rDBOnly, 0.45, true, 2},
	{re(`heap|memory|\brss\b|working set`), CategoryMemoryExhaustion, "memory use climbing", rMet, 0.55, true, 2},
}

func numericHits(c *corpus) []hit {
	var out []hit
	for li := range c.lines {
		l := &c.lines[li]
		if l.recorded {
			continue
		}
		if l.src == "field" {
			out = append(out, fieldHits(l)...)
			continue
		}
		w := sourceWeight(l)
		for _, sp := range l.spans {
			clause := l.text[sp.s:sp.e]
			cite := l.cite(sp.s, sp.e)
			if a, b, ok := series(clause); ok {
				for _, sr := range seriesRules {
					if !sr.kw.MatchString(clause) {
						continue
					}
					if (sr.up && b > sr.factor*a && b > 0) || (!sr.up && a-b > sr.factor) {
						out = append(out, hit{cat: sr.cat, stance: StanceSupports, str: sr.str * w, what: sr.what, roles: sr.roles, citation: cite})
					}
					break
				}
			}
			readings := append(percentHits(l, sp, cite, w), ratioHits(l, clause, cite, w)...)
			if l.speculative(sp.s) {
				// A reading offered to back a guess ("node CPU is 30% so this
				// can't be CPU") is as uncertain as the guess.
				for i := range readings {
					readings[i].str *= speculationWeight
				}
			}
			out = append(out, readings...)
		}
		out = append(out, lineNumericHits(c, li, w)...)
	}
	return out
}

// percentHits attributes each percentage to the nearest metric keyword before it.
func percentHits(l *line, sp span, cite string, w float64) []hit {
	var out []hit
	clause := l.text[sp.s:sp.e]
	_, _, hasArrow := series(clause)
	for _, m := range pctRe.FindAllStringSubmatchIndex(clause, -1) {
		p, _ := strconv.ParseFloat(clause[m[2]:m[3]], 64)
		abs := sp.s + m[0]
		// The metric a percentage belongs to is named before it in its clause
		// ("CPU 97%") or, failing that, right after it ("100% loss").
		var kw string
		if kws := metricKW.FindAllStringIndex(l.text[sp.s:abs], -1); len(kws) > 0 {
			kw = strings.ToLower(l.text[sp.s+kws[len(kws)-1][0] : sp.s+kws[len(kws)-1][1]])
		} else if after := l.text[sp.s+m[1] : min(sp.e, sp.s+m[1]+12)]; metricKW.MatchString(after) {
			kw = strings.ToLower(metricKW.FindString(after))
		} else {
			continue
		}
		if hasArrow && !strings.Contains(kw, "hit") {
			// Series are handled by seriesRules, except that the last value of a CPU or
			// disk series is still a reading.
			if !strings.HasPrefix(kw, "cpu") && !strings.Contains(kw, "disk") {
				continue
			}
			if a := arrowRe.FindStringIndex(clause); a == nil || m[0] < a[0] {
				continue
			}
		}
		switch {
		case strings.Contains(kw, "hit") || kw == "get_hits":
			if !hasArrow && p >= 85 {
				out = append(out, hit{cat: CategoryCacheFailure, stance: StanceRefutes, str: 0.35, what: "a cache hit ratio problem (ratio is high)", roles: rMet, citation: cite})
			}
		case strings.HasPrefix(kw, "cpu") || kw == "processor":
			ctx := strings.ToLower(l.text)
			switch {
			case p >= 92 && gcCtxRe.MatchString(ctx):
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceSupports, str: 0.5 * w, what: "CPU burned by garbage collection", roles: rMet, citation: cite})
			case p >= 92 && dbCtx.MatchString(ctx):
				// Database CPU is a consequence of whatever drives the queries.
			case p >= 97:
				out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceSupports, str: 0.62 * w, what: "CPU pinned near 100%", roles: rInfraM, citation: cite})
			case p >= 92:
				out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceSupports, str: 0.55 * w, what: "CPU above 90%", roles: rInfraM, citation: cite})
			case p < 60 && !hasArrow:
				out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceRefutes, str: 0.3, what: "CPU saturation (CPU is moderate)", roles: rInfraM, citation: cite})
			}
		case kw == "memory" || kw == "mem" || kw == "heap" || kw == "rss" || kw == "working set":
			if p >= 95 {
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceSupports, str: 0.5 * w, what: "memory near its limit", roles: rInfraM, citation: cite})
			} else if p < 70 && !hasArrow {
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceRefutes, str: 0.3, what: "memory exhaustion (memory use is moderate)", roles: rInfraM, citation: cite})
			}
		case kw == "gc" || kw == "garbage":
			if p >= 30 {
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceSupports, str: 0.6 * w, what: "a large share of time spent in garbage collection", roles: rMet, citation: cite})
			}
		case strings.Contains(kw, "disk") || kw == "use%" || kw == "filesystem" || kw == "volume" || kw == "inodes" || kw == "/dev/":
			if p >= 95 {
				out = append(out, hit{cat: CategoryDiskFull, stance: StanceSupports, str: 0.8 * w, what: "a volume at or near 100% used", roles: rInfraM, citation: cite})
			}
		case strings.Contains(kw, "loss"):
			if p >= 5 {
				out = append(out, hit{cat: CategoryNetworkPartition, stance: StanceSupports, str: 0.8 * w, what: "heavy packet loss", roles: []string{RoleNetwork, RoleMetrics}, citation: cite})
			}
		}
	}
	// df-style rows: "/dev/sdb 500G 500G 0 100% /var".
	if m := dfRowRe.FindStringIndex(clause); m != nil && !strings.Contains(strings.ToLower(clause), "cpu") {
		out = append(out, hit{cat: CategoryDiskFull, stance: StanceSupports, str: 0.8 * w, what: "a filesystem at or near 100% used", roles: rInfraM, citation: cite})
	}
	return out
}

func ratioHits(l *line, clause, cite string, w float64) []hit {
	var out []hit
	lc := strings.ToLower(clause)
	for _, m := range ratioRe.FindAllStringSubmatch(clause, -1) {
		a, b := parseNum(m[1], ""), parseNum(m[4], "")
		if b <= 0 || a > b*1.05 {
			continue
		}
		r := a / b
		unit := strings.ToLower(m[2])
		qual := strings.ToLower(m[3])
		switch {
		case strings.Contains(lc, "core") || strings.Contains(lc, "cpu"):
			if r >= 0.95 && !gcCtxRe.MatchString(lc) {
				out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceSupports, str: 0.72 * w, what: "CPU usage at its limit", roles: rInfraM, citation: cite})
			}
		case strings.Contains(lc, "replica") || strings.Contains(lc, "hpa"):
			if r >= 1 || (qual != "" && r >= 0.99) {
				out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceSupports, str: 0.5 * w, what: "the autoscaler at its maximum", roles: rInfraM, citation: cite})
			}
		case memUnitRe.MatchString(unit) || lowerHasAny(lc, "memory", "heap", "working set"):
			if dbCtx.MatchString(lc) || cacheKW.MatchString(lc) {
				continue
			}
			if r >= 0.95 {
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceSupports, str: 0.6 * w, what: "memory at its limit", roles: rInfraM, citation: cite})
			} else if r < 0.7 {
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceRefutes, str: 0.3, what: "memory exhaustion (memory use well under the limit)", roles: rInfraM, citation: cite})
			}
		case connWordRe.MatchString(lc) && !lowerHasAny(lc, "pods", "instances", "nodes", "ready"):
			if r >= 0.95 {
				out = append(out, hit{cat: CategoryDBConnectionExhaustion, stance: StanceSupports, str: 0.75 * w, what: "connections at the configured maximum", roles: []string{RoleDatabase, RoleMetrics}, citation: cite})
			} else if r <= 0.7 {
				out = append(out, hit{cat: CategoryDBConnectionExhaustion, stance: StanceRefutes, str: 0.35, what: "connection exhaustion (connections far below the limit)", roles: []string{RoleDatabase, RoleMetrics}, citation: cite})
			}
		case lowerHasAny(lc, "capacity", "provisioned", "quota", "throughput"):
			if r >= 0.98 {
				out = append(out, hit{cat: CategoryRateLimited, stance: StanceSupports, str: 0.6 * w, what: "consumption at the provisioned quota", roles: rMet, citation: cite})
			}
		case lowerHasAny(lc, "disk", "volume", "storage"):
			if r >= 0.95 {
				out = append(out, hit{cat: CategoryDiskFull, stance: StanceSupports, str: 0.7 * w, what: "storage at capacity", roles: rInfraM, citation: cite})
			}
		}
	}
	return out
}

// lineNumericHits covers readings that span clauses of one line or entry.
func lineNumericHits(c *corpus, li int, w float64) []hit {
	l := &c.lines[li]
	var out []hit
	cite := l.cite(0, len(l.text))
	if m := loadAvgRe.FindStringSubmatch(l.text); m != nil {
		load := parseNum(m[1], "")
		if v := vcpuRe.FindStringSubmatch(l.text); v != nil {
			if n := parseNum(v[1], ""); n > 0 && load/n >= 1.5 {
				out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceSupports, str: 0.62 * w, what: "load average far above the CPU count", roles: rInfraM, citation: cite})
			}
		}
	}
	if m := topNodeRe.FindStringSubmatch(l.text); m != nil {
		if pct := parseNum(m[2], ""); pct >= 90 {
			out = append(out, hit{cat: CategoryCPUSaturation, stance: StanceSupports, str: 0.7 * w, what: "a node's CPU at its allocatable capacity", roles: rInfraM, citation: cite})
		}
	}
	if hikariRe.MatchString(l.text) {
		out = append(out, hit{cat: CategoryDBConnectionExhaustion, stance: StanceSupports, str: 0.8 * w, what: "a connection pool with every connection busy and requests waiting", roles: []string{RoleDatabase, RoleMetrics}, citation: cite})
	}
	if m := maxConnRe.FindStringSubmatch(l.text); m != nil {
		if cur := curConnRe.FindStringSubmatch(l.text); cur != nil {
			mx, n := parseNum(m[1], ""), parseNum(cur[2], "")
			if mx > 0 && n/mx >= 0.95 {
				out = append(out, hit{cat: CategoryDBConnectionExhaustion, stance: StanceSupports, str: 0.75 * w, what: "database connections at max_connections", roles: []string{RoleDatabase, RoleMetrics}, citation: cite})
			}
		}
	}
	if growthRe.MatchString(l.text) && !cacheKW.MatchString(l.lower) && !dbCtx.MatchString(l.lower) {
		out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceSupports, str: 0.55 * w, what: "memory use climbing", roles: rMet, citation: cite})
	}
	// "memory (MB): 09:00 620 | 09:05 1100 | 09:10 1690" style series.
	if strings.Count(l.text, "|") >= 2 && lowerHasAny(l.lower, "memory", "heap", "rss", "working set") && !cacheKW.MatchString(l.lower) {
		nums := numRe.FindAllStringSubmatch(clean(strings.SplitN(l.text, "|", 2)[0]+"|"+strings.SplitN(l.text, "|", 2)[1]), -1)
		if len(nums) >= 3 {
			first, peak := parseNum(nums[0][1], ""), 0.0
			for _, n := range nums {
				peak = max(peak, parseNum(n[1], ""))
			}
			if first > 0 && peak >= 2*first {
				out = append(out, hit{cat: CategoryMemoryExhaustion, stance: StanceSupports, str: 0.6 * w, what: "memory use climbing steadily", roles: rMet, citation: cite})
			}
		}
	}
	// A produce rate far above a steady consume rate in the same entry.
	if l.entry >= 0 && produceRe.MatchString(l.text) {
		for _, oi := range c.entries[l.entry] {
			if consumeRe.MatchString(c.lines[oi].text) && oi != li {
				out = append(out, hit{cat: CategoryQueueBacklog, stance: StanceSupports, str: 0.6, what: "messages produced faster than they are consumed", roles: rMet, citation: cite})
				break
			}
		}
		if consumeRe.MatchString(l.text) {
			out = append(out, hit{cat: CategoryQueueBacklog, stance: StanceSupports, str: 0.6, what: "messages produced faster than they are consumed", roles: rMet, citation: cite})
		}
	}
	return out
}

// metaNumKeys are alert label and annotation names that carry a backlog size
// (kafka-lag-exporter, RabbitMQ and SQS exporters: lag, backlog, queue, ready,
// depth).
var metaNumKeys = regexp.MustCompile(`(?i)lag|backlog|queue|ready|depth`)

// fieldHits reads structured metadata values that carry a signal by name.
func fieldHits(l *line) []hit {
	var out []hit
	if !strings.HasPrefix(l.ref, "metadata.") {
		return nil
	}
	k := strings.TrimPrefix(l.ref, "metadata.")
	v := strings.TrimSpace(l.text[len(k)+1:])
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil
	}
	if metaNumKeys.MatchString(k) && n >= 1000 {
		out = append(out, hit{cat: CategoryQueueBacklog, stance: StanceSupports, str: 0.45, what: "a large backlog reported by the alert", roles: rMet, citation: l.ref})
	}
	return out
}
