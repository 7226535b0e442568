// Package replay turns a real incident into a regression scenario and serves
// it back: Export reads what a pass's data sources answered from its
// workflow history (never asking the sources again), and Serve answers the
// same queries through the sources' own HTTP protocol, so `causeway eval`
// runs the current analyzer or model with no access to the original systems.
package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
)

// Scenario is a labelled scenario (analyzer.Scenario, the eval format) plus
// what the incident's sources answered. Sources carry no URL and no
// credential: only what planning the same queries needs.
type Scenario struct {
	analyzer.Scenario
	// AlertSource is the webhook provider the alert came through, which
	// shapes the queries' scope; empty for a plain scenario.
	AlertSource string   `json:"alertSource,omitempty"`
	Sources     []Source `json:"sources,omitempty"`
	Answers     []Answer `json:"answers,omitempty"`
	// Graded says whether Expected is a person's grade (true) or only the
	// answer the pass gave at the time.
	Graded bool `json:"graded,omitempty"`
	// Culprit is the culprit a person named when grading, if any.
	Culprit string `json:"culprit,omitempty"`

	// Now is the moment a snapshot's systems were read: every time in the
	// file is shifted so that it is the moment the pass runs.
	Now *time.Time `json:"now,omitempty"`
	// Kubernetes is a cluster's objects, served by a Kubernetes API replay.
	Kubernetes *Cluster `json:"kubernetes,omitempty"`
	// Logs are log streams, served by a Loki that evaluates LogQL.
	Logs []LogStream `json:"logs,omitempty"`
	// Series are Prometheus series, served by a real Prometheus.
	Series []Series `json:"series,omitempty"`
}

// Cluster is a Kubernetes snapshot: objects exactly as the API returns them
// (each with apiVersion and kind), and the settings of the kubernetes source
// that reads them.
type Cluster struct {
	Settings map[string]any    `json:"settings,omitempty"`
	Objects  []json.RawMessage `json:"objects"`
}

// LogStream is one log stream: its labels and lines.
type LogStream struct {
	Labels map[string]string `json:"labels"`
	Lines  []LogLine         `json:"lines"`
}

// LogLine is one line of a stream.
type LogLine struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// Series is one Prometheus series, labelled as its exporter labels it.
type Series struct {
	Metric  string            `json:"metric"`
	Labels  map[string]string `json:"labels,omitempty"`
	Samples []Sample          `json:"samples"`
}

// Sample is one value of a series at one time.
type Sample struct {
	At    time.Time `json:"at"`
	Value float64   `json:"value"`
}

// LogStreams are the snapshot's log streams for a Loki to serve, every
// line's time moved by shift.
func (s Scenario) LogStreams(shift time.Duration) []clusterlab.Stream {
	streams := make([]clusterlab.Stream, 0, len(s.Logs))
	for _, l := range s.Logs {
		st := clusterlab.Stream{Labels: l.Labels}
		for _, line := range l.Lines {
			st.Lines = append(st.Lines, clusterlab.LogLine{At: line.At.Add(shift), Text: line.Text})
		}
		streams = append(streams, st)
	}
	return streams
}

// ShiftedMetadata is the alert's metadata with its startsAt moved by shift,
// so the onset keeps its place against the snapshot's systems.
func (s Scenario) ShiftedMetadata(shift time.Duration) map[string]any {
	md := maps.Clone(s.Alert.Metadata)
	if v, ok := md["startsAt"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			md["startsAt"] = t.Add(shift).UTC().Format(time.RFC3339Nano)
		}
	}
	return md
}

// Snapshot reports whether the file holds systems to serve (a cluster, log
// streams or series) rather than recorded answers only.
func (s Scenario) Snapshot() bool {
	return s.Kubernetes != nil || len(s.Logs) > 0 || len(s.Series) > 0
}

// Source is one data source the pass read, by an alias local to the file.
type Source struct {
	Alias    string         `json:"alias"`
	Name     string         `json:"name"`
	Type     string         `json:"type"`
	Settings map[string]any `json:"settings,omitempty"`
}

// Answer is one recorded query and what it returned.
type Answer struct {
	Source string    `json:"source"`
	Type   string    `json:"type"`
	Entry  string    `json:"entry"`
	Query  string    `json:"query"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Readings are the measured readings; Text is the answer's lines as the
	// agents read them (the only form of an unmeasured answer).
	Readings []analyzer.Reading `json:"readings,omitempty"`
	Text     string             `json:"text,omitempty"`
	Note     string             `json:"note,omitempty"`
}

// Load reads one scenario file strictly: a plain labelled scenario or an
// exported one.
func Load(path string) (Scenario, error) {
	var s Scenario
	if err := analyzer.DecodeFile(path, &s); err != nil {
		return Scenario{}, err
	}
	if err := s.check(); err != nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", path, err)
	}
	return s, nil
}

// LoadDir loads every *.json file of dir in name order; the first invalid
// file aborts the load.
func LoadDir(dir string) ([]Scenario, error) { return analyzer.LoadDir(dir, Load) }

// check applies the labelled format's rules, and requires every answer to
// name a source of the file.
func (s Scenario) check() error {
	if err := s.Validate(); err != nil {
		return err
	}
	aliases := map[string]bool{}
	for _, src := range s.Sources {
		aliases[src.Alias] = true
	}
	for i, a := range s.Answers {
		if !aliases[a.Source] {
			return fmt.Errorf("answer %d names no source of the file (%q)", i, a.Source)
		}
	}
	if s.Snapshot() && s.Now == nil {
		return fmt.Errorf("a snapshot needs now, the moment its systems were read")
	}
	if s.Kubernetes != nil {
		if err := clusterlab.CheckObjects(s.Kubernetes.Objects); err != nil {
			return fmt.Errorf("kubernetes: %w", err)
		}
	}
	for i, st := range s.Series {
		if st.Metric == "" || len(st.Samples) == 0 {
			return fmt.Errorf("series %d: a metric name and samples are required", i)
		}
	}
	for i, l := range s.Logs {
		if len(l.Labels) == 0 {
			return fmt.Errorf("log stream %d: labels are required", i)
		}
	}
	return nil
}

// Write stores s as indented JSON at path.
func Write(path string, s Scenario) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o600)
}
