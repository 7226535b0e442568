package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/investigation"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

// hookKey creates an API key for the tenant and returns it with its secret.
func (e *env) hookKey(t testing.TB, token string) (key, secret string) {
	t.Helper()
	var k struct{ Key, WebhookSecret string }
	if st := e.call(t, "POST", "/v1/api-keys", token, map[string]string{"name": "e2e"}, &k); st != http.StatusCreated {
		t.Fatalf("create api key: %d", st)
	}
	return k.Key, k.WebhookSecret
}

// alert posts a signed custom alert and returns the status and decoded answer.
func (e *env) alert(t *testing.T, tenantID, key, secret string, body map[string]string) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.URL+"/v1/webhooks/"+tenantID+"/custom", bytes.NewReader(raw))
	req.Header.Set("X-API-Key", key)
	req.Header.Set(providers.HeaderSignature, "sha256="+providers.Sign([]byte(secret), raw, ""))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("post alert: %v", err)
		return 0, nil
	}
	defer resp.Body.Close()
	out := map[string]any{}
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// workflowExists reports whether the incident's IncidentWorkflow exists in Temporal.
func (e *env) workflowExists(incidentID string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.Temporal.DescribeWorkflowExecution(ctx, investigation.IncidentWorkflowID(incidentID), "")
	return err == nil
}

func (e *env) incident(t *testing.T, tenantID, id string) *models.Incident {
	t.Helper()
	inc, err := e.Store.GetIncident(context.Background(), tenantID, id)
	if err != nil {
		t.Fatalf("incident %s: %v", id, err)
	}
	return inc
}

func firing(id string) map[string]string {
	return map[string]string{"title": "p99 latency > 2s", "description": "checkout p99 2.4s for 10m", "sourceAlertId": id, "severity": "high"}
}

func TestWebhookAlertGetsItsWorkflow(t *testing.T) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "acme")
	key, secret := e.hookKey(t, token)
	st, out := e.alert(t, tenantID, key, secret, firing("wf-1"))
	id, _ := out["incidentId"].(string)
	if st != http.StatusAccepted || out["status"] != models.StatusTriaging || id == "" {
		t.Fatalf("webhook: %d %v", st, out)
	}
	eventually(t, 20*time.Second, "the incident workflow", func() bool {
		return e.workflowExists(id) && e.incident(t, tenantID, id).WorkflowStartedAt != nil
	})
}

func TestWebhookConcurrentDuplicatesOneWorkflow(t *testing.T) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "acme")
	key, secret := e.hookKey(t, token)
	const n = 50
	statuses := make([]int, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, out := e.alert(t, tenantID, key, secret, firing("dup-storm"))
			statuses[i] = st
			ids[i], _ = out["incidentId"].(string)
		}()
	}
	wg.Wait()
	accepted := 0
	for i, st := range statuses {
		if st == http.StatusAccepted {
			accepted++
		} else if st != http.StatusConflict {
			t.Fatalf("status %d", st)
		}
		if ids[i] != ids[0] {
			t.Fatalf("answers name different incidents: %s vs %s", ids[i], ids[0])
		}
	}
	if accepted != 1 {
		t.Fatalf("%d accepted, want 1", accepted)
	}
	var count int64
	e.Store.DB().Model(&models.Incident{}).Where("tenant_id = ?", tenantID).Count(&count)
	if count != 1 {
		t.Fatalf("%d incidents, want 1", count)
	}
	eventually(t, 20*time.Second, "the one workflow", func() bool { return e.workflowExists(ids[0]) })
}

func TestWebhookResolvedNotificationResolves(t *testing.T) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "acme")
	key, secret := e.hookKey(t, token)
	_, out := e.alert(t, tenantID, key, secret, firing("res-1"))
	id, _ := out["incidentId"].(string)
	resolved := firing("res-1")
	resolved["status"] = "resolved"
	// Twice: providers retry, and the second answer must be the same.
	for range 2 {
		st, got := e.alert(t, tenantID, key, secret, resolved)
		if st != http.StatusAccepted || got["incidentId"] != id || got["status"] != models.StatusResolved {
			t.Fatalf("resolve: %d %v", st, got)
		}
	}
	inc := e.incident(t, tenantID, id)
	if inc.Status != models.StatusResolved || inc.ResolvedAt == nil {
		t.Fatalf("incident not resolved: %+v", inc)
	}
	tl, _ := e.Store.Timeline(context.Background(), tenantID, id)
	found := false
	for _, en := range tl {
		found = found || (en.Kind == "resolved" && en.Actor == "custom")
	}
	if !found {
		t.Fatalf("no resolution by the provider in the timeline: %+v", tl)
	}
	st, got := e.alert(t, tenantID, key, secret, map[string]string{"title": "x", "description": "never fired", "sourceAlertId": "unknown", "status": "resolved"})
	if st != http.StatusAccepted || got["status"] != "ignored" {
		t.Fatalf("unknown resolve: %d %v", st, got)
	}
}
