package ui_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The data sources section goes through the same service as the JSON API:
// the same field-by-field validation, a credential that is taken and never
// shown again, a real round trip on "Test", and manager-only changes.
func TestDataSourcesSection(t *testing.T) {
	// A Prometheus speaking its build-information endpoint, as
	// GET /api/v1/status/buildinfo answers in Prometheus 2.x and 3.x.
	var sawAuth string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = r.Header.Get("Authorization")
		if r.URL.Path != "/api/v1/status/buildinfo" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"version":"2.53.1","revision":"x","branch":"HEAD","buildUser":"root@b","buildDate":"20240710-10:43:59","goVersion":"go1.22.5"}}`))
	}))
	defer prom.Close()

	base := start(t, testConfig(t))
	v := newVisitor(t, base)
	v.signUp("Acme", "owner@acme.test")
	tok := v.csrf("/ui/settings/data-sources")

	// Bad input: answered in place, the typed fields kept, the secret not.
	bad := v.post("/ui/settings/data-sources", url.Values{"csrf": {tok}, "name": {"metrics"}, "type": {"graphite"},
		"url": {prom.URL}, "bearerToken": {"tok-secret-1"}})
	if bad.status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(bad.body), "type") ||
		!strings.Contains(bad.body, `value="metrics"`) || strings.Contains(bad.body, "tok-secret-1") {
		t.Fatalf("unknown type: %d %.400s", bad.status, bad.body)
	}
	if page := v.get("/ui/settings/data-sources"); strings.Contains(page.body, `data-source="ds_`) {
		t.Fatal("a refused source was stored")
	}

	good := v.post("/ui/settings/data-sources", url.Values{"csrf": {tok}, "name": {"prod-prometheus"}, "type": {"prometheus"},
		"url": {prom.URL}, "bearerToken": {"tok-secret-1"}})
	if good.status != http.StatusSeeOther {
		t.Fatalf("create: %d %.400s", good.status, good.body)
	}
	page := v.get("/ui/settings/data-sources")
	id := regexp.MustCompile(`data-source="(ds_[^"]+)"`).FindStringSubmatch(page.body)
	if id == nil || !strings.Contains(page.body, "prod-prometheus") || strings.Contains(page.body, "tok-secret-1") {
		t.Fatalf("list after create: %.600s", page.body)
	}

	tested := v.post("/ui/settings/data-sources/"+id[1]+"/test", url.Values{"csrf": {tok}})
	if tested.status != http.StatusOK || !strings.Contains(tested.body, "Prometheus 2.53.1 answered") || sawAuth != "Bearer tok-secret-1" {
		t.Fatalf("test: %d auth %q %.400s", tested.status, sawAuth, tested.body)
	}
	if strings.Contains(tested.body, "tok-secret-1") {
		t.Fatal("the test answer shows the credential")
	}

	// A viewer sees the list but neither the form nor the buttons, and a
	// hand-made request is refused.
	viewer := newVisitor(t, base)
	if a := viewer.signIn(apiUser(t, base, "owner@acme.test", "viewer")); a.status != http.StatusSeeOther {
		t.Fatalf("viewer signs in: %d", a.status)
	}
	vp := viewer.get("/ui/settings/data-sources")
	if vp.status != http.StatusOK || !strings.Contains(vp.body, "prod-prometheus") || strings.Contains(vp.body, `action="/ui/settings/data-sources"`) ||
		strings.Contains(vp.body, "/delete") {
		t.Fatalf("viewer's page: %d %.400s", vp.status, vp.body)
	}
	vtok := csrfField.FindStringSubmatch(vp.body)[1]
	if a := viewer.post("/ui/settings/data-sources/"+id[1]+"/delete", url.Values{"csrf": {vtok}}); a.status != http.StatusForbidden {
		t.Fatalf("viewer deletes: %d", a.status)
	}

	if a := v.post("/ui/settings/data-sources/"+id[1]+"/delete", url.Values{"csrf": {tok}}); a.status != http.StatusSeeOther {
		t.Fatalf("delete: %d", a.status)
	}
	if page := v.get("/ui/settings/data-sources"); strings.Contains(page.body, id[1]) {
		t.Fatal("the deleted source is still listed")
	}
}
