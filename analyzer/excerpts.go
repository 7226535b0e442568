package analyzer

import (
	"regexp"
	"strings"
)

// blankLine separates excerpts in pasted text.
var blankLine = regexp.MustCompile(`\n[ \t]*\n`)

// Excerpts splits supplemental context into the excerpts a person pasted. The API
// takes context as free text, and people paste several things at once — a log
// tail, a metrics table, a chat thread — separated by blank lines. Agents date and
// weigh each excerpt on its own (when did this deploy happen, relative to that
// error?), so they must see them apart, exactly as if each had been added
// separately. Line content is kept as is, so quotes still cite the input.
func Excerpts(entries []string) []string {
	var out []string
	for _, e := range entries {
		e = strings.ReplaceAll(e, "\r\n", "\n")
		for _, part := range blankLine.Split(e, -1) {
			if strings.TrimSpace(part) != "" {
				out = append(out, strings.Trim(part, "\n"))
			}
		}
	}
	return out
}
