package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/providers"
)

type changeAck struct {
	Error    string `json:"error"`
	Message  string `json:"message"`
	ChangeID string `json:"changeId"`
	Status   string `json:"status"`
	Reason   string `json:"reason"`
}

// signedChange is a change delivery with the key in X-API-Key and a bare signature.
func (e *hookEnv) signedChange(tb testing.TB, t tenant, body []byte) *http.Request {
	req := e.hook(tb, t.ID, "change", body)
	req.Header.Set("X-API-Key", t.Key)
	req.Header.Set(providers.HeaderSignature, providers.Sign([]byte(t.Secret), body, ""))
	return req
}

func (e *hookEnv) countChanges(tb testing.TB, tenantID string) int64 {
	var n int64
	if err := e.store.DB().Model(&models.Change{}).Where("tenant_id = ?", tenantID).Count(&n).Error; err != nil {
		tb.Fatal(err)
	}
	return n
}

func changeBody(fields map[string]any) []byte {
	b, _ := json.Marshal(fields)
	return b
}

func TestChangeWebhookRecordsAndIsIdempotent(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	body := changeBody(map[string]any{
		"service": "checkout", "environment": "production", "kind": "deployment", "version": "v2.14.0",
		"description": "Release v2.14.0: new payment client", "startedAt": "2025-06-02T14:00:00Z",
		"finishedAt": "2025-06-02T14:04:00Z", "author": "ci-bot", "url": "https://ci.example.com/runs/88",
		"sourceChangeId": "deploy-88",
	})
	var first changeAck
	st, raw := send(t, e.signedChange(t, tn, body), &first)
	if st != http.StatusAccepted || !strings.HasPrefix(first.ChangeID, "chg_") {
		t.Fatalf("first delivery: %d %s", st, raw)
	}
	var again changeAck
	st, raw = send(t, e.signedChange(t, tn, body), &again)
	if st != http.StatusOK || again.ChangeID != first.ChangeID {
		t.Fatalf("repeat: %d %s, want 200 with %s", st, raw, first.ChangeID)
	}
	if n := e.countChanges(t, tn.ID); n != 1 {
		t.Fatalf("%d rows after a repeat, want 1", n)
	}
	// Changes start no investigation and consume no event quota.
	if n := e.countIncidents(t, tn.ID); n != 0 {
		t.Fatalf("a change opened %d incidents", n)
	}

	var page struct {
		Items []map[string]any `json:"items"`
		Count int              `json:"count"`
	}
	st, raw = e.do(t, "GET", "/v1/changes?service=checkout", tn.Token, nil, &page)
	if st != http.StatusOK || page.Count != 1 || len(page.Items) != 1 {
		t.Fatalf("list: %d %s", st, raw)
	}
	want := map[string]any{"changeId": first.ChangeID, "service": "checkout", "environment": "production",
		"kind": "deployment", "version": "v2.14.0", "description": "Release v2.14.0: new payment client",
		"startedAt": "2025-06-02T14:00:00Z", "finishedAt": "2025-06-02T14:04:00Z", "author": "ci-bot",
		"url": "https://ci.example.com/runs/88", "revertOf": ""}
	for k, v := range want {
		if page.Items[0][k] != v {
			t.Errorf("%s = %v, want %v", k, page.Items[0][k], v)
		}
	}
	if _, leaked := page.Items[0]["sourceChangeId"]; leaked {
		t.Error("the list shows the dedup key, which the contract leaves out")
	}
}

func TestChangeWebhookConcurrentRepeatsWriteOneRow(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	body := changeBody(map[string]any{"service": "api", "kind": "config", "description": "pool size 50 -> 10", "sourceChangeId": "cfg-7"})
	const n = 8
	ids := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var a changeAck
			codes[i], _ = send(t, e.signedChange(t, tn, body), &a)
			ids[i] = a.ChangeID
		}(i)
	}
	wg.Wait()
	created := 0
	for i := range ids {
		if ids[i] == "" || ids[i] != ids[0] {
			t.Fatalf("answers name different changes: %v (codes %v)", ids, codes)
		}
		switch codes[i] {
		case http.StatusAccepted:
			created++
		case http.StatusOK:
		default:
			t.Fatalf("unexpected status %d", codes[i])
		}
	}
	if created != 1 || e.countChanges(t, tn.ID) != 1 {
		t.Fatalf("%d answers said created, %d rows; want exactly one", created, e.countChanges(t, tn.ID))
	}
}

