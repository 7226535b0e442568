package ui_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/apptest"
)

// Recent changes lists what the change webhook recorded, filtered by service
// and paged with the API's cursor; a bad cursor is answered on the page.
func TestRecentChangesSection(t *testing.T) {
	base := start(t, testConfig(t))
	v := newVisitor(t, base)
	v.signUp("Acme", "owner@acme.test")

	empty := v.get("/ui/settings/changes")
	hook := regexp.MustCompile(`<code>(http://[^<]+/v1/webhooks/[^<]+/change)</code>`).FindStringSubmatch(empty.body)
	if empty.status != http.StatusOK || hook == nil || !strings.Contains(empty.body, "No changes recorded") {
		t.Fatalf("empty section: %d %.500s", empty.status, empty.body)
	}

	var login struct{ AccessToken string }
	if st := apptest.PostJSON(t, base+"/auth/login", "", map[string]string{"email": "owner@acme.test", "password": "correct horse battery"}, &login); st != 200 {
		t.Fatalf("login: %d", st)
	}
	var key struct{ Key, WebhookSecret string }
	if st := apptest.PostJSON(t, base+"/v1/api-keys", login.AccessToken, map[string]string{"name": "ci"}, &key); st != http.StatusCreated {
		t.Fatalf("api key: %d", st)
	}
	send := func(service, version string) {
		body := []byte(fmt.Sprintf(`{"service":%q,"kind":"deployment","version":%q,"description":"release %s","author":"ci-bot"}`, service, version, version))
		m := hmac.New(sha256.New, []byte(key.WebhookSecret))
		m.Write(body)
		req, _ := http.NewRequest("POST", hook[1], bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key.Key)
		req.Header.Set("X-Webhook-Signature", hex.EncodeToString(m.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("change %s %s: %d", service, version, resp.StatusCode)
		}
	}
	for i := 1; i <= 22; i++ {
		send("checkout", fmt.Sprintf("v1.%d.0", i))
	}
	send("search", "v9.0.0")

	rows := regexp.MustCompile(`data-change="`)
	all := v.get("/ui/settings/changes")
	if n := len(rows.FindAllString(all.body, -1)); n != 20 || !strings.Contains(all.body, "v9.0.0") || !strings.Contains(all.body, "Older changes") {
		t.Fatalf("first page: %d rows, want 20 with search's release and a link to older ones", n)
	}
	only := v.get("/ui/settings/changes?service=checkout")
	if strings.Contains(only.body, "v9.0.0") || len(rows.FindAllString(only.body, -1)) != 20 {
		t.Fatal("the service filter keeps other services' changes")
	}
	next := regexp.MustCompile(`href="(/ui/settings/changes\?[^"]*cursor=[^"]+)"`).FindStringSubmatch(only.body)
	if next == nil {
		t.Fatal("no link to the next page")
	}
	older := v.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	if n := len(rows.FindAllString(older.body, -1)); n != 2 || !strings.Contains(older.body, "v1.1.0") || strings.Contains(older.body, "Older changes") {
		t.Fatalf("second page: %d rows, want the 2 oldest checkout releases", n)
	}
	if bad := v.get("/ui/settings/changes?cursor=forged"); bad.status != http.StatusBadRequest || !strings.Contains(bad.body, "cursor is invalid") {
		t.Fatalf("forged cursor: %d", bad.status)
	}
}
