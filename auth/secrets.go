package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// MinPasswordLength is the shortest password sign-up and user creation accept.
const MinPasswordLength = 10

// dummyHash is compared against when an e-mail is unknown, so login takes the same
// time whether or not the account exists.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("causeway-timing-equaliser"), bcrypt.DefaultCost)

// HashPassword returns a bcrypt hash of pw.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// CheckPassword reports whether pw matches hash. An empty hash (OAuth-only user or
// unknown e-mail) still spends a bcrypt comparison and then fails.
func CheckPassword(hash, pw string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// RandomToken returns n random bytes, base64url without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// SHA256Hex is how refresh tokens and API keys are stored: looked up by hash, never
// kept in plaintext.
func SHA256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Errors of signed opaque tokens.
var (
	ErrTokenInvalid = errors.New("token is malformed or its signature does not match")
	ErrTokenExpired = errors.New("token has expired")
)

// Signer makes opaque, tamper-proof, time-limited tokens (pagination cursors, OAuth
// state). Each use derives its own key so a cursor can never pass as OAuth state.
type Signer struct {
	key []byte
	now func() time.Time
}

// NewSigner derives a key for purpose from the master secret.
func NewSigner(master, purpose string) *Signer {
	m := hmac.New(sha256.New, []byte(master))
	m.Write([]byte("causeway/" + purpose))
	return &Signer{key: m.Sum(nil), now: time.Now}
}

type envelope struct {
	P json.RawMessage `json:"p"`
	E int64           `json:"e"`
}

// Seal encodes payload with an expiry ttl from now.
func (s *Signer) Seal(payload any, ttl time.Duration) (string, error) {
	p, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(envelope{P: p, E: s.now().Add(ttl).Unix()})
	if err != nil {
		return "", err
	}
	b := base64.RawURLEncoding.EncodeToString(body)
	return b + "." + s.mac(b), nil
}

// Open verifies token and decodes its payload into out.
func (s *Signer) Open(token string, out any) error {
	b, sig, ok := strings.Cut(token, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.mac(b))) {
		return ErrTokenInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(b)
	if err != nil {
		return ErrTokenInvalid
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return ErrTokenInvalid
	}
	if s.now().Unix() > env.E {
		return ErrTokenExpired
	}
	if err := json.Unmarshal(env.P, out); err != nil {
		return ErrTokenInvalid
	}
	return nil
}

func (s *Signer) mac(b string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(b))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sealer encrypts secrets at rest (webhook secrets) with AES-256-GCM, so a copy of
// the database alone does not reveal them.
type Sealer struct{ aead cipher.AEAD }

// NewSealer takes the 32-byte SECRETS_KEY, base64-encoded.
func NewSealer(b64Key string) (*Sealer, error) {
	key, err := base64.StdEncoding.DecodeString(b64Key)
	if err != nil || len(key) != 32 {
		return nil, errors.New("secrets key must be 32 bytes, base64-encoded")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Encrypt returns base64(nonce || ciphertext). aad binds the ciphertext to its owner
// (e.g. the key id) so it cannot be swapped onto another row.
func (s *Sealer) Encrypt(plain, aad []byte) string {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, aad))
}

// Decrypt reverses Encrypt.
func (s *Sealer) Decrypt(enc string, aad []byte) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, errors.New("sealed secret is malformed")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], aad)
	if err != nil {
		return nil, fmt.Errorf("open sealed secret: %w", err)
	}
	return plain, nil
}