func TestChangeWebhookRejectsBadFields(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	valid := func() map[string]any {
		return map[string]any{"service": "checkout", "kind": "deployment", "description": "release"}
	}
	cases := []struct {
		name  string
		edit  func(m map[string]any)
		field string
	}{
		{"missing service", func(m map[string]any) { delete(m, "service") }, "service"},
		{"blank description", func(m map[string]any) { m["description"] = "  " }, "description"},
		{"missing kind", func(m map[string]any) { delete(m, "kind") }, "kind"},
		{"unknown kind", func(m map[string]any) { m["kind"] = "hotfix" }, "kind"},
		{"version not a string", func(m map[string]any) { m["version"] = 3 }, "version"},
		{"bad startedAt", func(m map[string]any) { m["startedAt"] = "yesterday" }, "startedAt"},
		{"finished before started", func(m map[string]any) {
			m["startedAt"], m["finishedAt"] = "2025-06-02T14:00:00Z", "2025-06-02T13:00:00Z"
		}, "finishedAt"},
		{"far future", func(m map[string]any) { m["startedAt"] = time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339) }, "startedAt"},
		{"url not http", func(m map[string]any) { m["url"] = "javascript:alert(1)" }, "url"},
		{"service too long", func(m map[string]any) { m["service"] = strings.Repeat("s", 201) }, "service"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := valid()
			c.edit(m)
			var a changeAck
			st, raw := send(t, e.signedChange(t, tn, changeBody(m)), &a)
			if st != http.StatusBadRequest || a.Error != "validation_error" || !strings.Contains(a.Message, c.field) {
				t.Fatalf("got %d %s, want 400 validation_error naming %s", st, raw, c.field)
			}
		})
	}
	var a changeAck
	if st, raw := send(t, e.signedChange(t, tn, []byte(`[1,2]`)), &a); st != http.StatusBadRequest || a.Error != "validation_error" {
		t.Fatalf("non-object body: %d %s", st, raw)
	}
	if n := e.countChanges(t, tn.ID); n != 0 {
		t.Fatalf("%d changes stored from invalid deliveries", n)
	}
}

func TestChangeWebhookAuthentication(t *testing.T) {
	e := newHookEnv(t, 100)
	tn, other := e.tenant(t), e.tenant(t)
	body := changeBody(map[string]any{"service": "checkout", "kind": "deployment", "description": "release"})

	wrongSig := e.hook(t, tn.ID, "change", body)
	wrongSig.Header.Set("X-API-Key", tn.Key)
	wrongSig.Header.Set(providers.HeaderSignature, providers.Sign([]byte(other.Secret), body, ""))
	noSig := e.hook(t, tn.ID, "change", body)
	noSig.Header.Set("X-API-Key", tn.Key)
	// A valid key and signature of another tenant, sent to this tenant's path.
	otherTenant := e.signedChange(t, other, body)
	otherTenant.URL.Path = "/v1/webhooks/" + tn.ID + "/change"
	noKey := e.hook(t, tn.ID, "change", body)
	noKey.Header.Set(providers.HeaderSignature, providers.Sign([]byte(tn.Secret), body, ""))
	for name, req := range map[string]*http.Request{"wrong signature": wrongSig, "no signature": noSig, "other tenant": otherTenant, "no key": noKey} {
		var a changeAck
		if st, raw := send(t, req, &a); st != http.StatusUnauthorized || a.Error != "unauthorized" {
			t.Errorf("%s: %d %s, want 401", name, st, raw)
		}
	}
	if e.countChanges(t, tn.ID)+e.countChanges(t, other.ID) != 0 {
		t.Fatal("a refused delivery stored a change")
	}

	// A timestamped signature is accepted once; sent again without its own id it
	// is a replay.
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	stamped := func() *http.Request {
		r := e.hook(t, tn.ID, "change", body)
		r.Header.Set("Authorization", "Bearer "+tn.Key)
		r.Header.Set(providers.HeaderTimestamp, ts)
		r.Header.Set(providers.HeaderSignature, "sha256="+providers.Sign([]byte(tn.Secret), body, ts))
		return r
	}
	if st, raw := send(t, stamped(), nil); st != http.StatusAccepted {
		t.Fatalf("timestamped: %d %s", st, raw)
	}
	if st, raw := send(t, stamped(), nil); st != http.StatusUnauthorized {
		t.Fatalf("replayed: %d %s", st, raw)
	}

	// Another tenant sees neither the change nor its count.
	var page struct {
		Items []any `json:"items"`
		Count int   `json:"count"`
	}
	if st, raw := e.do(t, "GET", "/v1/changes", other.Token, nil, &page); st != http.StatusOK || page.Count != 0 || len(page.Items) != 0 {
		t.Fatalf("other tenant's list: %d %s", st, raw)
	}
	if st, _ := e.do(t, "GET", "/v1/changes", "", nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("unauthenticated list: %d", st)
	}
}

