package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/app"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/config"
	"github.com/causeway/causeway/devstack"
	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/replay"
	"github.com/causeway/causeway/service"
)

// evalTimeout bounds one scenario's pass; the offline analyzer needs well under a
// second, a hosted LLM a minute or two.
const evalTimeout = 5 * time.Minute

// evalResult is one scenario's outcome.
type evalResult struct {
	id, expected, got string
	// mechanism is the answer's mechanism; empty with unknown.
	mechanism  string
	confidence float64
	status     string
	// culprit is the answer's culprit ("deployment shop/checkout"), empty
	// with unknown.
	culprit string
	// wantMechanism and wantCulprit are the label's, when it names them.
	wantMechanism, wantCulprit string
	seconds                    float64
	// why is the answer's narrative and ranked candidates, shown for a miss
	// with --verbose.
	why string
	// tenantID and incidentID name the incident the scenario was recorded
	// as, for a test to read the whole answer back.
	tenantID, incidentID string
}

// culpritRight tells whether the answer names the labelled culprit: same
// kind and name, and namespace when the label gives one. A label without a
// culprit (unknown) is matched by an answer without one.
func (r evalResult) culpritRight() bool { return r.culprit == r.wantCulprit }

// mechanismRight tells whether the answer has the label's category and,
// when the label names one, its mechanism.
func (r evalResult) mechanismRight() bool {
	return r.got == r.expected && (r.wantMechanism == "" || r.mechanism == r.wantMechanism)
}

func culpritString(c *analyzer.Culprit) string {
	if c == nil {
		return ""
	}
	return c.String()
}

// evalEnv is what every pass of an evaluation runs in: the whole product
// on an embedded in-memory Temporal and a throwaway database, and a tenant.
type evalEnv struct {
	a       *app.App
	inv     *investigation.Investigations
	sources *service.DataSources
	p       auth.Principal
	// model names the analysis path the configuration selects.
	model string
}

// startEval starts the product for an evaluation; the returned func stops
// it and removes its data.
func startEval(ctx context.Context, cfgPath string) (*evalEnv, func(), error) {
	tmp, err := os.MkdirTemp("", "causeway-eval-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	fail := func(err error) (*evalEnv, func(), error) {
		cleanup()
		return nil, nil, err
	}
	// The evaluation never touches the user's data directory or database.
	if err := os.Setenv("CAUSEWAY_DATA_DIR", tmp); err != nil {
		return fail(err)
	}
	cfg, err := config.Load(cfgPath, config.ModeDev)
	if err != nil {
		return fail(err)
	}
	cfg.DatabaseURL, cfg.TemporalAddress = "", ""
	cfg.QuotaEventsPerMonth, cfg.QuotaInvestigationsPerMonth = 0, 0
	cfg.TemporalTaskQueue = "causeway-eval"
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	e, err := startEmbedded(ctx, cfg, log, &devstack.Options{Namespace: cfg.TemporalNamespace, SearchAttributes: investigation.SearchAttributeTypes()})
	if err != nil {
		return fail(err)
	}
	stop := func() {
		e.Close()
		cleanup()
	}
	a := e.app
	p, err := evalTenant(ctx, a.Store)
	if err != nil {
		stop()
		return nil, nil, err
	}
	sealer, err := auth.NewSealer(cfg.SecretsKey)
	if err != nil {
		stop()
		return nil, nil, err
	}
	env := &evalEnv{a: a, inv: investigation.NewInvestigations(a.Store, a.Temporal, a.Dispatcher(), log), p: p,
		sources: service.NewDataSources(a.Store, sealer, a.DataSourceConnector()), model: "offline analyzer"}
	if cfg.LLMEnabled() {
		env.model = "LLM " + cfg.LLMModel
	}
	return env, stop, nil
}

// evaluate runs every scenario of dir through the real pipeline (API services,
// Temporal workflows on an embedded in-memory server, the worker and a throwaway
// database) and prints accuracy against the expert labels. The analysis path is
// whatever the configuration selects: the offline analyzer, or CAUSEWAY_LLM_*.
// A malformed scenario file is an error before anything runs.
func evaluate(ctx context.Context, cfgPath, dir string, out io.Writer) error {
	return evaluateWith(ctx, cfgPath, dir, false, out)
}

