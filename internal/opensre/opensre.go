// Package opensre reads OpenSRE's synthetic root-cause suites (the eks and
// rds_postgres case folders, vendored in cmd/causeway/testdata/opensre) as
// Causeway system snapshots: each case's telemetry becomes the objects, log
// streams and series a real cluster, log store and Prometheus would hold, so
// `causeway eval --format opensre` serves it through those systems' own APIs
// (docs/opensre.md says how each file converts).
package opensre

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/clusterlab"
	"github.com/causeway/causeway/replay"
)

// Suites are the suite folders Load reads under a parent folder.
var Suites = []string{"eks", "rds_postgres"}

// Case is one OpenSRE case as a Causeway snapshot with OpenSRE's answer key.
// Scenario.Expected is left empty: the key is OpenSRE's (Answer), in
// OpenSRE's categories.
type Case struct {
	// Suite is "eks" or "rds_postgres".
	Suite string
	// ID is the case folder's name, OpenSRE's scenario id.
	ID       string
	Scenario replay.Scenario
	Answer   Answer
}

// Answer is the part of a case's answer.yml and scenario.yml the eval
// scores against.
type Answer struct {
	// Category is root_cause_category, one of OpenSRE's.
	Category string
	// Forbidden are forbidden_categories: OpenSRE's categories, and at times
	// finer names (docs/opensre.md).
	ForbiddenCategories []string
	// FailureMode and Difficulty are scenario.yml's failure_mode and
	// scenario_difficulty.
	FailureMode string
	Difficulty  int
}

// caseDir is a case folder's name: three digits, a dash, a name.
var caseDir = regexp.MustCompile(`^[0-9]{3}-`)

