package models

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted replaces a masked param value, so clients still see that a value
// is set without seeing what it is.
const Redacted = "[redacted]"

// sensitiveKeyParts name params whose values are credentials wherever they
// appear in a step's params. Keys are compared lower-cased with "-" and "_"
// removed, so api_key, Api-Key and apikey are one name.
var sensitiveKeyParts = []string{"token", "secret", "password", "passwd", "authorization", "apikey", "cookie", "dsn",
	"credential", "privatekey"}

// RedactParams returns a copy of step params fit to show any role: the
// structure (keys, nesting, list lengths) stays so an approver can see what a
// step will do, while every header value and every value under a key named
// like a credential is masked. Runbooks and remediations carry params written
// by admins, often with credentials the people reading them must not learn.
// The input is never modified.
func RedactParams(p map[string]any) map[string]any {
	if p == nil {
		return nil
	}
	return redactMap(p, false)
}

func redactMap(m map[string]any, maskAll bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		mask := maskAll || sensitiveKey(k)
		if strings.EqualFold(k, "headers") {
			if h, ok := v.(map[string]any); ok {
				out[k] = redactMap(h, true)
				continue
			}
			mask = true
		}
		out[k] = redactValue(v, mask)
	}
	return out
}

func redactValue(v any, mask bool) any {
	switch x := v.(type) {
	case map[string]any:
		return redactMap(x, mask)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return redactMap(m, mask)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, mask)
		}
		return out
	case nil:
		return nil
	}
	if mask {
		return Redacted
	}
	if s, ok := v.(string); ok {
		return RedactText(s)
	}
	return v
}

func sensitiveKey(k string) bool {
	k = strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(k))
	for _, part := range sensitiveKeyParts {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}

// urlInText finds URLs in free text (params, error messages): a scheme, "://"
// and everything up to white space or a quote.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// credentialPair finds key=value credentials outside URLs, as in a key/value
// DSN ("host=db password=…").
var credentialPair = regexp.MustCompile(`(?i)\b(password|passwd|pwd|secret|token|api[_-]?key|sslpassword)=([^\s&"']+)`)

// RedactText masks the credentials inside free text: the password of every
// URL's user-info part, every URL query parameter named like a credential, and
// key=value credentials. Step errors quote the URL of the request that failed,
// and remediation views, timeline entries and events show them to every role.
func RedactText(s string) string {
	s = urlInText.ReplaceAllStringFunc(s, redactURL)
	return credentialPair.ReplaceAllString(s, "$1="+Redacted)
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), Redacted)
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vals := range q {
			if sensitiveKey(k) || strings.EqualFold(k, "key") || strings.EqualFold(k, "sig") || strings.EqualFold(k, "signature") {
				for i := range vals {
					vals[i] = Redacted
				}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return raw
	}
	return u.String()
}

// secretsInLogs are the shapes in which credentials show up in application
// logs, beyond what RedactText finds: HTTP authorization headers (RFC 9110
// schemes), JSON and YAML fields named like credentials, JSON Web Tokens,
// AWS access key ids (AKIA/ASIA + 16, as AWS IAM issues them), PEM private
// key blocks, and GitHub and Slack tokens by their documented prefixes.
var secretsInLogs = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), Redacted},
	{regexp.MustCompile(`(?i)\b(authorization|proxy-authorization)(["']?\s*[:=]\s*["']?)(bearer|basic|token|digest)?\s*[^\s"',]+`), "$1$2$3 " + Redacted},
	{regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`), "Bearer " + Redacted},
	{regexp.MustCompile(`(?i)(["']?[a-z_-]*(?:password|passwd|secret|token|api[_-]?key|private[_-]?key|credential)[a-z_-]*["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,}&]+)`), "$1\"" + Redacted + "\""},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\b`), Redacted},
	{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), Redacted},
	{regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,})\b`), Redacted},
}

// RedactSecrets masks the credentials a log line, a pasted note or an
// alert's text may carry: everything RedactText masks, and the shapes of
// secretsInLogs. Exported scenarios pass through it, because they leave the
// tenant with whatever the logs the agents read happened to print.
func RedactSecrets(s string) string {
	s = RedactText(s)
	for _, p := range secretsInLogs {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}
