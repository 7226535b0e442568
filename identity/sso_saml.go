package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"

	"github.com/causeway/causeway/errcode"
)

// maxMetadataBytes bounds identity provider metadata, given or fetched.
const maxMetadataBytes = 1 << 20

// samlRelay is the RelayState of a SAML sign-in: the tenant and the id of
// our AuthnRequest, signed, so the ACS accepts only an answer to a request
// it made for that tenant.
type samlRelay struct {
	Tenant    string `json:"t"`
	RequestID string `json:"r"`
}

func spKeyAAD(tenantID string) []byte { return []byte("sso-saml-sp-key/" + tenantID) }

// configureSAML reads the identity provider's metadata (fetched through the
// egress guard, or given inline), insists on a signing certificate and a
// redirect-binding sign-on endpoint, and makes the tenant's service provider
// key and certificate.
func (s *SSO) configureSAML(ctx context.Context, c *SSOConnection, in SSOInput) error {
	raw, field := []byte(in.IDPMetadataXML), "idpMetadataXml"
	switch {
	case in.IDPMetadataURL != "" && in.IDPMetadataXML != "":
		return errcode.Invalid("give idpMetadataUrl or idpMetadataXml, not both")
	case in.IDPMetadataURL != "":
		field = "idpMetadataUrl"
		u, err := s.checkURL(field, in.IDPMetadataURL)
		if err != nil {
			return err
		}
		if raw, err = s.fetchMetadata(ctx, u); err != nil {
			return errcode.Invalid("idpMetadataUrl: the metadata could not be fetched (%s)", err)
		}
	case len(raw) == 0:
		return errcode.Invalid("idpMetadataUrl or idpMetadataXml is required")
	case len(raw) > maxMetadataBytes:
		return errcode.Invalid("idpMetadataXml is larger than 1 MiB")
	}
	if _, err := idpDescriptor(raw); err != nil {
		return errcode.Invalid("%s: %s", field, err)
	}
	key, certPEM, err := newSPKey(c.TenantID, s.now())
	if err != nil {
		return err
	}
	c.IDPMetadataURL, c.IDPMetadataXML, c.SPCertPEM = in.IDPMetadataURL, string(raw), certPEM
	c.SPKeyEnc = s.sealer.Encrypt(key, spKeyAAD(c.TenantID))
	return nil
}

func (s *SSO) fetchMetadata(ctx context.Context, u *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("unreachable")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
}

// idpDescriptor parses metadata and checks it describes a usable identity
// provider.
func idpDescriptor(raw []byte) (*saml.EntityDescriptor, error) {
	ed, err := samlsp.ParseMetadata(raw)
	if err != nil {
		return nil, fmt.Errorf("not SAML 2.0 metadata")
	}
	if ed.EntityID == "" || len(ed.IDPSSODescriptors) == 0 {
		return nil, fmt.Errorf("no identity provider (IDPSSODescriptor with an entityID) in the metadata")
	}
	signing, redirect := false, false
	for _, d := range ed.IDPSSODescriptors {
		for _, kd := range d.KeyDescriptors {
			if kd.Use == "" || kd.Use == "signing" {
				for _, c := range kd.KeyInfo.X509Data.X509Certificates {
					if c.Data != "" {
						signing = true
					}
				}
			}
		}
		for _, ep := range d.SingleSignOnServices {
			if ep.Binding == saml.HTTPRedirectBinding && ep.Location != "" {
				redirect = true
			}
		}
	}
	if !signing {
		return nil, fmt.Errorf("the identity provider publishes no signing certificate")
	}
	if !redirect {
		return nil, fmt.Errorf("the identity provider has no SingleSignOnService with the HTTP-Redirect binding")
	}
	return ed, nil
}

// newSPKey makes the tenant's service provider key (PKCS#8 DER) and a
// self-signed certificate for its metadata.
func newSPKey(tenantID string, now time.Time) ([]byte, string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, "", err
	}
	tpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "causeway-sp-" + tenantID},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		return nil, "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, "", err
	}
	return keyDER, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

