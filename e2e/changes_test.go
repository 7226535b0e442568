package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/providers"
)

// postSigned posts a signed JSON body to one of the tenant's webhooks.
func (e *env) postSigned(t *testing.T, path, key, secret string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.URL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set(providers.HeaderSignature, "sha256="+providers.Sign([]byte(secret), raw, ""))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post %s: %v", path, err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// changeVerdict is the part of an investigation result this test reads.
type changeVerdict struct {
	InvestigationID string `json:"investigationId"`
	Status          string `json:"status"`
	Category        string `json:"category"`
	Evidence        []struct {
		AgentRole string `json:"agentRole"`
		Content   string `json:"content"`
		Source    *struct {
			Kind     string `json:"kind"`
			ChangeID string `json:"changeId"`
		} `json:"source"`
	} `json:"evidence"`
}

// deployThenAlert records a release of changedService through the change
// webhook, sends an alert for checkout three minutes later, adds logs in
// which only the new version fails, and returns the verdict of the pass that
// read them, with the recorded change's id.
func deployThenAlert(t *testing.T, changedService string) (changeVerdict, string) {
	e := newEnv(t)
	token, tenantID := e.signup(t, "acme")
	key, secret := e.hookKey(t, token)
	now := time.Now().UTC().Truncate(time.Second)
	deployed := now.Add(-3 * time.Minute)

	st, ch := e.postSigned(t, "/v1/webhooks/"+tenantID+"/change", key, secret, map[string]any{
		"service": changedService, "environment": "production", "kind": "deployment", "version": "2.14.0",
		"description": "Release 2.14.0: order DTO refactor", "startedAt": deployed.Format(time.RFC3339),
		"finishedAt": deployed.Add(time.Minute).Format(time.RFC3339), "author": "ci", "sourceChangeId": "ci-run-4411",
	})
	changeID, _ := ch["changeId"].(string)
	if st != http.StatusAccepted || changeID == "" {
		t.Fatalf("change webhook: %d %v", st, ch)
	}

	st, al := e.postSigned(t, "/v1/webhooks/"+tenantID+"/custom", key, secret, map[string]any{
		"title": "checkout 5xx above 4%", "description": "checkout answers 5xx on POST /orders",
		"service": "checkout", "environment": "production", "severity": "high", "sourceAlertId": "chk-5xx-" + changedService,
	})
	incidentID, _ := al["incidentId"].(string)
	if st != http.StatusAccepted || incidentID == "" {
		t.Fatalf("alert webhook: %d %v", st, al)
	}
	first := e.awaitInvestigation(t, token, incidentID, 2*time.Minute)

	stamp := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	logs := stamp(-2*time.Minute) + " ERROR pod=checkout-7f9c-abcde version=2.14.0 NullPointerException in OrderMapper.toDto\n" +
		stamp(-2*time.Minute+time.Second) + " INFO pod=checkout-5b8d-xyz12 version=2.13.4 POST /orders 201 in 88ms\n" +
		"error rate by version over the last 10 minutes: 2.14.0 31% errors, 2.13.4 0.1% errors"
	var ctxOut struct {
		Reinvestigating bool `json:"reinvestigating"`
	}
	if st := e.call(t, "POST", "/v1/investigation/"+incidentID+"/context", token,
		map[string]any{"context": logs, "reinvestigate": true}, &ctxOut); st != http.StatusOK || !ctxOut.Reinvestigating {
		t.Fatalf("context: %d %+v", st, ctxOut)
	}
	var v changeVerdict
	eventually(t, 2*time.Minute, "the pass that read the logs", func() bool {
		v = changeVerdict{}
		st := e.call(t, "GET", "/v1/investigation/"+incidentID, token, nil, &v)
		return st == http.StatusOK && v.InvestigationID != first.InvestigationID && v.Status != "running"
	})
	if v.Status != "completed" {
		t.Fatalf("pass %+v", v)
	}
	return v, changeID
}

func TestDeployRecordedByWebhookIsNamedAsTheCause(t *testing.T) {
	v, changeID := deployThenAlert(t, "checkout")
	if v.Category != "bad_deployment" {
		t.Fatalf("category %q, want bad_deployment: %+v", v.Category, v.Evidence)
	}
	for _, ev := range v.Evidence {
		if ev.AgentRole == "deployments" && ev.Source != nil && ev.Source.Kind == "change" && ev.Source.ChangeID == changeID &&
			strings.Contains(ev.Content, changeID) && strings.Contains(ev.Content, "2.14.0") {
			return
		}
	}
	t.Fatalf("no deployments evidence cites change %s with its version: %+v", changeID, v.Evidence)
}

func TestDeployOfAnUnrelatedServiceIsNotTheCause(t *testing.T) {
	v, _ := deployThenAlert(t, "search")
	if v.Category == "bad_deployment" {
		t.Fatalf("a release of another service became the root cause: %+v", v.Evidence)
	}
}
