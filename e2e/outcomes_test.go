package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/replay"
)

// TestExportedScenarioReplays: a real Prometheus shows checkout's memory
// exhausted, a bland alert is investigated from it and graded correct. The
// incident is exported (another tenant: 404), the export holds no source URL
// or credential, and with that Prometheus stopped the export replays through
// a stand-in speaking the Prometheus API to the same category.
func TestExportedScenarioReplays(t *testing.T) {
	const secret = "prom-bearer-8c2f1e9d7a"
	const culprit = "checkout-7d9f8c6b5-x2k4q"
	e := newEnv(t)
	prom := testenv.Prometheus(t, promlab.MemoryExhaustion(scenarioTarget))
	token, tenantID, key := e.tenantWithKey(t, "exporter")
	e.addSource(t, token, map[string]any{"name": "prod metrics", "type": "prometheus", "url": prom.URL,
		"auth": map[string]any{"bearerToken": secret}, "settings": map[string]any{"serviceLabel": "service"}})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-10*time.Minute))
	res := e.awaitSourced(t, token, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryMemoryExhaustion {
		t.Fatalf("original pass: %s %s", res.Status, res.Category)
	}
	if st := e.call(t, "POST", "/v1/investigation/"+id+"/feedback", token, map[string]any{"verdict": "correct", "actualCulprit": culprit}, nil); st != http.StatusOK {
		t.Fatalf("grade: %d", st)
	}

	var raw json.RawMessage
	if st := e.call(t, "GET", "/v1/investigation/"+id+"/scenario", token, nil, &raw); st != http.StatusOK {
		t.Fatalf("export: %d %s", st, raw)
	}
	for _, leak := range []string{secret, prom.URL, strings.TrimPrefix(prom.URL, "http://")} {
		if strings.Contains(string(raw), leak) {
			t.Fatalf("the export holds %q", leak)
		}
	}
	otherToken, _ := e.signup(t, "someone else")
	var e404 struct{ Error string }
	if st := e.call(t, "GET", "/v1/investigation/"+id+"/scenario", otherToken, nil, &e404); st != http.StatusNotFound || e404.Error != "incident_not_found" {
		t.Fatalf("another tenant's export: %d %+v", st, e404)
	}

	// The file eval reads: the strict loader accepts it.
	path := filepath.Join(t.TempDir(), "exported.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Graded || s.Expected.Category != analyzer.CategoryMemoryExhaustion || s.Culprit != culprit || s.AlertSource != "alertmanager" {
		t.Fatalf("label: graded %t %s culprit %q source %q", s.Graded, s.Expected.Category, s.Culprit, s.AlertSource)
	}
	measured := 0
	for _, a := range s.Answers {
		measured += len(a.Readings)
	}
	if len(s.Sources) != 1 || s.Sources[0].Type != "prometheus" || s.Sources[0].Settings["serviceLabel"] != "service" || measured == 0 {
		t.Fatalf("sources %+v, %d answers with %d readings", s.Sources, len(s.Answers), measured)
	}
	if dir := os.Getenv("CAUSEWAY_WRITE_SCENARIOS"); dir != "" {
		s.ID = "exported-memory-exhaustion"
		if err := replay.Write(filepath.Join(dir, s.ID+".json"), s); err != nil {
			t.Fatal(err)
		}
	}

	// No access to the original source from here on.
	if err := prom.Stop(); err != nil {
		t.Fatal(err)
	}
	got := e.replayScenario(t, s)
	if got.Status != "completed" || got.Category != s.Expected.Category {
		t.Fatalf("replay: %s %s (%.2f) %s\ncoverage %+v", got.Status, got.Category, got.Confidence, got.RootCause, got.Coverage)
	}
	quoted := false
	for _, ev := range got.Evidence {
		quoted = quoted || (ev.Source != nil && ev.Source.Kind == "datasource" && strings.Contains(ev.Content, culprit))
	}
	if !quoted {
		t.Fatalf("the replayed answer quotes no recorded reading of %s: %+v", culprit, got.Evidence)
	}
}

// replayScenario does what `causeway eval` does with an exported scenario,
// in a tenant of its own: the stand-ins serve the recorded answers, the alert
// becomes an incident as the eval command records it, and a pass runs.
func (e *env) replayScenario(t *testing.T, s replay.Scenario) sourcedResult {
	t.Helper()
	token, tenantID := e.signup(t, "replay")
	srv := replay.Serve(s)
	t.Cleanup(srv.Close)
	for _, src := range s.Sources {
		e.addSource(t, token, map[string]any{"name": src.Name, "type": src.Type, "url": srv.URLs[src.Alias], "settings": src.Settings})
	}
	now := time.Now().UTC()
	al := s.Alert
	inc := &models.Incident{ID: models.NewID("inc"), TenantID: tenantID, Title: al.Title, Description: al.Description,
		Severity: analyzer.NormalizeSeverity(al.Severity, models.SeverityMedium), Status: models.StatusOpen, Source: s.AlertSource,
		Service: al.Service, Environment: al.Environment, Tags: al.Tags, Metadata: al.Metadata, CreatedAt: now, UpdatedAt: now, AlertCount: 1}
	ctx := context.Background()
	if _, err := e.Store.CreateIncident(ctx, inc, models.TimelineEntry{At: now, Kind: "created", Message: "replay", DedupKey: inc.ID + "/created"}); err != nil {
		t.Fatal(err)
	}
	if err := e.App.Dispatcher().Ensure(ctx, inc); err != nil {
		t.Fatal(err)
	}
	if st := e.call(t, "POST", "/v1/investigation/"+inc.ID+"/start", token, map[string]any{}, nil); st != http.StatusAccepted && st != http.StatusConflict {
		t.Fatalf("start replay pass: %d", st)
	}
	return e.awaitSourced(t, token, inc.ID)
}
