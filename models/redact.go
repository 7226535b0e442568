package models

import "strings"

// Redacted replaces a masked param value, so clients still see that a value
// is set without seeing what it is.
const Redacted = "[redacted]"

// sensitiveKeyParts name params whose values are credentials wherever they
// appear in a step's params.
var sensitiveKeyParts = []string{"token", "secret", "password", "authorization"}

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
	return v
}

func sensitiveKey(k string) bool {
	k = strings.ToLower(k)
	for _, part := range sensitiveKeyParts {
		if strings.Contains(k, part) {
			return true
		}
	}
	return false
}
