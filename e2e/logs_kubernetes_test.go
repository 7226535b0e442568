package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/clusterlab"
	"github.com/causeway/causeway/investigation"
)

// secretsNowhere fails when any secret shows in the tenant's responses, the
// process's logs, or the histories of the incident's first pass.
func secretsNowhere(t *testing.T, e *env, token, incidentID string, agents []string, secrets ...string) {
	t.Helper()
	var seen []string
	for _, path := range []string{"/v1/datasources", "/v1/investigation/" + incidentID, "/v1/incidents/" + incidentID} {
		var raw json.RawMessage
		e.call(t, "GET", path, token, nil, &raw)
		seen = append(seen, "GET "+path+": "+string(raw))
	}
	seen = append(seen, "logs: "+e.Logs.String())
	ids := []string{investigation.IncidentWorkflowID(incidentID), investigation.InvestigationWorkflowID(incidentID, 1)}
	for _, role := range agents {
		ids = append(ids, investigation.AgentWorkflowID(incidentID, 1, role))
	}
	queried := false
	for _, id := range ids {
		text := historyText(t, e, id)
		queried = queried || strings.Contains(text, "RunDataSourceQuery")
		seen = append(seen, "history of "+id+": "+text)
	}
	if !queried {
		t.Fatal("no history shows the data-source queries; the grep looked in the wrong place")
	}
	for _, s := range secrets {
		for _, where := range seen {
			if strings.Contains(where, s) {
				t.Fatalf("a credential shows in %s", where[:min(len(where), 120)])
			}
		}
	}
}

// TestCrashLoopWhoseReasonIsOnlyInKubernetes: the alert says checkout is
// degraded; only the Kubernetes API (v1.30, over TLS with the cluster's CA
// and a service account token) knows its pods are OOM-killed (exit 137).
func TestCrashLoopWhoseReasonIsOnlyInKubernetes(t *testing.T) {
	token := "k8s-sa-" + auth.RandomToken(12)
	ks := clusterlab.Kubernetes(t, clusterlab.CrashLoopOOM("shop", token, time.Now().UTC()))
	e := newEnv(t)
	tk, tenantID, key := e.tenantWithKey(t, "oom")
	dsID := e.addSource(t, tk, map[string]any{"name": "prod cluster", "type": "kubernetes", "url": ks.URL,
		"auth": map[string]any{"bearerToken": token}, "settings": map[string]any{"caBundle": ks.CABundle}})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-5*time.Minute))
	res := e.awaitSourced(t, tk, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryMemoryExhaustion {
		t.Fatalf("got %s %s (%.2f): %s\ncoverage %+v\nevidence %+v", res.Status, res.Category, res.Confidence, res.RootCause, res.Coverage, res.Evidence)
	}
	found := false
	for _, ev := range res.Evidence {
		if s := ev.Source; s != nil && s.Type == "kubernetes" && s.DataSourceID == dsID && strings.HasPrefix(s.Query, "GET /api/v1/namespaces/shop/pods") &&
			strings.Contains(ev.Content, "OOMKilled") && strings.Contains(ev.Content, "exit code 137") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no evidence quoting the OOM kill with the Kubernetes path: %+v", res.Evidence)
	}
	if ks.API.Writes.Load() != 0 {
		t.Fatal("Causeway sent the API server something other than GET")
	}
	secretsNowhere(t, e, tk, id, res.Agents, token)
}

// TestNewReplicaSetFailingRightAfterARollout: revision 13 rolled out six
// minutes ago and only its pods crash; the answer is bad_deployment and the
// evidence cites the rollout.
func TestNewReplicaSetFailingRightAfterARollout(t *testing.T) {
	token := "k8s-sa-" + auth.RandomToken(12)
	ks := clusterlab.Kubernetes(t, clusterlab.BadRollout("shop", token, time.Now().UTC()))
	e := newEnv(t)
	tk, tenantID, key := e.tenantWithKey(t, "rollout")
	e.addSource(t, tk, map[string]any{"name": "prod cluster", "type": "kubernetes", "url": ks.URL,
		"auth": map[string]any{"bearerToken": token}, "settings": map[string]any{"caBundle": ks.CABundle}})
	id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", time.Now().Add(-4*time.Minute))
	res := e.awaitSourced(t, tk, id)
	if res.Status != "completed" || res.Category != analyzer.CategoryBadDeployment {
		t.Fatalf("got %s %s (%.2f): %s\ncoverage %+v\nevidence %+v", res.Status, res.Category, res.Confidence, res.RootCause, res.Coverage, res.Evidence)
	}
	for _, ev := range res.Evidence {
		if s := ev.Source; s != nil && s.Type == "kubernetes" && strings.Contains(s.Query, "/apis/apps/v1/namespaces/shop/replicasets") &&
			strings.Contains(ev.Content, "bad_deployment") && strings.Contains(ev.Content, "checkout-5c8b7f9d4") &&
			strings.Contains(ev.Content, "registry.example/checkout:2.15.0") {
			secretsNowhere(t, e, tk, id, res.Agents, token)
			return
		}
	}
	t.Fatalf("no evidence citing the rollout of revision 13: %+v", res.Evidence)
}

