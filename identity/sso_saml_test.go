package identity

import "testing"

// TestOneAssertion: a SAML response passes only with exactly one assertion,
// clear or encrypted, wherever in the document the others would hide.
func TestOneAssertion(t *testing.T) {
	const (
		open  = `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">`
		end   = `</samlp:Response>`
		clear = `<saml:Assertion ID="a1"><saml:Subject/></saml:Assertion>`
	)
	for _, c := range []struct {
		name, doc string
		ok        bool
	}{
		{"one assertion", open + clear + end, true},
		{"one encrypted assertion", open + `<saml:EncryptedAssertion><x/></saml:EncryptedAssertion>` + end, true},
		{"a default-namespace assertion", `<Response xmlns="urn:oasis:names:tc:SAML:2.0:protocol"><Assertion xmlns="urn:oasis:names:tc:SAML:2.0:assertion" ID="a1"/></Response>`, true},
		{"none", open + end, false},
		{"two side by side", open + clear + `<saml:Assertion ID="a2"/>` + end, false},
		{"one clear, one encrypted", open + clear + `<saml:EncryptedAssertion/>` + end, false},
		{"a second wrapped in Extensions", open + `<samlp:Extensions>` + clear + `</samlp:Extensions><saml:Assertion ID="a2"/>` + end, false},
		{"a second inside the first", open + `<saml:Assertion ID="a1"><saml:Advice><saml:Assertion ID="a2"/></saml:Advice></saml:Assertion>` + end, false},
		{"an Assertion of another namespace does not count", open + clear + `<x:Assertion xmlns:x="urn:example:other"/>` + end, true},
		{"not XML", "<samlp:Response", false},
	} {
		if err := oneAssertion([]byte(c.doc)); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
