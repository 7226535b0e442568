// Package clip cuts text to a byte budget without splitting a character:
// PostgreSQL refuses invalid UTF-8, and a reader should see where text was
// cut.
package clip

import "unicode/utf8"

// To returns s cut to at most n bytes on a rune boundary, with "…" marking
// a cut.
func To(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