// evaluateWith is evaluate, explaining every miss when verbose: the
// answer's narrative and its ranked candidates.
func evaluateWith(ctx context.Context, cfgPath, dir string, verbose bool, out io.Writer) error {
	if dir == "" {
		return errors.New("usage: causeway eval DIR")
	}
	scenarios, err := replay.LoadDir(dir)
	if err != nil {
		return err
	}
	if len(scenarios) == 0 {
		return fmt.Errorf("no scenarios in %s", dir)
	}
	env, stop, err := startEval(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(out, "Evaluating %d scenarios from %s with the %s\n\n%-36s %-26s %-26s %5s\n", len(scenarios), dir, env.model, "scenario", "expected", "got", "conf")
	results := make([]evalResult, 0, len(scenarios))
	for _, s := range scenarios {
		r, err := evalScenario(ctx, env, s)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s.ID, err)
		}
		mark := "✗"
		if r.got == r.expected {
			mark = "✓"
		}
		fmt.Fprintf(out, "%-36s %-26s %-26s %5.2f %s %s %5.1fs\n", r.id, r.expected, r.got, r.confidence, mark, r.status, r.seconds)
		if r.wantCulprit != "" || r.wantMechanism != "" {
			cmark := "✗"
			if r.culpritRight() {
				cmark = "✓"
			}
			fmt.Fprintf(out, "%-36s   culprit %s %s, want %s; mechanism %s, want %s\n", "", cmark, orNone(r.culprit), orNone(r.wantCulprit), orNone(r.mechanism), orNone(r.wantMechanism))
		}
		if verbose && (r.got != r.expected || !r.culpritRight()) {
			fmt.Fprintf(out, "%-36s   %s\n", "", strings.ReplaceAll(r.why, "\n", "\n"+strings.Repeat(" ", 39)))
		}
		results = append(results, r)
	}
	printSummary(out, results)
	return nil
}

func evalTenant(ctx context.Context, store *models.Store) (auth.Principal, error) {
	t := &models.Tenant{ID: models.NewID("ten"), Name: "Evaluation", CreatedAt: time.Now().UTC()}
	u := &models.User{ID: models.NewID("usr"), TenantID: t.ID, Email: strings.ToLower(t.ID) + "@eval.causeway.invalid", Name: "Evaluation", Role: models.RoleOwner, CreatedAt: t.CreatedAt}
	if err := store.CreateTenantWithOwner(ctx, t, u); err != nil {
		return auth.Principal{}, err
	}
	return auth.Principal{UserID: u.ID, Email: u.Email, TenantID: t.ID, Roles: []string{models.RoleOwner}}, nil
}

