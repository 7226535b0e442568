package opensre

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/replay"
)

type (
	// podLogsFile is eks_pod_logs.json: one pod's log as `kubectl logs
	// --timestamps` prints it.
	podLogsFile struct {
		PodName   string `json:"pod_name"`
		Namespace string `json:"namespace"`
		Logs      string `json:"logs"`
	}
	// datadogLogsFile is datadog_logs.json: lines as Datadog's log search
	// returns them.
	datadogLogsFile struct {
		Logs []struct {
			Timestamp string   `json:"timestamp"`
			Message   string   `json:"message"`
			Host      string   `json:"host"`
			Tags      []string `json:"tags"`
		} `json:"logs"`
	}
)

// The labels the log shippers give each kind of line (docs/opensre.md):
// Promtail's kubernetes-pods job for container output, Promtail's journal
// job for the kubelet, and lambda-promtail behind a Promtail push API for
// the CloudWatch Logs groups EKS's control plane and RDS's EventBridge rule
// write to. service_name is the label Loki 3 derives at ingestion.
const (
	lokiUnknownService = "unknown_service"
	journalJob         = "systemd-journal"
)

func cloudWatchLabels(group string) map[string]string {
	return map[string]string{"log_group": group, "log_type": "cloudwatch", "promtail": "lambda-promtail", "service_name": lokiUnknownService}
}

// podStreamLabels are the labels of a pod container's stream.
func (k *cluster) podStreamLabels(pod, namespace string) map[string]string {
	ls := map[string]string{"pod": pod}
	p, known := k.pods[pod]
	if known {
		namespace = p.Namespace
		if len(p.Containers) == 1 {
			ls["container"] = p.Containers[0].Name
		}
		if scheduled(p) {
			ls["node_name"] = p.NodeName
		}
	}
	if namespace != "" {
		ls["namespace"] = namespace
	}
	if _, dep, _, ok := k.owner(pod); ok {
		ls["app"] = dep
		ls["service_name"] = dep
		if namespace != "" {
			ls["job"] = namespace + "/" + dep
		}
	}
	return ls
}

// streams gathers the case's log lines into the streams a Loki fed by those
// shippers holds. A pod whose own log is given (eks_pod_logs) keeps it for
// the span it covers; Datadog's copies of that pod's lines in the span are
// not added twice.
func (k *cluster) streams() ([]replay.LogStream, error) {
	type line struct {
		labels map[string]string
		at     time.Time
		text   string
	}
	var lines []line
	type span struct{ from, to time.Time }
	raw := map[string]span{}
	if pl := k.ev.podLogs; pl != nil {
		labels := k.podStreamLabels(pl.PodName, pl.Namespace)
		for _, l := range strings.Split(pl.Logs, "\n") {
			ts, text, ok := strings.Cut(l, " ")
			at, err := time.Parse(time.RFC3339, ts)
			if !ok || err != nil {
				// `kubectl logs` annotations ("[container terminated …]")
				// are not container output.
				continue
			}
			at = at.UTC()
			lines = append(lines, line{labels, at, text})
			sp, seen := raw[pl.PodName]
			if !seen || at.Before(sp.from) {
				sp.from = at
			}
			if at.After(sp.to) {
				sp.to = at
			}
			raw[pl.PodName] = sp
		}
	}
	if dd := k.ev.datadog; dd != nil {
		for i, l := range dd.Logs {
			at, err := parseTime(l.Timestamp)
			if err != nil {
				return nil, fmt.Errorf("datadog_logs %d: %w", i, err)
			}
			tags := map[string]string{}
			for _, t := range l.Tags {
				if k, v, ok := strings.Cut(t, ":"); ok {
					tags[k] = v
				}
			}
			labels, pod, err := k.datadogStream(l.Host, l.Message, tags)
			if err != nil {
				return nil, fmt.Errorf("datadog_logs %d: %w", i, err)
			}
			if sp, ok := raw[pod]; ok && pod != "" && !at.Before(sp.from) && !at.After(sp.to) {
				continue
			}
			lines = append(lines, line{labels, at, l.Message})
		}
	}
	var out []replay.LogStream
	index := map[string]int{}
	for _, l := range lines {
		key := fmt.Sprint(l.labels) // fmt prints a map in key order
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, replay.LogStream{Labels: l.labels})
		}
		out[i].Lines = append(out[i].Lines, replay.LogLine{At: l.at, Text: l.text})
	}
	for _, s := range out {
		sort.SliceStable(s.Lines, func(i, j int) bool { return s.Lines[i].At.Before(s.Lines[j].At) })
	}
	return out, nil
}

// datadogStream names the stream a Datadog line came from: the control
// plane's CloudWatch group for the control-plane host, a node's journal for
// its kubelet's lines, else the pod the line's tags or host name. It returns
// the pod, if any, too.
func (k *cluster) datadogStream(host, message string, tags map[string]string) (map[string]string, string, error) {
	if strings.HasSuffix(host, "-control-plane") {
		return cloudWatchLabels("/aws/eks/" + k.meta.str("cluster_name") + "/cluster"), "", nil
	}
	if strings.HasPrefix(message, "[kubelet]") && host != "" {
		if _, isPod := k.pods[host]; !isPod {
			return map[string]string{"job": journalJob, "unit": "kubelet.service", "hostname": host, "service_name": journalJob}, "", nil
		}
	}
	pod := tags["pod_name"]
	if pod == "" {
		if _, ok := k.pods[host]; ok {
			pod = host
		}
	}
	if pod == "" {
		return nil, "", fmt.Errorf("no shipper's stream for a line of host %q", host)
	}
	return k.podStreamLabels(pod, tags["kube_namespace"]), pod, nil
}
