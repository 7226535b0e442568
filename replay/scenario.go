// Package replay turns a real incident into a regression scenario and serves
// it back: Export reads what a pass's data sources answered from its
// workflow history (never asking the sources again), and Serve answers the
// same queries through the sources' own HTTP protocol, so `causeway eval`
// runs the current analyzer or model with no access to the original systems.
package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/causeway/causeway/analyzer"
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
