package api_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/promlab"
	"github.com/causeway/causeway/internal/testenv"
	"github.com/causeway/causeway/models"
)

type dataSourceBody struct {
	DataSourceID string         `json:"dataSourceId"`
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	URL          string         `json:"url"`
	Settings     map[string]any `json:"settings"`
	Auth         *string        `json:"auth"`
	Status       string         `json:"status"`
	CreatedAt    string         `json:"createdAt"`
}

func TestDataSourcesAPI(t *testing.T) {
	prom := testenv.Prometheus(t, promlab.Healthy(promlab.Target{Service: "checkout", Namespace: "shop", Endpoint: "https://checkout.example", ConsumerGroup: "c"}))
	s := startAPI(t, apiConfig(t))
	tk := s.signup(t, "owner@example.com")
	other := s.signup(t, "other@example.com")

	var e errorBody
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "g", "type": "graphite", "url": "http://127.0.0.1:8080"}, "type"},
		{map[string]any{"name": "l", "type": "loki", "url": "http://127.0.0.1:3100", "settings": map[string]any{"serviceLabel": "no such"}}, "settings.serviceLabel"},
		{map[string]any{"name": "e", "type": "elasticsearch", "url": "http://127.0.0.1:9200", "settings": map[string]any{"index": "../_all"}}, "settings.index"},
		{map[string]any{"name": "k", "type": "kubernetes", "url": "https://127.0.0.1:6443", "settings": map[string]any{"caBundle": "x"}}, "settings.caBundle"},
		{map[string]any{"name": "p", "type": "prometheus", "url": "not a url"}, "url"},
		{map[string]any{"name": "p", "type": "prometheus", "url": "http://10.1.2.3:9090"}, "url"},
		{map[string]any{"name": "p", "type": "prometheus", "url": prom.URL, "auth": map[string]any{"username": "admin"}}, "auth.password"},
		{map[string]any{"name": "p", "type": "prometheus", "url": prom.URL, "auth": map[string]any{"token": "x"}}, "auth"},
		{map[string]any{"name": "p", "type": "prometheus", "url": prom.URL, "auth": "x"}, "auth"},
		{map[string]any{"name": "p", "type": "prometheus", "url": prom.URL, "settings": []string{"x"}}, "settings"},
		{map[string]any{"type": "prometheus", "url": prom.URL}, "name"},
	} {
		st, _ := s.do(t, "POST", "/v1/datasources", tk.AccessToken, c.body, &e)
		if st != 400 || e.Error != "validation_error" || !strings.HasPrefix(e.Message, c.field+" ") {
			t.Errorf("%v: %d %+v, want a validation_error naming %s", c.body, st, e, c.field)
		}
	}
	var n int64
	s.app.Store.DB().Model(&models.DataSource{}).Count(&n)
	if n != 0 {
		t.Fatalf("refused sources were stored: %d", n)
	}

	var created dataSourceBody
	st, _ := s.do(t, "POST", "/v1/datasources", tk.AccessToken, map[string]any{
		"name": "prod metrics", "type": "prometheus", "url": prom.URL,
		"auth": map[string]any{"bearerToken": "tok-very-secret-1234"}, "settings": map[string]any{"serviceLabel": "app"},
	}, &created)
	if st != 201 || created.DataSourceID == "" || created.Status != "active" || created.Type != "prometheus" ||
		created.URL != prom.URL || created.Auth == nil || *created.Auth != "set" || created.Settings["serviceLabel"] != "app" || created.CreatedAt == "" {
		t.Fatalf("create: %d %+v", st, created)
	}
	var stored models.DataSource
	s.app.Store.DB().Where("id = ?", created.DataSourceID).Take(&stored)
	if stored.AuthEnc == "" || strings.Contains(stored.AuthEnc, "tok-very-secret") {
		t.Fatalf("credential not sealed at rest: %q", stored.AuthEnc)
	}
	var pg dataSourceBody
	if st, _ := s.do(t, "POST", "/v1/datasources", tk.AccessToken, map[string]any{
		"name": "orders db", "type": "postgres", "url": "postgres://monitor:pg-pass-5678@127.0.0.1:6543/orders?sslmode=disable",
	}, &pg); st != 201 || pg.URL != "postgres://monitor:****@127.0.0.1:6543/orders?sslmode=disable" || pg.Auth == nil {
		t.Fatalf("postgres source: %d %+v", st, pg)
	}
	var probe dataSourceBody
	if st, _ := s.do(t, "POST", "/v1/datasources", tk.AccessToken, map[string]any{
		"name": "edge", "type": "probe", "settings": map[string]any{"targets": []string{"127.0.0.1:2"}},
	}, &probe); st != 201 || probe.Auth != nil {
		t.Fatalf("probe source: %d %+v", st, probe)
	}

	var list struct {
		DataSources []map[string]any `json:"dataSources"`
	}
	raw := s.raw(t, "GET", "/v1/datasources", tk.AccessToken)
	if strings.Contains(raw, "tok-very-secret") || strings.Contains(raw, "pg-pass-5678") {
		t.Fatalf("the list shows a credential: %s", raw)
	}
	if st, _ := s.do(t, "GET", "/v1/datasources", tk.AccessToken, nil, &list); st != 200 || len(list.DataSources) != 3 {
		t.Fatalf("list: %d %+v", st, list)
	}
	if st, _ := s.do(t, "GET", "/v1/datasources", other.AccessToken, nil, &list); st != 200 || len(list.DataSources) != 0 {
		t.Fatalf("another tenant's list: %d %+v", st, list)
	}

	// The test call makes a real round trip.
	var res struct {
		OK        bool   `json:"ok"`
		LatencyMs *int64 `json:"latencyMs"`
		Message   string `json:"message"`
	}
	if st, _ := s.do(t, "POST", "/v1/datasources/"+created.DataSourceID+"/test", tk.AccessToken, nil, &res); st != 200 || !res.OK || res.LatencyMs == nil || !strings.Contains(res.Message, "Prometheus") {
		t.Fatalf("test of a live Prometheus: %d %+v", st, res)
	}
	// An unreachable target is an answer, not a 5xx.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + l.Addr().String()
	l.Close()
	var gone dataSourceBody
	s.do(t, "POST", "/v1/datasources", tk.AccessToken, map[string]any{"name": "down", "type": "prometheus", "url": down}, &gone)
	res.OK, res.Message = true, ""
	if st, _ := s.do(t, "POST", "/v1/datasources/"+gone.DataSourceID+"/test", tk.AccessToken, nil, &res); st != 200 || res.OK || !strings.Contains(res.Message, "refused") {
		t.Fatalf("test of a source that is down: %d %+v", st, res)
	}
	if st, _ := s.do(t, "POST", "/v1/datasources/"+probe.DataSourceID+"/test", tk.AccessToken, nil, &res); st != 200 || res.OK {
		t.Fatalf("test of a probe at a closed port: %d %+v", st, res)
	}

	// Another tenant's source is missing, whatever the verb.
	for _, req := range [][2]string{{"POST", "/test"}, {"DELETE", ""}} {
		if st, _ := s.do(t, req[0], "/v1/datasources/"+created.DataSourceID+req[1], other.AccessToken, nil, &e); st != 404 || e.Error != "not_found" {
			t.Errorf("other tenant %s: %d %+v", req[0], st, e)
		}
	}
	var del map[string]string
	if st, _ := s.do(t, "DELETE", "/v1/datasources/"+created.DataSourceID, tk.AccessToken, nil, &del); st != 200 || del["status"] != "deleted" || del["dataSourceId"] != created.DataSourceID {
		t.Fatalf("delete: %d %+v", st, del)
	}
	if st, _ := s.do(t, "DELETE", "/v1/datasources/"+created.DataSourceID, tk.AccessToken, nil, &e); st != 404 {
		t.Fatalf("second delete: %d", st)
	}
}