// Load reads every case of one suite folder (its NNN-* folders), or of both
// suites when dir holds an eks and an rds_postgres folder, in name order.
// Errors name the case and file at fault.
func Load(dir string) ([]Case, error) {
	dirs, err := caseDirs(dir)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		for _, s := range Suites {
			sub, err := caseDirs(filepath.Join(dir, s))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			dirs = append(dirs, sub...)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no OpenSRE case folders (NNN-*) in %s or its %s folders", dir, strings.Join(Suites, " and "))
	}
	out := make([]Case, 0, len(dirs))
	for _, d := range dirs {
		c, err := loadCase(d)
		if err != nil {
			return nil, fmt.Errorf("opensre case %s: %w", d, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func caseDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && caseDir.MatchString(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// caseFiles finds a case's files: its own, else its base case's (scenario.yml
// `base:`, resolved in the same suite folder, one level only).
type caseFiles struct {
	dir, base string
}

// path is the case's file name, or its base's, or "" when neither has it.
func (f caseFiles) path(name string) string {
	for _, d := range []string{f.dir, f.base} {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// metadata is scenario.yml, merged over its base's.
type metadata map[string]any

func (m metadata) str(k string) string {
	s, _ := m[k].(string)
	return s
}

func (m metadata) evidence(name string) bool {
	list, _ := m["available_evidence"].([]any)
	return slices.Contains(list, any(name))
}

func readYAML(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

// readMetadata reads scenario.yml and the base case's it names; the case's
// own keys win.
func readMetadata(dir string) (metadata, caseFiles, error) {
	files := caseFiles{dir: dir}
	var own metadata
	if err := readYAML(filepath.Join(dir, "scenario.yml"), &own); err != nil {
		return nil, files, err
	}
	base, _ := own["base"].(string)
	if base == "" {
		return own, files, nil
	}
	files.base = filepath.Join(filepath.Dir(dir), base)
	var merged metadata
	if err := readYAML(filepath.Join(files.base, "scenario.yml"), &merged); err != nil {
		return nil, files, fmt.Errorf("base %s: %w", base, err)
	}
	if _, chained := merged["base"]; chained {
		return nil, files, fmt.Errorf("base %s names a base of its own", base)
	}
	maps.Copy(merged, own)
	delete(merged, "base")
	return merged, files, nil
}

type answerFile struct {
	RootCauseCategory   string   `yaml:"root_cause_category"`
	ForbiddenCategories []string `yaml:"forbidden_categories"`
}

func loadCase(dir string) (Case, error) {
	meta, files, err := readMetadata(dir)
	if err != nil {
		return Case{}, err
	}
	var ans answerFile
	if err := readYAML(filepath.Join(dir, "answer.yml"), &ans); err != nil {
		return Case{}, err
	}
	if strings.TrimSpace(ans.RootCauseCategory) == "" {
		return Case{}, errors.New("answer.yml names no root_cause_category")
	}
	var al alertFile
	p := files.path("alert.json")
	if p == "" {
		return Case{}, errors.New("no alert.json")
	}
	if err := readJSON(p, &al); err != nil {
		return Case{}, err
	}
	difficulty, ok := meta["scenario_difficulty"].(int)
	if !ok {
		difficulty = 1 // OpenSRE's default
	}
	c := Case{ID: filepath.Base(dir), Answer: Answer{Category: strings.TrimSpace(ans.RootCauseCategory),
		ForbiddenCategories: ans.ForbiddenCategories, FailureMode: meta.str("failure_mode"), Difficulty: difficulty}}
	s := replay.Scenario{AlertSource: alertSource}
	switch engine := meta.str("engine"); engine {
	case "eks", "gke", "aks", "kubernetes":
		c.Suite = "eks"
		err = loadKubernetes(&s, meta, files)
	case "postgres", "mysql", "aurora-postgres", "aurora-mysql", "mariadb":
		c.Suite = "rds_postgres"
		err = loadRDS(&s, meta, files)
	default:
		err = fmt.Errorf("scenario.yml: unknown engine %q", engine)
	}
	if err != nil {
		return Case{}, err
	}
	s.ID = c.Suite + "/" + c.ID
	s.Alert = al.scenarioAlert()
	if s.Kubernetes != nil {
		if err := clusterlab.CheckObjects(s.Kubernetes.Objects); err != nil {
			return Case{}, err
		}
	}
	now := latest(s)
	if now.IsZero() {
		return Case{}, errors.New("no timestamp in any of its files")
	}
	s.Now = &now
	c.Scenario = s
	return c, nil
}

// latest is the snapshot's latest time: its last sample, log line or object
// time.
func latest(s replay.Scenario) time.Time {
	var t time.Time
	later := func(u time.Time) {
		if u.After(t) {
			t = u
		}
	}
	for _, st := range s.Series {
		for _, p := range st.Samples {
			later(p.At)
		}
	}
	for _, l := range s.Logs {
		for _, line := range l.Lines {
			later(line.At)
		}
	}
	if s.Kubernetes != nil {
		for _, raw := range s.Kubernetes.Objects {
			var v any
			_ = json.Unmarshal(raw, &v)
			walkTimes(v, later)
		}
	}
	return t.UTC()
}

// walkTimes calls f with every RFC 3339 time of a decoded object.
func walkTimes(v any, f func(time.Time)) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			walkTimes(e, f)
		}
	case []any:
		for _, e := range x {
			walkTimes(e, f)
		}
	case string:
		if t, err := time.Parse(time.RFC3339, x); err == nil {
			f(t)
		}
	}
}

// alertSource is the webhook the alerts are read as: their shape (title,
// state, commonLabels, commonAnnotations) is Grafana Alerting's webhook.
const alertSource = "grafana"

// alertFile is alert.json.
type alertFile struct {
	Title             string            `json:"title"`
	State             string            `json:"state"`
	AlertSource       string            `json:"alert_source"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
}

// answerKey are the fields the suites' generator writes for itself, never
// sent by a monitoring tool: the failure mode it injected, the synthetic
// pipeline's name, the evidence sources its harness serves, and its own
// description of the symptom (docs/opensre.md).
var answerKey = map[string]bool{
	"k8s_failure_mode": true, "rds_failure_mode": true, "pipeline_name": true,
	"context_sources": true, "suspected_symptom": true,
}

// whereAnnotations are annotations that name where the alert fired; they
// narrow the queries like labels, so they become tags too.
var whereAnnotations = []string{"cluster_name", "kube_namespace", "kube_deployment", "kube_job", "kube_pod", "kube_node",
	"db_instance_identifier", "db_instance", "db_cluster", "read_replica", "cloudwatch_region"}

// scenarioAlert maps the alert onto the webhook's fields: summary,
// description and error make the description; severity and service come
// from the labels; the other labels and the annotations naming where it
// fired are tags; the annotations, the state and the tool that fired it are
// metadata.
func (a alertFile) scenarioAlert() analyzer.ScenarioAlert {
	ann := map[string]string{}
	for k, v := range a.CommonAnnotations {
		if !answerKey[k] && strings.TrimSpace(v) != "" {
			ann[k] = v
		}
	}
	var desc []string
	for _, k := range []string{"summary", "description", "error"} {
		if v := ann[k]; v != "" && !slices.Contains(desc, v) {
			desc = append(desc, v)
		}
	}
	tags := map[string]string{}
	for k, v := range a.CommonLabels {
		if !answerKey[k] && k != "severity" && k != "service" && v != "" {
			tags[k] = v
		}
	}
	for _, k := range whereAnnotations {
		if v := ann[k]; v != "" {
			tags[k] = v
		}
	}
	md := map[string]any{}
	for k, v := range ann {
		md[k] = v
	}
	if a.State != "" {
		md["state"] = a.State
	}
	if a.AlertSource != "" {
		md["alert_source"] = a.AlertSource
	}
	return analyzer.ScenarioAlert{Title: a.Title, Description: strings.Join(desc, "\n"), Severity: a.CommonLabels["severity"],
		Service: a.CommonLabels["service"], Tags: tags, Metadata: md}
}

// parseTime reads a fixture's time (RFC 3339).
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// apiTime writes a time as the Kubernetes API does (metav1.Time).
func apiTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
