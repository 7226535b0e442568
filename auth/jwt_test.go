package auth

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const secret = "0123456789abcdef0123456789abcdef"

func validRole(r string) bool { return r == "owner" || r == "viewer" }

func TestIssueVerifyRoundTrip(t *testing.T) {
	tok := NewTokens(secret, "causeway", "causeway-api", time.Hour, validRole)
	p := Principal{UserID: "usr_1", Email: "a@example.com", TenantID: "ten_1", Roles: []string{"owner"}, SessionID: "rtf_1"}
	raw, err := tok.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.Verify(raw)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.UserID != p.UserID || got.TenantID != p.TenantID || got.Email != p.Email || got.Roles[0] != "owner" || got.SessionID != "rtf_1" {
		t.Fatalf("principal = %+v", got)
	}
}

// The table of tokens that must be refused, each minted to differ from a valid one
// in exactly one way.
func TestVerifyRejects(t *testing.T) {
	tok := NewTokens(secret, "causeway", "causeway-api", time.Hour, validRole)
	now := time.Now()
	valid := jwt.MapClaims{
		"sub": "usr_1", "email": "a@example.com", "tenant_id": "ten_1", "roles": []string{"owner"}, "sid": "rtf_1",
		"iss": "causeway", "aud": "causeway-api", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
	}
	with := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range valid {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	sign := func(c jwt.MapClaims, key string) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, valid).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, valid).SignedString([]byte(secret))
	cases := map[string]string{
		"empty":          "",
		"garbage":        "not.a.jwt",
		"bad signature":  sign(valid, "another-secret-another-secret-xx"),
		"alg none":       none,
		"alg HS512":      hs512,
		"wrong iss":      sign(with("iss", "someone-else"), secret),
		"wrong aud":      sign(with("aud", "other-api"), secret),
		"expired":        sign(with("exp", now.Add(-time.Hour).Unix()), secret),
		"no exp":         sign(with("exp", nil), secret),
		"no iat":         sign(with("iat", nil), secret),
		"no tenant_id":   sign(with("tenant_id", nil), secret),
		"empty tenant":   sign(with("tenant_id", ""), secret),
		"no sub":         sign(with("sub", nil), secret),
		"no email":       sign(with("email", nil), secret),
		"no roles":       sign(with("roles", nil), secret),
		"no session":     sign(with("sid", nil), secret),
		"empty session":  sign(with("sid", ""), secret),
		"unknown role":   sign(with("roles", []string{"superuser"}), secret),
		"no iss":         sign(with("iss", nil), secret),
		"no aud":         sign(with("aud", nil), secret),
		"issued in 2099": sign(with("iat", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).Unix()), secret),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := tok.Verify(raw); err != ErrUnauthorized {
				t.Fatalf("Verify = %v, want ErrUnauthorized", err)
			}
		})
	}
}

func TestSignerRejectsTamperingAndExpiry(t *testing.T) {
	s := NewSigner(secret, "cursor")
	tok, err := s.Seal(map[string]string{"a": "inc_1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := s.Open(tok, &out); err != nil || out["a"] != "inc_1" {
		t.Fatalf("Open = %v %v", out, err)
	}
	tampered := "x" + tok[1:]
	if err := s.Open(tampered, &out); err != ErrTokenInvalid {
		t.Fatalf("tampered: %v", err)
	}
	if err := NewSigner(secret, "oauth-state").Open(tok, &out); err != ErrTokenInvalid {
		t.Fatalf("other purpose: %v", err)
	}
	s.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if err := s.Open(tok, &out); err != ErrTokenExpired {
		t.Fatalf("expired: %v", err)
	}
}

func TestSealerRoundTripAndBinding(t *testing.T) {
	s, err := NewSealer("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		t.Fatal(err)
	}
	enc := s.Encrypt([]byte("whsec"), []byte("key_1"))
	if got, err := s.Decrypt(enc, []byte("key_1")); err != nil || string(got) != "whsec" {
		t.Fatalf("Decrypt = %q %v", got, err)
	}
	if _, err := s.Decrypt(enc, []byte("key_2")); err == nil {
		t.Fatal("ciphertext moved to another row must not decrypt")
	}
}