// TestErrorFirstSeenInLogsAfterAConfigChange: the logs (Loki 3 or
// Elasticsearch 8) show the first error three minutes after a configuration
// change someone pasted; the second pass names config_change and cites the
// log query that dates the first error.
func TestErrorFirstSeenInLogsAfterAConfigChange(t *testing.T) {
	e := newEnv(t)
	for _, store := range []string{"loki", "elasticsearch"} {
		t.Run(store, func(t *testing.T) {
			now := time.Now().UTC().Truncate(time.Second)
			first := now.Add(-10 * time.Minute)
			msg := `payment provider rejected request: invalid merchant id "acme-eu-2"`
			secret := "log-secret-" + auth.RandomToken(10)
			var source map[string]any
			var queryMark string
			switch store {
			case "loki":
				var lines []clusterlab.LogLine
				for i := 0; i < 8; i++ {
					lines = append(lines, clusterlab.LogLine{At: first.Add(time.Duration(i) * time.Minute), Text: `level=error msg="` + strings.ReplaceAll(msg, `"`, `'`) + `"`})
				}
				srv := clusterlab.Loki(t, secret, []clusterlab.Stream{{Labels: map[string]string{"service_name": "checkout", "namespace": "shop", "pod": "checkout-7d9f8c6b5-x2k4q"}, Lines: lines}})
				source = map[string]any{"name": "logs", "type": "loki", "url": srv.URL, "auth": map[string]any{"headers": map[string]string{"X-Scope-OrgID": secret}}}
				queryMark = `{service_name="checkout", namespace=~"shop|"} |~`
			case "elasticsearch":
				var docs []clusterlab.Doc
				for i := 0; i < 8; i++ {
					docs = append(docs, clusterlab.Doc{"@timestamp": first.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano), "message": msg,
						"log": map[string]any{"level": "error"}, "service": map[string]any{"name": "checkout"}})
				}
				srv := clusterlab.Elasticsearch(t, "causeway", secret, map[string][]clusterlab.Doc{"logs-checkout-2026.11": docs})
				source = map[string]any{"name": "logs", "type": "elasticsearch", "url": srv.URL, "auth": map[string]any{"username": "causeway", "password": secret}}
				queryMark = "POST /logs-*/_search "
			}
			tk, tenantID, key := e.tenantWithKey(t, "config-"+store)
			e.addSource(t, tk, source)
			id := e.alertmanagerAlert(t, tenantID, key, blandLabels("checkout"), "checkout is degraded", now.Add(-2*time.Minute))
			firstPass := e.awaitSourced(t, tk, id)
			var before struct {
				InvestigationID string `json:"investigationId"`
			}
			e.call(t, "GET", "/v1/investigation/"+id, tk, nil, &before)
			change := now.Add(-13*time.Minute).Format(time.RFC3339) + " configmap checkout-config updated: payments.merchantId acme-eu-1 -> acme-eu-2"
			var ctxOut struct {
				Reinvestigating bool `json:"reinvestigating"`
			}
			if st := e.call(t, "POST", "/v1/investigation/"+id+"/context", tk, map[string]any{"context": change, "reinvestigate": true}, &ctxOut); st != http.StatusOK || !ctxOut.Reinvestigating {
				t.Fatalf("context: %d %+v", st, ctxOut)
			}
			var res sourcedResult
			eventually(t, 2*time.Minute, "the second pass", func() bool {
				var cur struct {
					InvestigationID string `json:"investigationId"`
					Status          string `json:"status"`
				}
				if e.call(t, "GET", "/v1/investigation/"+id, tk, nil, &cur) != http.StatusOK || cur.InvestigationID == before.InvestigationID || cur.Status == "running" {
					return false
				}
				res = sourcedResult{}
				return e.call(t, "GET", "/v1/investigation/"+id, tk, nil, &res) == http.StatusOK
			})
			if res.Status != "completed" || res.Category != analyzer.CategoryConfigChange {
				t.Fatalf("got %s %s (%.2f): %s\ncoverage %+v\nevidence %+v", res.Status, res.Category, res.Confidence, res.RootCause, res.Coverage, res.Evidence)
			}
			cited := false
			for _, ev := range res.Evidence {
				if s := ev.Source; s != nil && s.Type == store && strings.Contains(s.Query, queryMark) &&
					strings.Contains(ev.Content, "config_change") && strings.Contains(ev.Content, first.Format("2006-01-02T15:04:05")) {
					cited = true
				}
			}
			if !cited {
				t.Fatalf("no config_change evidence citing the %s query and the first error at %s: %+v", store, first.Format(time.RFC3339), res.Evidence)
			}
			secretsNowhere(t, e, tk, id, firstPass.Agents, secret)
		})
	}
}