func TestDataSourcesRoles(t *testing.T) {
	s := startAPI(t, apiConfig(t))
	owner := s.signup(t, "owner@example.com")
	s.do(t, "POST", "/v1/users", owner.AccessToken, map[string]string{"email": "viewer@example.com", "password": "correct horse battery", "name": "V", "role": "viewer"}, nil)
	var viewer tokens
	s.do(t, "POST", "/auth/login", "", map[string]string{"email": "viewer@example.com", "password": "correct horse battery"}, &viewer)
	var e errorBody
	if st, _ := s.do(t, "POST", "/v1/datasources", viewer.AccessToken, map[string]any{"name": "p", "type": "probe"}, &e); st != 403 || e.Error != "forbidden" {
		t.Fatalf("viewer creating a source: %d %+v", st, e)
	}
	if st, _ := s.do(t, "GET", "/v1/datasources", viewer.AccessToken, nil, nil); st != 200 {
		t.Fatalf("viewer listing sources: %d", st)
	}
}

// raw returns an answer's body as text.
func (s *apiServer) raw(t *testing.T, method, path, token string) string {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// The data-source allowlist is its own: private egress for webhooks and
// steps does not open loopback to data sources.
func TestDataSourceAllowlistIsNotEgressAllowPrivate(t *testing.T) {
	cfg := apiConfig(t)
	cfg.EgressAllowPrivate, cfg.DataSourceAllowedNetworks = true, ""
	s := startAPI(t, cfg)
	tk := s.signup(t, "owner@example.com")
	var e errorBody
	st, _ := s.do(t, "POST", "/v1/datasources", tk.AccessToken, map[string]any{"name": "p", "type": "prometheus", "url": "http://127.0.0.1:9090"}, &e)
	if st != 400 || e.Error != "validation_error" || !strings.Contains(e.Message, "CAUSEWAY_DATASOURCE_ALLOWED_NETWORKS") {
		t.Fatalf("loopback with private egress on but no allowed networks: %d %+v", st, e)
	}
}

// TestDataSourcesFollowTheTenantsGrant: with the dev switch off, only the
// tenant granted loopback creates a source there; its test call says the
// source refused the credential without the source's body, and says
// "blocked" once the grant is withdrawn; Causeway's own database and
// Temporal are refused to it although they sit inside its grant.
func TestDataSourcesFollowTheTenantsGrant(t *testing.T) {
	cfg := apiConfig(t)
	cfg.DataSourceGrantAll = false
	s := startAPI(t, cfg)
	granted, other := s.signup(t, "granted@example.com"), s.signup(t, "other@example.com")
	ctx := context.Background()
	if err := s.app.Store.SetTenantNetworks(ctx, granted.TenantID, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}); err != nil {
		t.Fatal(err)
	}
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("realm internal-sso.corp: token for svc-admin expired"))
	}))
	defer prom.Close()
	var e errorBody
	spec := map[string]any{"name": "prom", "type": "prometheus", "url": prom.URL}
	if st, _ := s.do(t, "POST", "/v1/datasources", other.AccessToken, spec, &e); st != 400 || e.Error != "validation_error" ||
		!strings.HasPrefix(e.Message, "url ") || !strings.Contains(e.Message, "this tenant's networks") {
		t.Fatalf("a tenant without a grant: %d %+v", st, e)
	}
	var created dataSourceBody
	if st, _ := s.do(t, "POST", "/v1/datasources", granted.AccessToken, spec, &created); st != 201 {
		t.Fatalf("the granted tenant: %d", st)
	}
	var res struct {
		OK      bool   `json:"ok"`
		Message string `json:"message"`
	}
	if st, _ := s.do(t, "POST", "/v1/datasources/"+created.DataSourceID+"/test", granted.AccessToken, nil, &res); st != 200 || res.OK ||
		res.Message != "HTTP 401 from the source: it refused the credential" {
		t.Fatalf("test of a refusing source: %d %+v", st, res)
	}
	if err := s.app.Store.SetTenantNetworks(ctx, granted.TenantID, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.do(t, "POST", "/v1/datasources/"+created.DataSourceID+"/test", granted.AccessToken, nil, &res); st != 200 || res.OK ||
		res.Message != "blocked: outside this tenant's networks (an operator grants them with `causeway tenant networks`)" {
		t.Fatalf("test after the grant was withdrawn: %d %+v", st, res)
	}

	// Causeway's own database (the test server) and Temporal's frontend (the
	// harness names 127.0.0.1:1) are refused inside the grant.
	if err := s.app.Store.SetTenantNetworks(ctx, granted.TenantID, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}); err != nil {
		t.Fatal(err)
	}
	db, _ := url.Parse(cfg.DatabaseURL)
	for _, own := range []map[string]any{
		{"name": "db", "type": "postgres", "url": "postgres://monitor:pw-1234@" + db.Host + "/orders"},
		{"name": "edge", "type": "probe", "settings": map[string]any{"targets": []string{"127.0.0.1:1"}}},
	} {
		if st, _ := s.do(t, "POST", "/v1/datasources", granted.AccessToken, own, &e); st != 400 || e.Error != "validation_error" ||
			!strings.Contains(e.Message, "one of Causeway's own services") {
			t.Errorf("a source at Causeway's own %v: %d %+v", own["type"], st, e)
		}
	}
}
