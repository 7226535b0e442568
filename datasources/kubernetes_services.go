package datasources

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clip"
)

// serviceReadings: each Service of the namespace against the pods it
// selects — a selector no pod matches, a targetPort no selected container
// exposes, a protocol the containers do not speak, no ready endpoint — and
// the addresses workloads are configured with that name no Service of the
// namespace (or a port it does not serve).
func serviceReadings(e PlanEntry, v *clusterView) Result {
	var rs []analyzer.Reading
	for _, s := range v.services {
		if r, ok := serviceReading(v, s); ok {
			rs = append(rs, r)
		}
	}
	rs = append(rs, envAddressReadings(v)...)
	if len(rs) == 0 {
		return Result{Note: fmt.Sprintf("no Services in namespace %s", v.namespace)}
	}
	troubleFirst(rs, func(r analyzer.Reading) bool { return r.Labels["issue"] != "" },
		func(r analyzer.Reading) bool {
			return v.service != "" && (r.Labels["service"] == v.service || strings.HasSuffix(r.Labels["workload"], "/"+v.service))
		})
	return Result{Readings: rs}
}

func serviceReading(v *clusterView, s service) (analyzer.Reading, bool) {
	if len(s.Spec.Selector) == 0 || s.Spec.Type == "ExternalName" {
		return analyzer.Reading{}, false // endpoints managed by hand, or a DNS alias
	}
	var selected []pod
	readyPods := 0
	for _, p := range v.pods {
		if labelsMatch(s.Spec.Selector, p.Metadata.Labels) && p.Metadata.DeletionTimestamp == nil && p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed" {
			selected = append(selected, p)
			if p.ready() {
				readyPods++
			}
		}
	}
	ready, notReady, known := v.endpointCounts(s.Metadata.Name)
	name := s.Metadata.Namespace + "/" + s.Metadata.Name
	var ports []string
	for _, p := range s.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%d→%s/%s", p.Port, p.target(), p.protocol()))
	}
	labels := map[string]string{"namespace": s.Metadata.Namespace, "service": s.Metadata.Name, "selector": mapString(s.Spec.Selector),
		"matching": strconv.Itoa(len(selected)), "ready_pods": strconv.Itoa(readyPods), "ports": strings.Join(ports, ",")}
	line := fmt.Sprintf("Service %s (selector %s, ports %s): ", name, labels["selector"], labels["ports"])
	issue, detail := "", ""
	switch {
	case len(selected) == 0:
		issue, detail = "selector", "the selector matches no pod of the namespace"
		if near := nearestLabels(v.pods, s.Spec.Selector); near != "" {
			detail += " (pods nearby carry " + near + ")"
		}
	default:
		issue, detail = portIssue(s, selected)
	}
	if issue == "" && known && ready == 0 {
		issue, detail = "no_endpoints", fmt.Sprintf("no ready endpoint (%d not ready) behind %d selected pod(s)", notReady, len(selected))
	}
	labels["issue"], labels["detail"] = issue, detail
	if known {
		labels["ready_endpoints"], labels["notready_endpoints"] = strconv.Itoa(ready), strconv.Itoa(notReady)
		line += fmt.Sprintf("%d ready endpoint(s), %d not ready; ", ready, notReady)
	}
	line += fmt.Sprintf("selects %d pod(s), %d ready", len(selected), readyPods)
	if detail != "" {
		line += "; " + detail
	}
	value := float64(readyPods)
	if known {
		value = float64(ready)
	}
	return reading(analyzer.SignalServiceRouting, value, s.Metadata.CreationTimestamp.Time, line, labels), true
}

// portIssue checks each Service port against the selected pods' containers:
// a targetPort (number or name) none of them declares, or a protocol the
// declared port does not speak. Containers that declare no ports say
// nothing either way.
func portIssue(s service, selected []pod) (string, string) {
	for _, sp := range s.Spec.Ports {
		target := sp.target()
		declared, exposed, protocolOK := false, false, false
		var seen []string
		for _, p := range selected {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					declared = true
					seen = append(seen, strconv.Itoa(cp.ContainerPort)+"/"+cp.protocol())
					if strconv.Itoa(cp.ContainerPort) == target || (cp.Name != "" && cp.Name == target) {
						exposed = true
						protocolOK = protocolOK || cp.protocol() == sp.protocol()
					}
				}
			}
		}
		slices.Sort(seen)
		seen = slices.Compact(seen)
		switch {
		case !declared:
		case !exposed:
			return "target_port", fmt.Sprintf("targetPort %s is not a port of the selected containers (they expose %s)", target, strings.Join(seen, ","))
		case !protocolOK:
			return "protocol", fmt.Sprintf("port %d forwards %s to %s, but the containers expose it as %s", sp.Port, sp.protocol(), target, strings.Join(seen, ","))
		}
	}
	return "", ""
}

