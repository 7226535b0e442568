package providers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of our own signing scheme.
const (
	HeaderSignature = "X-Webhook-Signature"
	HeaderTimestamp = "X-Webhook-Timestamp"
)

// MaxClockSkew bounds how far a signed timestamp may be from the server clock, in either direction; it
// matches Stripe and Standard Webhooks so tenants reuse what they know.
const MaxClockSkew = 300 * time.Second

// VerifyHMAC checks our X-Webhook-Signature scheme: sigHeader is hex HMAC-SHA256(secret, body), bare or
// "sha256="-prefixed, hex in either case. When tsHeader (X-Webhook-Timestamp, unix seconds) is non-empty the
// signed string is "<ts>.<body>" and ts must be within MaxClockSkew of now, which bounds replays. It is
// exported because API-key management and docs verify the same scheme. Errors wrap ErrUnauthenticated.
func VerifyHMAC(secret, body []byte, sigHeader, tsHeader string, now time.Time) error {
	tsHeader = strings.TrimSpace(tsHeader)
	msg := body
	if tsHeader != "" {
		if err := checkTimestamp(tsHeader, now); err != nil {
			return err
		}
		msg = prefixed(tsHeader, ".", body)
	}
	return checkHexMAC(secret, msg, []string{sigHeader})
}

// Sign produces the bare hex signature VerifyHMAC accepts; ts may be "" for an untimestamped signature.
// Tests, docs and the dashboard's "send test alert" use it.
func Sign(secret, body []byte, ts string) string {
	msg := body
	if ts != "" {
		msg = prefixed(ts, ".", body)
	}
	return hex.EncodeToString(mac(secret, msg))
}

func mac(secret, msg []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(msg)
	return h.Sum(nil)
}

func prefixed(ts, sep string, body []byte) []byte {
	out := make([]byte, 0, len(ts)+len(sep)+len(body))
	out = append(out, ts...)
	out = append(out, sep...)
	return append(out, body...)
}

// checkTimestamp accepts only plain unix seconds within MaxClockSkew of now.
func checkTimestamp(ts string, now time.Time) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec < 0 {
		return unauthenticated("timestamp is not unix seconds")
	}
	d := now.Unix() - sec
	if d < 0 {
		d = -d
	}
	if d > int64(MaxClockSkew/time.Second) {
		return unauthenticated("timestamp outside tolerance")
	}
	return nil
}

// checkHexMAC accepts when any candidate (hex, optional "sha256=" prefix) equals HMAC-SHA256(secret, msg).
// Every candidate is compared so timing does not reveal which one matched; an empty secret never
// authenticates because anyone could compute its MAC.
func checkHexMAC(secret, msg []byte, candidates []string) error {
	if len(secret) == 0 {
		return unauthenticated("no webhook secret configured")
	}
	want := mac(secret, msg)
	ok := false
	for _, c := range candidates {
		c = strings.TrimSpace(c)
		if len(c) >= 7 && strings.EqualFold(c[:7], "sha256=") {
			c = c[7:]
		}
		got, err := hex.DecodeString(c)
		if err != nil || len(got) != sha256.Size {
			continue
		}
		if hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return unauthenticated("signature mismatch")
	}
	return nil
}

// headerPresent distinguishes an absent header from one sent empty, so an empty signature fails instead
// of being treated as "not signed".
func headerPresent(h http.Header, name string) bool {
	return len(h.Values(name)) > 0
}

// verifyOurs checks X-Webhook-Signature (with optional X-Webhook-Timestamp), requiring it to be present.
func verifyOurs(r Request, secret []byte, now time.Time) error {
	if !headerPresent(r.Header, HeaderSignature) {
		return unauthenticated("missing %s", HeaderSignature)
	}
	return VerifyHMAC(secret, r.Body, r.Header.Get(HeaderSignature), r.Header.Get(HeaderTimestamp), now)
}

// ReplayToken identifies a delivery whose signature covers a timestamp (our X-Webhook-Timestamp scheme,
// Grafana's timestamped signature): within the timestamp's window the same token means the same signed
// request sent again. ok is false for deliveries without such a signature, and for providers whose Verify
// checks only their own scheme; nothing bounds their replay but deduplication. Call it only after p's
// Verify accepted r.
func ReplayToken(p Provider, r Request) (token string, ok bool) {
	switch p.(type) {
	case *PagerDuty, *Sentry, *SNS:
		return "", false
	}
	pairs := [][2]string{{HeaderTimestamp, HeaderSignature}, {HeaderGrafanaTimestamp, HeaderGrafanaSignature}}
	for _, p := range pairs {
		ts, sig := strings.TrimSpace(r.Header.Get(p[0])), strings.TrimSpace(r.Header.Get(p[1]))
		if ts != "" && sig != "" {
			sig = strings.ToLower(strings.TrimPrefix(strings.ToLower(sig), "sha256="))
			return p[0] + ":" + ts + ":" + sig, true
		}
	}
	return "", false
}

// ReplayWindow is how long a replay token must be remembered: a timestamp is accepted up to
// MaxClockSkew either side of the server clock.
const ReplayWindow = 2 * MaxClockSkew