// serviceProvider builds the tenant's SAML service provider. Its entity id is
// its metadata URL and every assertion must name it as audience.
func (s *SSO) serviceProvider(c *SSOConnection) (*saml.ServiceProvider, error) {
	ed, err := idpDescriptor([]byte(c.IDPMetadataXML))
	if err != nil {
		return nil, err
	}
	keyDER, err := s.sealer.Decrypt(c.SPKeyEnc, spKeyAAD(c.TenantID))
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode([]byte(c.SPCertPEM))
	if block == nil {
		return nil, fmt.Errorf("service provider certificate of %s is not PEM", c.TenantID)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	meta, _ := url.Parse(s.url(c.TenantID, "metadata"))
	acs, _ := url.Parse(s.url(c.TenantID, "acs"))
	sp := &saml.ServiceProvider{
		EntityID: meta.String(), Key: key.(*rsa.PrivateKey), Certificate: cert, MetadataURL: *meta, AcsURL: *acs,
		// Unspecified lets the IdP use the NameID format its administrator
		// chose (Google, for one, refuses a request for another).
		IDPMetadata: ed, AuthnNameIDFormat: saml.UnspecifiedNameIDFormat,
	}
	// An assertion without any audience restriction would pass the
	// library's default check; ours requires this service provider.
	sp.ValidateAudienceRestriction = func(a *saml.Assertion) error {
		if a.Conditions != nil {
			for _, r := range a.Conditions.AudienceRestrictions {
				if r.Audience.Value == sp.EntityID {
					return nil
				}
			}
		}
		return fmt.Errorf("assertion is not for audience %q", sp.EntityID)
	}
	return sp, nil
}

func (s *SSO) samlIDPEntityID(c *SSOConnection) string {
	if ed, err := idpDescriptor([]byte(c.IDPMetadataXML)); err == nil {
		return ed.EntityID
	}
	return ""
}

// SAMLMetadata is the tenant's service provider metadata, for the identity
// provider's administrator.
func (s *SSO) SAMLMetadata(ctx context.Context, tenantID string) ([]byte, error) {
	c, err := s.connection(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if c.Type != SSOTypeSAML {
		return nil, errcode.New(errcode.NotFound, "this tenant does not sign in with SAML")
	}
	sp, err := s.serviceProvider(c)
	if err != nil {
		return nil, err
	}
	return xml.MarshalIndent(sp.Metadata(), "", "  ")
}

func (s *SSO) samlLogin(c *SSOConnection) (LoginRedirect, error) {
	sp, err := s.serviceProvider(c)
	if err != nil {
		return LoginRedirect{}, err
	}
	req, err := sp.MakeAuthenticationRequest(sp.GetSSOBindingLocation(saml.HTTPRedirectBinding), saml.HTTPRedirectBinding, saml.HTTPPostBinding)
	if err != nil {
		return LoginRedirect{}, err
	}
	relay, err := s.relay.Seal(samlRelay{Tenant: c.TenantID, RequestID: req.ID}, ssoFlowTTL)
	if err != nil {
		return LoginRedirect{}, err
	}
	u, err := req.Redirect(relay, sp)
	if err != nil {
		return LoginRedirect{}, err
	}
	return LoginRedirect{URL: u.String()}, nil
}

// SAMLACS completes a SAML sign-in at POST /auth/sso/{tenantId}/acs. The
// RelayState must be ours for this tenant; crewjam/saml checks the XML
// signature against the provider's metadata certificate, the issuer,
// InResponseTo (our request), Destination and Recipient (this tenant's ACS)
// and the time bounds; the audience must be this tenant's service provider;
// the assertion id is spent, so a replayed response fails.
func (s *SSO) SAMLACS(ctx context.Context, tenantID, samlResponse, relayState string) (TokenPair, error) {
	var rs samlRelay
	if s.relay.Open(relayState, &rs) != nil || rs.Tenant != tenantID {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "sign-in state is invalid or expired; start again")
	}
	c, err := s.connection(ctx, tenantID)
	if err != nil {
		return TokenPair{}, err
	}
	if c.Type != SSOTypeSAML {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "this tenant does not sign in with SAML")
	}
	sp, err := s.serviceProvider(c)
	if err != nil {
		return TokenPair{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(samlResponse)
	if err != nil || len(raw) == 0 || len(raw) > maxMetadataBytes {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "SAMLResponse is missing or not base64")
	}
	if err := oneAssertion(raw); err != nil {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the SAML response failed verification (signature, audience, recipient, time bounds or request)")
	}
	a, err := sp.ParseXMLResponse(raw, []string{rs.RequestID}, sp.AcsURL)
	if err != nil {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the SAML response failed verification (signature, audience, recipient, time bounds or request)")
	}
	if a.ID == "" || a.Subject == nil || a.Subject.NameID == nil || a.Subject.NameID.Value == "" {
		return TokenPair{}, errcode.New(errcode.Unauthorized, "the SAML assertion names no subject")
	}
	until := s.now().Add(ssoFlowTTL)
	if a.Conditions != nil && a.Conditions.NotOnOrAfter.After(until) {
		until = a.Conditions.NotOnOrAfter
	}
	if err := s.consume(ctx, "saml/"+tenantID+"/"+a.ID, until.Add(saml.MaxClockSkew)); err != nil {
		return TokenPair{}, err
	}
	attrs := samlAttributes(a)
	email := first(attrs, "email", "mail", "urn:oid:0.9.2342.19200300.100.1.3", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress")
	if email == "" && strings.Contains(a.Subject.NameID.Value, "@") {
		email = a.Subject.NameID.Value
	}
	name := first(attrs, "displayName", "cn", "urn:oid:2.5.4.3", "name", "http://schemas.microsoft.com/identity/claims/displayname")
	var roles []string
	if c.RoleAttribute != "" {
		roles = attrs[c.RoleAttribute]
	}
	// SAML has no standard assertion that the IdP verified the address.
	return s.signIn(ctx, c, "saml|"+sp.IDPMetadata.EntityID+"|"+a.Subject.NameID.Value, email, false, name, roles)
}

// oneAssertion refuses a response that holds anything but exactly one
// assertion, counted wherever it sits. crewjam/saml verifies each assertion
// on its own and signs in with the first that passes, so an extra one beside
// or around the signed one is not something an identity provider sends: it
// is an attempt to have the signature cover one element while the sign-in
// reads another.
func oneAssertion(raw []byte) error {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		return fmt.Errorf("not XML")
	}
	n := 0
	for _, el := range doc.FindElements("//*") {
		if el.NamespaceURI() == samlAssertionNS && (el.Tag == "Assertion" || el.Tag == "EncryptedAssertion") {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%d assertions where one is expected", n)
	}
	return nil
}

// samlAssertionNS is the namespace of SAML 2.0 assertions.
const samlAssertionNS = "urn:oasis:names:tc:SAML:2.0:assertion"

// samlAttributes indexes an assertion's attribute values by Name and by
// FriendlyName.
func samlAttributes(a *saml.Assertion) map[string][]string {
	out := map[string][]string{}
	for _, st := range a.AttributeStatements {
		for _, at := range st.Attributes {
			for _, v := range at.Values {
				for _, k := range []string{at.Name, at.FriendlyName} {
					if k != "" {
						out[k] = append(out[k], v.Value)
					}
				}
			}
		}
	}
	return out
}

func first(attrs map[string][]string, names ...string) string {
	for _, n := range names {
		if v := attrs[n]; len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return ""
}