// endpointCounts counts a Service's ready and not-ready endpoints from its
// EndpointSlices, else its Endpoints; known is false when neither was read.
func (v *clusterView) endpointCounts(svc string) (ready, notReady int, known bool) {
	for _, es := range v.slices {
		if es.Metadata.Labels["kubernetes.io/service-name"] != svc {
			continue
		}
		known = true
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	if known {
		return ready, notReady, true
	}
	for _, ep := range v.endpoints {
		if ep.Metadata.Name != svc {
			continue
		}
		known = true
		for _, ss := range ep.Subsets {
			ready += len(ss.Addresses)
			notReady += len(ss.NotReadyAddresses)
		}
	}
	// A Service with no EndpointSlice and no Endpoints object at all is one
	// the lists do not cover (a partial snapshot, a list cut short): its
	// endpoints are unknown, not none.
	return ready, notReady, known
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, want := range selector {
		if labels[k] != want {
			return false
		}
	}
	return true
}

// nearestLabels names, for a selector no pod matches, the values pods carry
// for its keys, so a reader sees the typo: "app=cart".
func nearestLabels(pods []pod, selector map[string]string) string {
	var out []string
	for k := range selector {
		for _, p := range pods {
			if v, ok := p.Metadata.Labels[k]; ok && !slices.Contains(out, k+"="+v) {
				out = append(out, k+"="+v)
			}
		}
	}
	sort.Strings(out)
	if len(out) > 4 {
		out = out[:4]
	}
	return strings.Join(out, ", ")
}

// hostSchemes are the URL schemes whose host is a server to connect to (an
// s3:// or gs:// URL names a bucket, a file:// URL a path).
var hostSchemes = map[string]bool{"http": true, "https": true, "grpc": true, "grpcs": true, "h2c": true, "ws": true, "wss": true,
	"tcp": true, "udp": true, "redis": true, "rediss": true, "postgres": true, "postgresql": true, "mysql": true, "mariadb": true,
	"mongodb": true, "amqp": true, "amqps": true, "nats": true, "kafka": true, "memcached": true, "ldap": true, "ldaps": true,
	"smtp": true, "cassandra": true, "clickhouse": true, "elasticsearch": true, "jdbc": true}

// addressEnvSuffixes are the endings of environment variable names that
// hold an address by convention.
var addressEnvSuffixes = []string{"_HOST", "_HOSTNAME", "_ADDR", "_ADDRESS", "_URL", "_URI", "_ENDPOINT", "_SERVER", "_SERVICE", "_DSN", "_BROKERS", "_TARGET"}

// envAddressReadings checks the addresses each workload's containers are
// configured with (environment values that are URLs or host:port, or whose
// name says they hold a host) against the namespace's Services: a name that
// is the namespace's own (a bare name, name.namespace, or
// name.namespace.svc[.cluster.local]) must be a Service, and a port it names
// one the Service serves. Other names (outside the cluster, other
// namespaces) are not judged.
func envAddressReadings(v *clusterView) []analyzer.Reading {
	services := map[string]service{}
	for _, s := range v.services {
		services[s.Metadata.Name] = s
	}
	seen := map[string]bool{}
	var rs []analyzer.Reading
	for _, p := range v.pods {
		if p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue // a finished pod calls nothing any more
		}
		wl := v.workloadOf(p.Metadata, "Pod")
		for _, c := range p.Spec.Containers {
			for _, env := range c.Env {
				host, port, ok := clusterAddress(env.Name, env.Value, v.namespace)
				if !ok || seen[wl+c.Name+env.Name] {
					continue
				}
				seen[wl+c.Name+env.Name] = true
				issue, detail := "", ""
				if s, exists := services[host]; !exists {
					issue, detail = "no_service", fmt.Sprintf("no Service %s in namespace %s", host, v.namespace)
				} else if port != "" && !servesPort(s, port) {
					issue, detail = "port", fmt.Sprintf("Service %s serves %s, not %s", host, servicePorts(s), port)
				}
				if issue == "" {
					continue
				}
				line := fmt.Sprintf("%s in %s/%s container %s: %s=%s — %s", wl, p.Metadata.Namespace, p.Metadata.Name, c.Name, env.Name, clip.To(env.Value, 160), detail)
				rs = append(rs, reading(analyzer.SignalEnvAddress, 0, p.Metadata.CreationTimestamp.Time, line, map[string]string{
					"namespace": p.Metadata.Namespace, "workload": wl, "pod": p.Metadata.Name, "container": c.Name, "env": env.Name,
					"address": env.Value, "host": host, "port": port, "issue": issue, "detail": detail,
				}))
			}
		}
	}
	return rs
}

// clusterAddress reads an environment value as an address of a Service of
// namespace: the Service's name and the port it names, if any.
func clusterAddress(name, value, namespace string) (string, string, bool) {
	value = strings.TrimSpace(value)
	if value == "" || strings.ContainsAny(value, " \t,") {
		return "", "", false
	}
	host, port := "", ""
	if strings.Contains(value, "://") {
		u, err := url.Parse(value)
		if err != nil || u.Hostname() == "" || !hostSchemes[strings.ToLower(u.Scheme)] {
			return "", "", false
		}
		host, port = u.Hostname(), u.Port()
	} else {
		upper := strings.ToUpper(name)
		named := slices.ContainsFunc(addressEnvSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) })
		if h, p, err := net.SplitHostPort(value); err == nil {
			host, port = h, p
		} else if named {
			host = value
		} else {
			return "", "", false
		}
	}
	if net.ParseIP(host) != nil || host == "localhost" {
		return "", "", false
	}
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(host), "."), ".")
	switch {
	case len(labels) == 1:
	case len(labels) == 2 && labels[1] == namespace:
	case len(labels) == 3 && labels[1] == namespace && labels[2] == "svc":
	case len(labels) == 5 && labels[1] == namespace && labels[2] == "svc" && labels[3] == "cluster" && labels[4] == "local":
	default:
		return "", "", false
	}
	if !namespaceRe.MatchString(labels[0]) {
		return "", "", false
	}
	if _, err := strconv.Atoi(port); port != "" && err != nil {
		return "", "", false
	}
	return labels[0], port, true
}

func servesPort(s service, port string) bool {
	for _, p := range s.Spec.Ports {
		if strconv.Itoa(p.Port) == port {
			return true
		}
	}
	return false
}

func servicePorts(s service) string {
	var out []string
	for _, p := range s.Spec.Ports {
		out = append(out, strconv.Itoa(p.Port))
	}
	return strings.Join(out, ",")
}
