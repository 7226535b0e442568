package analyzer

import (
	"net"
	"regexp"
	"strings"
)

// A failing line names the peer it failed against in the words of the client
// that failed: libpq and pgx ("connection to server at \"db\"", "host=db"),
// urllib3 ("HTTPSConnectionPool(host='api.example.com', port=443)"),
// Go's net package ("dial tcp db:5432", "lookup db"), go-redis and logfmt
// loggers (addr=cache:6379), and any client that logs the URL it called.
var (
	peerRes = []*regexp.Regexp{
		regexp.MustCompile(`connection to server at "([A-Za-z0-9][\w.-]*)"`),
		regexp.MustCompile("\\bhost=[`\"']?([A-Za-z0-9][\\w.-]*)"),
		regexp.MustCompile(`\baddr(?:ess)?="?([A-Za-z0-9][\w.-]*):\d+`),
		regexp.MustCompile(`\bdial tcp ([A-Za-z][\w.-]*):\d+`),
		regexp.MustCompile(`\blookup ([A-Za-z][\w.-]*)`),
		regexp.MustCompile(`\b(?:https?|grpcs?|redis|rediss|postgres(?:ql)?|mysql|amqps?)://(?:[^@/\s]*@)?([A-Za-z0-9][\w.-]*)`),
	}
)

// peerCulprit names the dependency a failing line of category cat blames:
// the database, cache or service its client failed against, by the name the
// line gives it. In-cluster names (Kubernetes Service DNS names,
// <service>.<namespace>.svc.cluster.local, or bare names) are Services; names
// outside are dependencies. Nil when the line names no peer by name, or the
// category is not about a dependency.
func peerCulprit(cat, text string) *Culprit {
	var kind string
	switch cat {
	case CategoryDBConnectionExhaustion, CategoryDBSlowQueries, CategoryDBLockContention:
		kind = KindDatabase
	case CategoryCacheFailure:
		kind = KindService
	case CategoryUpstreamDependency:
	default:
		return nil
	}
	for _, re := range peerRes {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		host := strings.TrimRight(strings.ToLower(m[1]), ".")
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" || net.ParseIP(host) != nil || host == "localhost" {
			continue
		}
		name, inCluster := host, !strings.Contains(host, ".")
		if i := strings.Index(host+".", ".svc."); i > 0 {
			name, inCluster = host[:i], true
		}
		if inCluster {
			// <service>.<namespace> as a Service's DNS name has it.
			name, _, _ = strings.Cut(name, ".")
		}
		k := kind
		if k == "" {
			k = KindDependency
			if inCluster {
				k = KindService
			}
		}
		return &Culprit{Kind: k, Name: name}
	}
	return nil
}
