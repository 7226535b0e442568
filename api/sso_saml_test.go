package api_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml"
	"github.com/crewjam/saml/logger"
	"github.com/crewjam/saml/samlidp"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
)

// samlIdP is crewjam's identity provider in the test process, signing real
// assertions with a key made here, reached over HTTP.
type samlIdP struct {
	srv *httptest.Server
	idp *samlidp.Server
}

func newSAMLIdP(t *testing.T) *samlIdP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "test idp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	var h http.Handler = http.NotFoundHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL)
	idp, err := samlidp.New(samlidp.Options{URL: *base, Key: key, Signer: key, Certificate: cert, Store: &samlidp.MemoryStore{},
		Logger: logger.DefaultLogger})
	if err != nil {
		t.Fatal(err)
	}
	h = idp
	return &samlIdP{srv: srv, idp: idp}
}

func (p *samlIdP) put(t *testing.T, path, body string) {
	req, _ := http.NewRequest("PUT", p.srv.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s at the IdP: %d", path, resp.StatusCode)
	}
}

func (p *samlIdP) addUser(t *testing.T, name, email string, groups ...string) {
	raw, _ := json.Marshal(map[string]any{"password": "pw-" + name, "email": email, "groups": groups, "common_name": name})
	p.put(t, "/users/"+name, string(raw))
}

var (
	formInput  = regexp.MustCompile(`name="([A-Za-z]+)" (?:placeholder="[^"]*" )?value="([^"]*)"`)
	formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)
)

func formFields(body string) (action string, fields url.Values) {
	fields = url.Values{}
	for _, m := range formInput.FindAllStringSubmatch(body, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	if m := formAction.FindStringSubmatch(body); m != nil {
		action = html.UnescapeString(m[1])
	}
	return action, fields
}

// samlResponse drives the browser from our login through the IdP's login
// form (or its session) to the auto-posting form the IdP returns (crewjam's
// IdP answers the login with a session cookie, and the sign-on request made
// again with it), and gives
// that form's ACS address (mapped to the test server) and fields.
func (b *ssoBrowser) samlResponse(apiURL, tenantID, user string) (string, url.Values) {
	b.t.Helper()
	resp := b.get(apiURL + "/auth/sso/" + tenantID + "/login")
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("login: %d", resp.StatusCode)
	}
	ssoURL := resp.Header.Get("Location")
	resp = b.get(ssoURL)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action, fields := formFields(string(raw))
	if fields.Get("SAMLResponse") == "" {
		if fields.Get("SAMLRequest") == "" {
			b.t.Fatalf("the IdP showed neither a login form nor a response: %d %s", resp.StatusCode, raw)
		}
		fields.Set("user", user)
		fields.Set("password", "pw-"+user)
		r, err := b.c.PostForm(action, fields)
		if err != nil {
			b.t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			b.t.Fatalf("IdP login of %s: %d", user, r.StatusCode)
		}
		// Signed in at the IdP (its session cookie is in the jar), the
		// browser asks for the sign-on again and gets the posting form.
		resp = b.get(ssoURL)
		raw, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		action, fields = formFields(string(raw))
		if fields.Get("SAMLResponse") == "" {
			b.t.Fatalf("the IdP did not sign in %s: %s", user, raw)
		}
	}
	return strings.Replace(action, publicSSOBase, apiURL, 1), fields
}

func (b *ssoBrowser) post(u string, fields url.Values) (int, tokens, errorBody) {
	b.t.Helper()
	resp, err := b.c.PostForm(u, fields)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	raw, _ := json.Marshal(m)
	var tk tokens
	var eb errorBody
	_ = json.Unmarshal(raw, &tk)
	_ = json.Unmarshal(raw, &eb)
	return resp.StatusCode, tk, eb
}

func samlSettings(metadataURL string) map[string]any {
	return map[string]any{
		"type": "saml", "idpMetadataUrl": metadataURL, "roleAttribute": "eduPersonAffiliation",
		"roleMapping": map[string]string{"sre-leads": "admin", "sre": "operator"}, "defaultRole": "viewer", "enforce": false,
	}
}

