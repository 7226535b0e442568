package api_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/identity"
)

// samlTenant is an enterprise tenant signing in with SAML through idp, its
// service provider registered at the IdP without encryption so a test can
// read and alter the signed assertion.
func samlTenant(t *testing.T) (*apiServer, *samlIdP, tokens) {
	t.Helper()
	cfg := apiConfig(t)
	cfg.EgressAllowPrivate = true
	cfg.PublicURL = publicSSOBase
	s := startAPI(t, cfg)
	idp := newSAMLIdP(t)
	idp.addUser(t, "alice", "alice@corp.example", "staff", "sre-leads")
	idp.addUser(t, "erin", "erin@corp.example", "sre")
	owner := s.signup(t, "owner@corp.example")
	if _, err := identity.NewPlans(s.app.Store, cfg.PlanQuotas()).Change(context.Background(), owner.TenantID, "enterprise"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.do(t, "PUT", "/v1/sso", owner.AccessToken, samlSettings(idp.srv.URL+"/metadata"), nil); st != http.StatusOK {
		t.Fatalf("configure SAML: %d", st)
	}
	registerSP(t, s, idp, owner.TenantID, false)
	return s, idp, owner
}

// signedXML is the IdP's response as XML; it must hold a signed assertion in
// clear, or the test would alter nothing that matters.
func signedXML(t *testing.T, fields url.Values) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(fields.Get("SAMLResponse"))
	doc := string(raw)
	if err != nil || !strings.Contains(doc, "<saml:Assertion") || !strings.Contains(doc, "<ds:SignatureValue") {
		t.Fatalf("the IdP's response is not a clear signed assertion: %s", doc)
	}
	return doc
}

func withResponse(fields url.Values, doc string) url.Values {
	return url.Values{"SAMLResponse": {base64.StdEncoding.EncodeToString([]byte(doc))}, "RelayState": {fields.Get("RelayState")}}
}

var (
	nameID         = regexp.MustCompile(`(<saml:NameID[^>]*>)[^<]*(</saml:NameID>)`)
	emailValue     = regexp.MustCompile(`(<saml:AttributeValue[^>]*>)erin@corp\.example(</saml:AttributeValue>)`)
	groupValue     = regexp.MustCompile(`(<saml:AttributeValue[^>]*>)sre(</saml:AttributeValue>)`)
	signedAssert   = regexp.MustCompile(`(?s)<saml:Assertion .*?</saml:Assertion>`)
	assertionID    = regexp.MustCompile(`(<saml:Assertion [^>]*ID=")[^"]*(")`)
	signatureBlock = regexp.MustCompile(`(?s)<ds:Signature.*?</ds:Signature>`)
)

// mustChange applies re to doc and fails when it matched nothing, so a
// change in the IdP's output cannot turn a case into a no-op.
func mustChange(t *testing.T, doc string, re *regexp.Regexp, repl string) string {
	t.Helper()
	out := re.ReplaceAllString(doc, repl)
	if out == doc {
		t.Fatalf("%s matched nothing in %s", re, doc)
	}
	return out
}

// assertionSignedOnly removes the Response's own signature and keeps the
// assertion's, as an attacker may: crewjam/saml accepts a response whose
// assertion alone is signed, so that signature must carry the check.
func assertionSignedOnly(t *testing.T, doc string) string {
	t.Helper()
	i := strings.Index(doc, "<saml:Assertion ")
	head := signatureBlock.ReplaceAllString(doc[:i], "")
	if head == doc[:i] || !strings.Contains(doc[i:], "<ds:Signature") {
		t.Fatalf("the IdP did not sign both the response and its assertion: %s", doc)
	}
	return head + doc[i:]
}