func TestListChangesFiltersAndPages(t *testing.T) {
	e := newHookEnv(t, 100)
	tn := e.tenant(t)
	for i, svc := range []string{"checkout", "search", "checkout", "checkout"} {
		body := changeBody(map[string]any{"service": svc, "kind": "deployment", "description": "release " + strconv.Itoa(i),
			"startedAt": time.Date(2025, 6, 2, 10+i, 0, 0, 0, time.UTC).Format(time.RFC3339)})
		if st, raw := send(t, e.signedChange(t, tn, body), nil); st != http.StatusAccepted {
			t.Fatalf("record %d: %d %s", i, st, raw)
		}
	}
	type pageT struct {
		Items  []struct{ ChangeID, Service, Description string } `json:"items"`
		Cursor *string                                           `json:"cursor"`
		Count  int                                               `json:"count"`
	}
	var p1, p2 pageT
	if st, raw := e.do(t, "GET", "/v1/changes?service=checkout&limit=2", tn.Token, nil, &p1); st != http.StatusOK || p1.Count != 3 || len(p1.Items) != 2 || p1.Cursor == nil {
		t.Fatalf("page 1: %d %s", st, raw)
	}
	if p1.Items[0].Description != "release 3" || p1.Items[1].Description != "release 2" {
		t.Fatalf("page 1 order: %+v", p1.Items)
	}
	if st, raw := e.do(t, "GET", "/v1/changes?service=checkout&limit=2&cursor="+url.QueryEscape(*p1.Cursor), tn.Token, nil, &p2); st != http.StatusOK || len(p2.Items) != 1 || p2.Cursor != nil || p2.Items[0].Description != "release 0" {
		t.Fatalf("page 2: %d %s", st, raw)
	}
	var since pageT
	if st, raw := e.do(t, "GET", "/v1/changes?since=2025-06-02T11:30:00Z", tn.Token, nil, &since); st != http.StatusOK || since.Count != 2 {
		t.Fatalf("since: %d %s", st, raw)
	}
	var bad changeAck
	if st, _ := e.do(t, "GET", "/v1/changes?since=last-week", tn.Token, nil, &bad); st != http.StatusBadRequest || !strings.Contains(bad.Message, "since") {
		t.Fatalf("bad since: %d %+v", st, bad)
	}
	if st, _ := e.do(t, "GET", "/v1/changes?limit=500", tn.Token, nil, &bad); st != http.StatusBadRequest || !strings.Contains(bad.Message, "limit") {
		t.Fatalf("bad limit: %d %+v", st, bad)
	}
	if st, _ := e.do(t, "GET", "/v1/changes?service=search&cursor="+url.QueryEscape(*p1.Cursor), tn.Token, nil, &bad); st != http.StatusBadRequest {
		t.Fatalf("cursor of another query: %d %+v", st, bad)
	}
}

// githubDelivery is a deployment_status delivery as GitHub sends it: the key in
// the URL (a GitHub hook cannot set headers) and X-Hub-Signature-256.
func (e *hookEnv) githubDelivery(tb testing.TB, t tenant, event, secret string, body []byte) *http.Request {
	req := e.hook(tb, t.ID, "github", body)
	req.URL.RawQuery = "apiKey=" + url.QueryEscape(t.Key)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	return req
}

// deploymentStatus is a deployment_status event in GitHub's documented shape.
func deploymentStatus(state, statusAt string) []byte {
	return []byte(`{
  "action": "created",
  "deployment_status": {
    "url": "https://api.github.com/repos/acme/checkout/deployments/1234/statuses/9",
    "id": 9, "node_id": "DES_kwDOA", "state": "` + state + `", "description": "Deployed by Actions",
    "environment": "production", "target_url": "https://github.com/acme/checkout/actions/runs/55",
    "log_url": "https://github.com/acme/checkout/actions/runs/55", "environment_url": "https://checkout.example.com",
    "created_at": "` + statusAt + `", "updated_at": "` + statusAt + `",
    "creator": {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"},
    "deployment_url": "https://api.github.com/repos/acme/checkout/deployments/1234",
    "repository_url": "https://api.github.com/repos/acme/checkout"
  },
  "deployment": {
    "url": "https://api.github.com/repos/acme/checkout/deployments/1234",
    "id": 1234, "node_id": "DE_kwDOA", "task": "deploy", "original_environment": "production",
    "environment": "production", "description": null, "production_environment": true, "transient_environment": false,
    "sha": "a84d88e7554fc1fa21bcbc4efae3c782a70d2b9d", "ref": "v3.2.0",
    "payload": {"service": "checkout-api"},
    "created_at": "2025-06-02T14:00:00Z", "updated_at": "2025-06-02T14:00:00Z",
    "creator": {"login": "octocat", "id": 1, "type": "User"},
    "statuses_url": "https://api.github.com/repos/acme/checkout/deployments/1234/statuses",
    "repository_url": "https://api.github.com/repos/acme/checkout"
  },
  "repository": {"id": 35129377, "name": "checkout", "full_name": "acme/checkout", "private": true},
  "sender": {"login": "octocat", "id": 1, "type": "User"}
}`)
}

