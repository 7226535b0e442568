package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// SignStandardWebhook returns the webhook-signature header value for one
// delivery: `v1,` + base64(HMAC-SHA256(key, id.timestamp.body)), where key is the
// base64-decoded part of secret after `whsec_`.
func SignStandardWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	raw, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	if !ok {
		return "", errors.New("endpoint secret must start with " + WebhookSecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) == 0 {
		return "", errors.New("endpoint secret is not valid base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
