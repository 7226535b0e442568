package analyzer

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// prefilter is a set of lower-case literals at least one of which must occur in
// a line for a pattern to match; nil means the pattern has no such literal.
// It lets the agents skip most (line, rule) pairs without running the regexp.
type prefilter []string

func (p prefilter) mayMatch(lower string) bool {
	if p == nil {
		return true
	}
	for _, s := range p {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

func newPrefilter(r *regexp.Regexp) prefilter {
	t, err := syntax.Parse(r.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	return required(t.Simplify())
}

func required(t *syntax.Regexp) prefilter {
	switch t.Op {
	case syntax.OpLiteral:
		return prefilter{strings.ToLower(string(t.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
	case syntax.OpConcat:
		var best prefilter
		bestLen := 0
		for _, s := range t.Sub {
			p := required(s)
			if p == nil {
				continue
			}
			if l := minLen(p); l > bestLen {
				best, bestLen = p, l
			}
		}
		return best
	case syntax.OpAlternate:
		var out prefilter
		for _, s := range t.Sub {
			p := required(s)
			if p == nil {
				return nil
			}
			out = append(out, p...)
		}
		return out
	}
	return nil
}

func minLen(p prefilter) int {
	m := 1 << 30
	for _, s := range p {
		m = min(m, utf8.RuneCountInString(s))
	}
	return m
}