func TestGitHubDeploymentStatus(t *testing.T) {
	e := newHookEnv(t, 100)
	tn, other := e.tenant(t), e.tenant(t)
	var a changeAck

	if st, raw := send(t, e.githubDelivery(t, tn, "ping", tn.Secret, []byte(`{"zen":"Design for failure.","hook_id":1}`)), &a); st != http.StatusAccepted || a.Status != "ignored" {
		t.Fatalf("ping: %d %s", st, raw)
	}
	if st, raw := send(t, e.githubDelivery(t, tn, "deployment_status", tn.Secret, deploymentStatus("queued", "2025-06-02T14:00:01Z")), &a); st != http.StatusAccepted || a.Status != "ignored" {
		t.Fatalf("queued: %d %s", st, raw)
	}
	if st, raw := send(t, e.githubDelivery(t, tn, "deployment_status", other.Secret, deploymentStatus("success", "2025-06-02T14:03:00Z")), &a); st != http.StatusUnauthorized {
		t.Fatalf("signed with another tenant's secret: %d %s", st, raw)
	}
	unsigned := e.githubDelivery(t, tn, "deployment_status", tn.Secret, deploymentStatus("success", "2025-06-02T14:03:00Z"))
	unsigned.Header.Del("X-Hub-Signature-256")
	if st, raw := send(t, unsigned, &a); st != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d %s", st, raw)
	}
	if e.countChanges(t, tn.ID) != 0 {
		t.Fatal("an ignored or refused delivery stored a change")
	}

	var started, finished changeAck
	if st, raw := send(t, e.githubDelivery(t, tn, "deployment_status", tn.Secret, deploymentStatus("in_progress", "2025-06-02T14:00:05Z")), &started); st != http.StatusAccepted || started.ChangeID == "" {
		t.Fatalf("in_progress: %d %s", st, raw)
	}
	if st, raw := send(t, e.githubDelivery(t, tn, "deployment_status", tn.Secret, deploymentStatus("success", "2025-06-02T14:03:00Z")), &finished); st != http.StatusOK || finished.ChangeID != started.ChangeID {
		t.Fatalf("success of the same deployment: %d %s", st, raw)
	}
	c, err := e.store.ChangeBySource(context.Background(), tn.ID, "github:acme/checkout:deployment:1234")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != started.ChangeID || c.Service != "checkout-api" || c.Kind != "deployment" || c.Environment != "production" ||
		c.Version != "v3.2.0@a84d88e7554f" || c.Author != "octocat" || c.URL != "https://github.com/acme/checkout/actions/runs/55" ||
		!c.StartedAt.Equal(time.Date(2025, 6, 2, 14, 0, 0, 0, time.UTC)) ||
		c.FinishedAt == nil || !c.FinishedAt.Equal(time.Date(2025, 6, 2, 14, 3, 0, 0, time.UTC)) ||
		!strings.Contains(c.Description, "acme/checkout v3.2.0 to production") {
		t.Fatalf("recorded change: %+v", c)
	}
	if n := e.countChanges(t, tn.ID); n != 1 {
		t.Fatalf("%d rows for one deployment", n)
	}

	// GitHub's form content type carries the same JSON in a payload field.
	form := []byte("payload=" + url.QueryEscape(string(bytes.Replace(deploymentStatus("success", "2025-06-02T15:00:00Z"), []byte(`"id": 1234`), []byte(`"id": 1235`), 1))))
	req := e.githubDelivery(t, tn, "deployment_status", tn.Secret, form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if st, raw := send(t, req, &a); st != http.StatusAccepted || a.ChangeID == "" || a.ChangeID == started.ChangeID {
		t.Fatalf("form-encoded: %d %s", st, raw)
	}
	if st, raw := send(t, e.githubDelivery(t, tn, "deployment_status", tn.Secret, []byte(`{"deployment_status":{"state":"success"},"deployment":{},"repository":{"full_name":"acme/x"}}`)), &a); st != http.StatusBadRequest || !strings.Contains(a.Message, "deployment.id") {
		t.Fatalf("no deployment id: %d %s", st, raw)
	}
	// The key GitHub must put in the URL is a credential: no log line, of a
	// delivery accepted or refused, carries it.
	if logs := e.logs.String(); strings.Contains(logs, tn.Key) || strings.Contains(logs, url.QueryEscape(tn.Key)) || !strings.Contains(logs, "/github") {
		t.Errorf("the logs of the deliveries hold the key, or no deliveries were logged:\n%s", logs)
	}
}
