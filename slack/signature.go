package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// MaxRequestAge is how far a request's X-Slack-Request-Timestamp may be from
// now, either way; older requests are replays.
const MaxRequestAge = 5 * time.Minute

// Signature verification failures. The endpoint answers all of them with the
// same 401, so a caller learns nothing about which part was wrong.
var (
	ErrBadTimestamp = errors.New("slack request timestamp is missing or outside the 5-minute window")
	ErrBadSignature = errors.New("slack request signature does not match")
)

// Sign is Slack's v0 signature of body sent at ts: "v0=" + hex HMAC-SHA256 of
// "v0:{ts}:{body}" with the app's signing secret.
func Sign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a request's X-Slack-Request-Timestamp (ts) and
// X-Slack-Signature (sig) against body, at now.
func Verify(secret, ts, sig string, body []byte, now time.Time) error {
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	if age := now.Sub(time.Unix(secs, 0)); age > MaxRequestAge || age < -MaxRequestAge {
		return ErrBadTimestamp
	}
	if !strings.HasPrefix(sig, "v0=") || !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(sig)) {
		return ErrBadSignature
	}
	return nil
}