// evalScenario records the scenario's alert as an incident (all alert fields, as
// a webhook would), adds each context entry, starts a pass and waits for it.
// An exported scenario's sources are stand-ins serving the recorded answers; a
// snapshot's systems are served with every time moved so that its now is the
// moment the pass starts.
func evalScenario(ctx context.Context, env *evalEnv, s replay.Scenario) (evalResult, error) {
	a, inv, sources, p := env.a, env.inv, env.sources, env.p
	began := time.Now()
	now := began.UTC()
	if len(s.Changes) > 0 || len(s.Sources) > 0 || s.Snapshot() {
		// The scenario's changes and sources are recorded as a tenant's would
		// be, in a tenant of their own so no other scenario's are read with
		// them.
		var err error
		if p, err = evalTenant(ctx, a.Store); err != nil {
			return evalResult{}, err
		}
	}
	var recorded map[string]string
	switch {
	case len(s.Changes) > 0 && s.Snapshot():
		// A snapshot's changes are dated in its own time frame and move
		// with the rest of it, so a change keeps its place against the
		// series, log lines and objects around it.
		var err error
		if _, recorded, err = recordScenarioChanges(ctx, a.Store, p.TenantID, shiftChanges(s.Changes, now.Sub(*s.Now)), now); err != nil {
			return evalResult{}, err
		}
	case len(s.Changes) > 0:
		// The incident opens just after the latest change, so they fall in
		// the window a pass reads.
		var err error
		if now, recorded, err = recordScenarioChanges(ctx, a.Store, p.TenantID, s.Changes, now); err != nil {
			return evalResult{}, err
		}
	}
	stop, err := connectStandIns(ctx, sources, p, s)
	if err != nil {
		return evalResult{}, err
	}
	defer stop()
	al := s.Alert
	if s.Snapshot() {
		shift := now.Sub(*s.Now)
		stopSnapshot, err := connectSnapshot(ctx, sources, p, s, shift)
		if err != nil {
			return evalResult{}, err
		}
		defer stopSnapshot()
		al.Metadata = s.ShiftedMetadata(shift)
	}
	source := "eval"
	if s.AlertSource != "" {
		source = s.AlertSource
	}
	inc := &models.Incident{
		ID: models.NewID("inc"), TenantID: p.TenantID, Title: al.Title, Description: al.Description,
		Severity: analyzer.NormalizeSeverity(al.Severity, models.SeverityMedium), Status: models.StatusOpen, Source: source,
		Service: al.Service, Environment: al.Environment, Tags: al.Tags, Metadata: al.Metadata, CreatedAt: now, UpdatedAt: now, AlertCount: 1,
	}
	if _, err := a.Store.CreateIncident(ctx, inc, models.TimelineEntry{At: now, Kind: "created", Message: "Scenario " + s.ID, Actor: p.Email, DedupKey: inc.ID + "/created"}); err != nil {
		return evalResult{}, err
	}
	if err := a.Dispatcher().Ensure(ctx, inc); err != nil {
		return evalResult{}, err
	}
	for _, c := range s.Context {
		if _, err := inv.AddContext(ctx, p, inc.ID, investigation.AddContextInput{Context: c}); err != nil {
			return evalResult{}, err
		}
	}
	if _, err := inv.Start(ctx, p, inc.ID, investigation.StartInvestigationInput{}); err != nil {
		return evalResult{}, err
	}
	deadline := time.Now().Add(evalTimeout)
	for {
		got, err := a.Store.LatestInvestigation(ctx, p.TenantID, inc.ID)
		if err != nil {
			return evalResult{}, err
		}
		if got.Status != models.InvestigationRunning {
			r := evalResult{id: s.ID, expected: s.Expected.Category, got: got.Category, confidence: got.Confidence, status: got.Status,
				mechanism: got.Mechanism, culprit: culpritString(got.Culprit), wantMechanism: s.Expected.Mechanism, wantCulprit: culpritString(recordedCulprit(s.Expected.Culprit, recorded)),
				seconds: time.Since(began).Seconds(), why: got.RootCause, tenantID: p.TenantID, incidentID: inc.ID}
			for i, c := range got.Candidates {
				r.why += fmt.Sprintf("\n%d. %s %s %s %.2f", i+1, orNone(culpritString(c.Culprit)), c.Category, c.Mechanism, c.Confidence)
			}
			return r, nil
		}
		if time.Now().After(deadline) {
			return evalResult{}, fmt.Errorf("investigation still running after %s", evalTimeout)
		}
		select {
		case <-ctx.Done():
			return evalResult{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// recordedCulprit is a label's culprit as the pass can name it: a change
// is named by its changeId (docs/scenarios.md), which Causeway gives it when
// it is recorded, so a label naming a scenario's change by its id or
// version names the recorded change's id.
func recordedCulprit(c *analyzer.Culprit, recorded map[string]string) *analyzer.Culprit {
	if c == nil || c.Kind != analyzer.KindChange {
		return c
	}
	if id, ok := recorded[c.Name]; ok {
		return &analyzer.Culprit{Kind: c.Kind, Name: id, Namespace: c.Namespace}
	}
	return c
}

// recordScenarioChanges stores a scenario's changes for tenantID and returns
// when its incident opens (five minutes after the latest change time, or now
// when no change carries a time) and the id each change was recorded under,
// by the scenario's id and version of it.
func recordScenarioChanges(ctx context.Context, store *models.Store, tenantID string, cs []analyzer.Change, now time.Time) (time.Time, map[string]string, error) {
	var latest time.Time
	for _, c := range cs {
		if c.StartedAt.After(latest) {
			latest = c.StartedAt
		}
		if c.FinishedAt != nil && c.FinishedAt.After(latest) {
			latest = *c.FinishedAt
		}
	}
	opens := now
	if !latest.IsZero() {
		opens = latest.Add(5 * time.Minute).UTC()
	}
	ids := map[string]string{}
	for i, c := range cs {
		started := c.StartedAt
		if started.IsZero() {
			started = opens
		}
		row := &models.Change{TenantID: tenantID, Service: c.Service, Environment: c.Environment, Kind: c.Kind,
			Version: c.Version, Description: c.Description, StartedAt: started.UTC(), FinishedAt: c.FinishedAt,
			Author: c.Author, URL: c.URL, RevertOf: c.RevertOf, Source: "eval", SourceChangeID: fmt.Sprintf("eval-%d", i), CreatedAt: now}
		stored, _, err := store.RecordChange(ctx, row)
		if err != nil {
			return time.Time{}, nil, err
		}
		for _, name := range []string{c.ID, c.Version} {
			if name = strings.TrimSpace(name); name != "" {
				if _, taken := ids[name]; !taken {
					ids[name] = stored.ID
				}
			}
		}
	}
	return opens, ids, nil
}

// shiftChanges returns cs with every time moved by shift.
func shiftChanges(cs []analyzer.Change, shift time.Duration) []analyzer.Change {
	out := make([]analyzer.Change, len(cs))
	for i, c := range cs {
		if !c.StartedAt.IsZero() {
			c.StartedAt = c.StartedAt.Add(shift)
		}
		if c.FinishedAt != nil {
			f := c.FinishedAt.Add(shift)
			c.FinishedAt = &f
		}
		out[i] = c
	}
	return out
}

// printSummary prints accuracy, the confusion table and mean confidence of right
// and wrong answers (a calibrated analyzer is less sure when it is wrong).
func printSummary(out io.Writer, results []evalResult) {
	var right, wrong []float64
	confusion := map[string]map[string]int{}
	for _, r := range results {
		if r.got == r.expected {
			right = append(right, r.confidence)
		} else {
			wrong = append(wrong, r.confidence)
		}
		if confusion[r.expected] == nil {
			confusion[r.expected] = map[string]int{}
		}
		confusion[r.expected][r.got]++
	}
	fmt.Fprintf(out, "\nAccuracy: %d/%d (%.1f%%)\n\nConfusion (expected → got):\n", len(right), len(results), 100*float64(len(right))/float64(len(results)))
	for _, exp := range sortedKeys(confusion) {
		var cells []string
		for _, got := range sortedKeys(confusion[exp]) {
			cells = append(cells, fmt.Sprintf("%s×%d", got, confusion[exp][got]))
		}
		fmt.Fprintf(out, "  %-26s → %s\n", exp, strings.Join(cells, ", "))
	}
	fmt.Fprintf(out, "\nMean confidence: right %.2f (n=%d), wrong %.2f (n=%d)\n", mean(right), len(right), mean(wrong), len(wrong))
	labelled, culprits, mechanisms := 0, 0, 0
	var secs []float64
	anyCulprit := false
	for _, r := range results {
		anyCulprit = anyCulprit || r.wantCulprit != ""
	}
	for _, r := range results {
		secs = append(secs, r.seconds)
		// A set that labels culprits labels an unknown one as having none.
		if !anyCulprit || r.wantCulprit == "" && r.wantMechanism == "" && r.expected != analyzer.CategoryUnknown {
			continue
		}
		labelled++
		if r.culpritRight() {
			culprits++
		}
		if r.mechanismRight() {
			mechanisms++
		}
	}
	if labelled > 0 {
		fmt.Fprintf(out, "Culprit@1: %d/%d (%.1f%%); category and mechanism: %d/%d (%.1f%%) of the scenarios that label them\n",
			culprits, labelled, 100*float64(culprits)/float64(labelled), mechanisms, labelled, 100*float64(mechanisms)/float64(labelled))
	}
	fmt.Fprintf(out, "Median seconds per scenario: %.1f\n", median(secs))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// connectStandIns starts the stand-ins of an exported scenario's sources and
// connects each as a data source of the tenant, under its recorded name and
// settings; the returned func stops them.
func connectStandIns(ctx context.Context, sources *service.DataSources, p auth.Principal, s replay.Scenario) (func(), error) {
	srv := replay.Serve(s)
	for _, src := range s.Sources {
		u, ok := srv.URLs[src.Alias]
		if !ok {
			continue
		}
		settings, err := json.Marshal(src.Settings)
		if err != nil {
			srv.Close()
			return nil, err
		}
		if _, err := sources.Create(ctx, p, service.CreateDataSourceInput{Name: src.Name, Type: src.Type, URL: u,
			Settings: settings}); err != nil {
			srv.Close()
			return nil, fmt.Errorf("connecting the stand-in of %s: %w", src.Name, err)
		}
	}
	return srv.Close, nil
}