// registerSP gives the IdP the tenant's service provider metadata, as an IdP
// administrator does. Without encryption the IdP sends the assertion in
// clear (still signed), so a test can see and strip its signature.
func registerSP(t *testing.T, s *apiServer, idp *samlIdP, tenantID string, encrypt bool) {
	resp, err := http.Get(s.URL + "/auth/sso/" + tenantID + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), "EntityDescriptor") {
		t.Fatalf("SP metadata: %d %s", resp.StatusCode, raw)
	}
	meta := string(raw)
	if !encrypt {
		meta = regexp.MustCompile(`(?s)<KeyDescriptor use="encryption">.*?</KeyDescriptor>`).ReplaceAllString(meta, "")
	}
	idp.put(t, "/services/"+tenantID, meta)
}

// TestSAMLSingleSignOn drives SAML 2.0 sign-in through crewjam's identity
// provider over HTTP (redirect, IdP login form, POST to our ACS): the person
// is created with the mapped role and gets working tokens; an unsigned
// response, one for another tenant's service provider (audience and
// recipient), an expired one and a replayed one are 401 and create nothing;
// malformed metadata is 400.
func TestSAMLSingleSignOn(t *testing.T) {
	cfg := apiConfig(t)
	cfg.EgressAllowPrivate = true
	cfg.PublicURL = publicSSOBase
	s := startAPI(t, cfg)
	ctx := context.Background()
	plans := identity.NewPlans(s.app.Store, cfg.PlanQuotas())
	idp := newSAMLIdP(t)
	idp.addUser(t, "alice", "alice@corp.example", "staff", "sre-leads")
	idp.addUser(t, "erin", "erin@corp.example", "sre")
	ownerA, ownerB := s.signup(t, "owner@corp.example"), s.signup(t, "owner@b.example")
	for _, id := range []string{ownerA.TenantID, ownerB.TenantID} {
		if _, err := plans.Change(ctx, id, "enterprise"); err != nil {
			t.Fatal(err)
		}
	}

	var eb errorBody
	for name, body := range map[string]map[string]any{
		"malformed xml":    {"type": "saml", "idpMetadataXml": "<EntityDescriptor", "defaultRole": "viewer"},
		"not idp metadata": {"type": "saml", "idpMetadataXml": `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"></EntityDescriptor>`, "defaultRole": "viewer"},
		"unreachable url":  {"type": "saml", "idpMetadataUrl": "http://127.0.0.1:1/metadata", "defaultRole": "viewer"},
	} {
		if st, _ := s.do(t, "PUT", "/v1/sso", ownerA.AccessToken, body, &eb); st != http.StatusBadRequest || eb.Error != "validation_error" || !strings.Contains(eb.Message, "idpMetadata") {
			t.Errorf("%s: %d %+v", name, st, eb)
		}
	}
	if st, _ := s.do(t, "GET", "/v1/sso", ownerA.AccessToken, nil, nil); st != http.StatusNotFound {
		t.Fatalf("refused metadata was stored: %d", st)
	}
	var view map[string]any
	for _, o := range []tokens{ownerA, ownerB} {
		if st, _ := s.do(t, "PUT", "/v1/sso", o.AccessToken, samlSettings(idp.srv.URL+"/metadata"), &view); st != http.StatusOK {
			t.Fatalf("configure: %d %v", st, view)
		}
		registerSP(t, s, idp, o.TenantID, o.TenantID == ownerB.TenantID)
	}
	if view["acsUrl"] != publicSSOBase+"/auth/sso/"+ownerB.TenantID+"/acs" || view["idpEntityId"] != idp.srv.URL+"/metadata" {
		t.Fatalf("view: %v", view)
	}
	var spKey string
	s.app.Store.DB().Table("sso_connections").Select("sp_key_enc").Where("tenant_id = ?", ownerA.TenantID).Row().Scan(&spKey)
	if spKey == "" || strings.Contains(spKey, "PRIVATE KEY") {
		t.Fatalf("SP key at rest: %.40q", spKey)
	}

	// Happy path.
	b := newSSOBrowser(t)
	acs, fields := b.samlResponse(s.URL, ownerA.TenantID, "alice")
	st, tk, eb := b.post(acs, fields)
	if st != http.StatusOK || tk.AccessToken == "" {
		t.Fatalf("SAML sign-in: %d %+v", st, eb)
	}
	verify := auth.NewTokens(cfg.AuthJWTSecret, cfg.AuthIssuer, cfg.AuthAudience, time.Hour, func(string) bool { return true })
	p, err := verify.Verify(tk.AccessToken)
	if err != nil || p.TenantID != ownerA.TenantID || p.Email != "alice@corp.example" || p.Roles[0] != "admin" {
		t.Fatalf("access token: %+v %v", p, err)
	}
	if st, _ := s.do(t, "GET", "/v1/incidents", tk.AccessToken, nil, nil); st != http.StatusOK {
		t.Fatalf("the SAML token does not work: %d", st)
	}
	users := s.userCount(t)

	// Replayed: the same response again.
	if st, _, eb := b.post(acs, fields); st != http.StatusUnauthorized || !strings.Contains(eb.Message, "already used") {
		t.Fatalf("replayed response: %d %+v", st, eb)
	}

	// Unsigned: the IdP's response with its signatures removed.
	acs, fields = newSSOBrowser(t).samlResponse(s.URL, ownerA.TenantID, "erin")
	xmlDoc, _ := base64.StdEncoding.DecodeString(fields.Get("SAMLResponse"))
	stripped := regexp.MustCompile(`(?s)<ds:Signature.*?</ds:Signature>`).ReplaceAllString(string(xmlDoc), "")
	if stripped == string(xmlDoc) || strings.Contains(stripped, "Signature") || !strings.Contains(stripped, "<saml:Assertion") {
		t.Fatalf("the IdP's response is not a clear signed assertion: %s", xmlDoc)
	}
	unsigned := url.Values{"SAMLResponse": {base64.StdEncoding.EncodeToString([]byte(stripped))}, "RelayState": {fields.Get("RelayState")}}
	if st, _, eb := newSSOBrowser(t).post(acs, unsigned); st != http.StatusUnauthorized {
		t.Fatalf("unsigned response: %d %+v", st, eb)
	}

	// Another audience and recipient: erin's response for tenant B's
	// service provider, posted to tenant A's ACS with A's own RelayState.
	acsB, fieldsB := newSSOBrowser(t).samlResponse(s.URL, ownerB.TenantID, "erin")
	acsA, fieldsA := newSSOBrowser(t).samlResponse(s.URL, ownerA.TenantID, "erin")
	crossed := url.Values{"SAMLResponse": {fieldsB.Get("SAMLResponse")}, "RelayState": {fieldsA.Get("RelayState")}}
	if st, _, eb := newSSOBrowser(t).post(acsA, crossed); st != http.StatusUnauthorized {
		t.Fatalf("tenant B's assertion at tenant A: %d %+v", st, eb)
	}
	if st, _, eb := newSSOBrowser(t).post(acsA, url.Values{"SAMLResponse": {fieldsB.Get("SAMLResponse")}, "RelayState": {fieldsB.Get("RelayState")}}); st != http.StatusUnauthorized {
		t.Fatalf("tenant B's flow at tenant A's ACS: %d %+v", st, eb)
	}

	// Expired: the response reaches us after its validity.
	saml.TimeNow = func() time.Time { return time.Now().Add(5 * time.Minute) }
	st, _, eb = newSSOBrowser(t).post(acsA, fieldsA)
	saml.TimeNow = time.Now
	if st != http.StatusUnauthorized {
		t.Fatalf("expired response: %d %+v", st, eb)
	}
	if s.userCount(t) != users {
		t.Fatalf("refused responses created %d users", s.userCount(t)-users)
	}

	// The untouched response for B still signs erin in, into B only.
	st, tkB, eb := newSSOBrowser(t).post(acsB, fieldsB)
	if pB, _ := verify.Verify(tkB.AccessToken); st != http.StatusOK || pB.TenantID != ownerB.TenantID || pB.Roles[0] != "operator" {
		t.Fatalf("tenant B sign-in: %d %+v %+v", st, pB, eb)
	}
	var listed struct{ Users []struct{ Email string } }
	s.do(t, "GET", "/v1/users", ownerA.AccessToken, nil, &listed)
	for _, u := range listed.Users {
		if u.Email == "erin@corp.example" {
			t.Fatal("tenant A holds erin, who signed in only at tenant B")
		}
	}
}
