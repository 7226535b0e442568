package auth

import (
	"crypto/rand"
	"encoding/base64"
	"hash/crc32"
	"strings"
)

// API key layout (cw_live_ + random + checksum): the fixed prefix lets secret scanners and humans
// recognise a Causeway key, and the trailing checksum lets them (and the webhook
// endpoint) reject a mistyped or made-up key offline, without a database lookup.
const (
	APIKeyPrefix        = "cw_live_"
	apiKeyRandomLen     = 32
	apiKeyChecksumLen   = 6
	APIKeyLength        = len(APIKeyPrefix) + apiKeyRandomLen + apiKeyChecksumLen
	APIKeyDisplayChars  = 12
	WebhookSecretPrefix = "whsec_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIKey returns a fresh key: prefix, 32 random base62 characters (~190 bits),
// then the base62 CRC32 of the random part.
func NewAPIKey() string {
	random := randomBase62(apiKeyRandomLen)
	return APIKeyPrefix + random + keyChecksum(random)
}

// ValidKeyChecksum reports whether key has the API key layout and its checksum
// matches. It is a cheap filter against garbage and typos, not authentication.
func ValidKeyChecksum(key string) bool {
	if len(key) != APIKeyLength || !strings.HasPrefix(key, APIKeyPrefix) {
		return false
	}
	body := key[len(APIKeyPrefix):]
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62, body[i]) < 0 {
			return false
		}
	}
	random, sum := body[:apiKeyRandomLen], body[apiKeyRandomLen:]
	return keyChecksum(random) == sum
}

// KeyDisplayPrefix is the part of a key that may be stored and shown in plaintext
// so a tenant can tell keys apart; it reveals only a few random characters.
func KeyDisplayPrefix(key string) string {
	if len(key) < APIKeyDisplayChars {
		return key
	}
	return key[:APIKeyDisplayChars]
}

// NewWebhookSecret returns a secret in the Standard Webhooks style: "whsec_" and
// base64 of 32 random bytes.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// keyChecksum is CRC32 (IEEE) of s in fixed-width base62; 62^6 exceeds 2^32 so
// six digits always suffice.
func keyChecksum(s string) string {
	v := uint64(crc32.ChecksumIEEE([]byte(s)))
	var out [apiKeyChecksumLen]byte
	for i := apiKeyChecksumLen - 1; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out[:])
}

// randomBase62 draws n uniformly random base62 characters, rejecting bytes that
// would bias the distribution.
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic(err)
		}
		for _, b := range buf {
			if b < 248 { // 248 = 4*62: keeps b%62 uniform
				out = append(out, base62[b%62])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out)
}