// TestSAMLAlteredAfterSigningIsRefused: a response the IdP signed and that was
// changed afterwards (the subject, the e-mail, a group that maps to a higher
// role) is 401; so is one where an unsigned assertion for someone else is put
// next to, or in place of, the signed one, so the signature covers one
// element and the sign-in would read another. Each is tried with the
// Response's signature kept and with it removed (the assertion's alone). None
// creates a user; the same response unaltered signs erin in as the operator
// she is.
func TestSAMLAlteredAfterSigningIsRefused(t *testing.T) {
	s, _, owner := samlTenant(t)
	forge := func(doc string) string {
		evil := mustChange(t, signedAssert.FindString(doc), signatureBlock, "")
		evil = mustChange(t, evil, nameID, "${1}mallory@corp.example${2}")
		return mustChange(t, evil, assertionID, "${1}id-forged-0001${2}")
	}
	alterations := map[string]func(string) string{
		"subject changed": func(doc string) string { return mustChange(t, doc, nameID, "${1}mallory@corp.example${2}") },
		"e-mail changed":  func(doc string) string { return mustChange(t, doc, emailValue, "${1}mallory@corp.example${2}") },
		"group raised":    func(doc string) string { return mustChange(t, doc, groupValue, "${1}sre-leads${2}") },
		"unsigned assertion before the signed one": func(doc string) string {
			a := signedAssert.FindString(doc)
			return strings.Replace(doc, a, forge(doc)+a, 1)
		},
		"unsigned assertion after the signed one": func(doc string) string {
			a := signedAssert.FindString(doc)
			return strings.Replace(doc, a, a+forge(doc), 1)
		},
		"signed assertion wrapped, unsigned one in its place": func(doc string) string {
			a := signedAssert.FindString(doc)
			return strings.Replace(doc, a, forge(doc)+"<samlp:Extensions>"+a+"</samlp:Extensions>", 1)
		},
	}
	for name, alter := range alterations {
		for variant, strip := range map[string]bool{"response and assertion signed": false, "assertion signed only": true} {
			users := s.userCount(t)
			acs, fields := newSSOBrowser(t).samlResponse(s.URL, owner.TenantID, "erin")
			doc := signedXML(t, fields)
			if strip {
				doc = assertionSignedOnly(t, doc)
			}
			if st, tk, eb := newSSOBrowser(t).post(acs, withResponse(fields, alter(doc))); st != http.StatusUnauthorized || tk.AccessToken != "" {
				t.Errorf("%s, %s: %d %+v, want 401", name, variant, st, eb)
			}
			if n := s.userCount(t); n != users {
				t.Errorf("%s, %s created %d users", name, variant, n-users)
			}
		}
	}

	verify := auth.NewTokens(s.cfg.AuthJWTSecret, s.cfg.AuthIssuer, s.cfg.AuthAudience, time.Hour, func(string) bool { return true })
	acs, fields := newSSOBrowser(t).samlResponse(s.URL, owner.TenantID, "erin")
	st, tk, eb := newSSOBrowser(t).post(acs, withResponse(fields, assertionSignedOnly(t, signedXML(t, fields))))
	if p, err := verify.Verify(tk.AccessToken); st != http.StatusOK || err != nil || p.Email != "erin@corp.example" || p.Roles[0] != "operator" {
		t.Fatalf("the unaltered response, its assertion signed: %d %+v %+v %v", st, eb, p, err)
	}
}

// audienceMaker makes the IdP's usual assertion and, when audience is set,
// names that audience in its AudienceRestriction; the IdP signs it after, so
// the assertion is genuine in every other respect (issuer, recipient,
// destination, InResponseTo, time bounds).
type audienceMaker struct{ audience string }

func (m audienceMaker) MakeAssertion(req *saml.IdpAuthnRequest, session *saml.Session) error {
	if err := (saml.DefaultAssertionMaker{}).MakeAssertion(req, session); err != nil {
		return err
	}
	if m.audience != "" {
		req.Assertion.Conditions.AudienceRestrictions = []saml.AudienceRestriction{{Audience: saml.Audience{Value: m.audience}}}
	}
	return nil
}

// TestSAMLAudienceIsChecked: a correctly signed response for this tenant's
// ACS and request whose audience is another service provider is 401; the
// same flow with this tenant's service provider as audience signs in.
func TestSAMLAudienceIsChecked(t *testing.T) {
	s, idp, owner := samlTenant(t)
	ours := publicSSOBase + "/auth/sso/" + owner.TenantID + "/metadata"
	const other = "https://other-sp.example/saml/metadata"
	ourACS := publicSSOBase + "/auth/sso/" + owner.TenantID + "/acs"

	idp.idp.IDP.AssertionMaker = audienceMaker{audience: other}
	users := s.userCount(t)
	acs, fields := newSSOBrowser(t).samlResponse(s.URL, owner.TenantID, "erin")
	doc := signedXML(t, fields)
	if !strings.Contains(doc, "<saml:Audience>"+other+"</saml:Audience>") || strings.Contains(doc, "<saml:Audience>"+ours) ||
		!strings.Contains(doc, `Destination="`+ourACS+`"`) || !strings.Contains(doc, `Recipient="`+ourACS+`"`) {
		t.Fatalf("the IdP did not sign a response for our ACS with only the other audience: %s", doc)
	}
	if st, _, eb := newSSOBrowser(t).post(acs, fields); st != http.StatusUnauthorized {
		t.Fatalf("another service provider's audience: %d %+v, want 401", st, eb)
	}
	if s.userCount(t) != users {
		t.Fatal("the refused response created a user")
	}

	idp.idp.IDP.AssertionMaker = audienceMaker{}
	acs, fields = newSSOBrowser(t).samlResponse(s.URL, owner.TenantID, "erin")
	if doc := signedXML(t, fields); !strings.Contains(doc, "<saml:Audience>"+ours+"</saml:Audience>") {
		t.Fatalf("the IdP's default audience is not ours: %s", doc)
	}
	if st, tk, eb := newSSOBrowser(t).post(acs, fields); st != http.StatusOK || tk.AccessToken == "" {
		t.Fatalf("our audience: %d %+v, want 200", st, eb)
	}
}
