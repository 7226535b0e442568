package analyzer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Scenario is one labelled incident (format in scenarios/README.md), used by the
// eval command and the accuracy tests to measure the analyzer against experts.
type Scenario struct {
	ID      string        `json:"id"`
	Alert   ScenarioAlert `json:"alert"`
	Context []string      `json:"context"`
	// Changes are the changes the tenant recorded (the change webhook's
	// body), optional.
	Changes  []Change `json:"changes,omitempty"`
	Expected Expected `json:"expected"`
}

// ScenarioAlert mirrors the custom webhook payload field for field, so a
// scenario can be replayed through the real API as well as the analyzer.
type ScenarioAlert struct {
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Severity    string            `json:"severity"`
	Service     string            `json:"service"`
	Environment string            `json:"environment"`
	Tags        map[string]string `json:"tags"`
	Metadata    map[string]any    `json:"metadata"`
}

// Expected is the expert label; the service never receives it. Mechanism
// and Culprit are optional: a label that names them is scored on them too.
type Expected struct {
	Category  string   `json:"category"`
	Mechanism string   `json:"mechanism,omitempty"`
	Culprit   *Culprit `json:"culprit,omitempty"`
	Agents    []string `json:"agents"`
	Rationale string   `json:"rationale"`
}

// LoadScenario reads and strictly validates one scenario file, so a mislabelled
// file fails loudly instead of skewing accuracy numbers. Errors name the file.
func LoadScenario(path string) (Scenario, error) {
	var s Scenario
	if err := DecodeFile(path, &s); err != nil {
		return Scenario{}, err
	}
	if err := s.Validate(); err != nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", path, err)
	}
	return s, nil
}

// DecodeFile reads the JSON file at path into v, refusing fields v does not
// have. Errors name the file.
func DecodeFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", path, err)
	}
	if strings.HasSuffix(path, ".gz") {
		// A system snapshot is large (every object of a namespace, as the API
		// writes it) and is kept compressed.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("scenario %s: %w", path, err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxScenarioBytes)); err != nil {
			return fmt.Errorf("scenario %s: %w", path, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("scenario %s: invalid JSON: %w", path, err)
	}
	return nil
}

// Validate applies the format's rules: an id, an alert with a title and a
// description, known change kinds, a known expected category and agents.
func (s Scenario) Validate() error {
	if strings.TrimSpace(s.ID) == "" {
		return fmt.Errorf("empty id")
	}
	if strings.TrimSpace(s.Alert.Title) == "" {
		return fmt.Errorf("missing alert title")
	}
	if strings.TrimSpace(s.Alert.Description) == "" {
		return fmt.Errorf("missing alert description")
	}
	for i, c := range s.Changes {
		if strings.TrimSpace(c.Service) == "" || strings.TrimSpace(c.Description) == "" || !validChangeKind(c.Kind) {
			return fmt.Errorf("change %d: service, description and a known kind are required", i)
		}
	}
	if !ValidCategory(s.Expected.Category) {
		return fmt.Errorf("unknown expected category %q", s.Expected.Category)
	}
	if m := s.Expected.Mechanism; m != "" && !ValidMechanism(s.Expected.Category, m) {
		return fmt.Errorf("expected mechanism %q is not one of %s's", m, s.Expected.Category)
	}
	if c := s.Expected.Culprit; c != nil {
		switch {
		case s.Expected.Category == CategoryUnknown:
			return fmt.Errorf("an unknown answer names no culprit")
		case !ValidCulpritKind(c.Kind):
			return fmt.Errorf("expected culprit kind %q is not a culprit kind", c.Kind)
		case strings.TrimSpace(c.Name) == "":
			return fmt.Errorf("expected culprit has no name")
		}
	}
	if len(s.Expected.Agents) == 0 {
		return fmt.Errorf("expected agents is empty")
	}
	seen := map[string]bool{}
	for _, a := range s.Expected.Agents {
		if !ValidRole(a) {
			return fmt.Errorf("unknown expected agent %q", a)
		}
		if seen[a] {
			return fmt.Errorf("duplicate expected agent %q", a)
		}
		seen[a] = true
	}
	return nil
}

// LoadScenarios loads every *.json (and *.json.gz) file of dir in name order, so evaluation
// output is stable; the first invalid file aborts the load.
func LoadScenarios(dir string) ([]Scenario, error) {
	return LoadDir(dir, LoadScenario)
}

// maxScenarioBytes bounds a decompressed scenario file.
const maxScenarioBytes = 64 << 20

// LoadDir loads every *.json and *.json.gz file of dir in name order with
// load; the first invalid file aborts the load.
func LoadDir[T any](dir string, load func(path string) (T, error)) ([]T, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("scenarios %s: %w", dir, err)
	}
	compressed, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	paths = append(paths, compressed...)
	sort.Strings(paths)
	out := make([]T, 0, len(paths))
	for _, p := range paths {
		s, err := load(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Input converts the scenario's alert and context into what the agents see;
// the label is deliberately left out.
func (s Scenario) Input() Input {
	return Input{
		Title:       s.Alert.Title,
		Description: s.Alert.Description,
		Severity:    s.Alert.Severity,
		Service:     s.Alert.Service,
		Environment: s.Alert.Environment,
		Tags:        s.Alert.Tags,
		Metadata:    s.Alert.Metadata,
		Context:     append([]string(nil), s.Context...),
	}.WithChanges(s.Changes)
}
