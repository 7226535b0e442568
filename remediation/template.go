package remediation

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Step params are templates over the incident, but only in four forms, and no
// text/template: its functions, range and printf let a runbook render tens of
// megabytes inside the worker, and it knows nothing of where a value lands. Here
// every value lands by the rules of its place (SECURITY.md): as is in plain
// params, percent-encoded in a URL's path or query (never its scheme or host),
// and as a bind parameter in SQL.

// allowedForms is what every refusal names, so the runbook's author learns the
// whole grammar at once.
const allowedForms = `{{.Service}}, {{.Environment}}, {{.IncidentID}} and {{index .Tags "key"}}`

// placeholder is one template action found in a param string: its byte span
// and what it refers to.
type placeholder struct {
	start, end int
	field      string // Service, Environment, IncidentID or Tags
	tag        string // the key, when field is Tags
}

var tagAction = regexp.MustCompile("^index\\s+\\.Tags\\s+(\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`)$")

// placeholders finds every action in s, refusing any that is not one of the
// four allowed forms and any unclosed one.
func placeholders(s string) ([]placeholder, error) {
	var out []placeholder
	for i := 0; ; {
		open := strings.Index(s[i:], "{{")
		if open < 0 {
			return out, nil
		}
		open += i
		end := strings.Index(s[open:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("template %q has an unclosed {{", s)
		}
		end += open + 2
		p, err := parseAction(s[open+2 : end-2])
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", s, err)
		}
		p.start, p.end = open, end
		out = append(out, p)
		i = end
	}
}

func parseAction(inner string) (placeholder, error) {
	act := strings.TrimSpace(inner)
	switch act {
	case ".Service", ".Environment", ".IncidentID":
		return placeholder{field: act[1:]}, nil
	}
	if m := tagAction.FindStringSubmatch(act); m != nil {
		key, err := strconv.Unquote(m[1])
		if err == nil {
			return placeholder{field: "Tags", tag: key}, nil
		}
	}
	return placeholder{}, fmt.Errorf("{{%s}} is not allowed; step params may use only %s", inner, allowedForms)
}

// value is what p stands for in data; a missing tag is empty.
func (p placeholder) value(data TemplateData) string {
	switch p.field {
	case "Service":
		return data.Service
	case "Environment":
		return data.Environment
	case "IncidentID":
		return data.IncidentID
	}
	return data.Tags[p.tag]
}

// substitute replaces each placeholder of s with what place makes of its value.
func substitute(s string, ps []placeholder, place func(i int, p placeholder) (string, error)) (string, error) {
	var b strings.Builder
	last := 0
	for i, p := range ps {
		b.WriteString(s[last:p.start])
		v, err := place(i, p)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		last = p.end
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// renderPlain puts each value in as it is: headers (Go refuses a value with a
// line break), JSON bodies (encoded when sent) and descriptive params.
func renderPlain(s string, data TemplateData) (string, error) {
	ps, err := placeholders(s)
	if err != nil || len(ps) == 0 {
		return s, err
	}
	return substitute(s, ps, func(_ int, p placeholder) (string, error) { return p.value(data), nil })
}

// literalOrigin is a URL's scheme and authority followed by the start of its
// path or query: everything that decides where a request goes.
var literalOrigin = regexp.MustCompile(`^(?i)https?://[^/?#{}@]+[/?]`)

// urlPart says where in a URL template the placeholder at offset sits.
func urlPart(s string, offset int) string {
	before := s[:offset]
	switch {
	case strings.Contains(before, "#"):
		return "fragment"
	case strings.Contains(before, "?"):
		return "query"
	}
	return "path"
}

// checkURLTemplate refuses a URL whose scheme, credentials, host or port would
// come from an alert, or that puts an alert value in the fragment.
func checkURLTemplate(field, s string) ([]placeholder, error) {
	ps, err := placeholders(s)
	if err != nil || len(ps) == 0 {
		return ps, err
	}
	if !literalOrigin.MatchString(s[:ps[0].start]) {
		return nil, fmt.Errorf("params.%s: the scheme and host of a URL must be written out; templates may appear only in its path or query", field)
	}
	for _, p := range ps {
		if urlPart(s, p.start) == "fragment" {
			return nil, fmt.Errorf("params.%s: templates may appear only in a URL's path or query, not its fragment", field)
		}
	}
	return ps, nil
}

// renderURL percent-encodes each value for its place: a path value stays one
// segment (a "/" is encoded, "." and ".." are refused), a query value one
// parameter value.
func renderURL(field, s string, data TemplateData) (string, error) {
	ps, err := checkURLTemplate(field, s)
	if err != nil || len(ps) == 0 {
		return s, err
	}
	return substitute(s, ps, func(_ int, p placeholder) (string, error) {
		v := p.value(data)
		if urlPart(s, p.start) == "query" {
			return url.QueryEscape(v), nil
		}
		if v == "." || v == ".." {
			return "", fmt.Errorf("params.%s: the value %q cannot be used as a URL path segment", field, v)
		}
		return url.PathEscape(v), nil
	})
}

// dollarTag opens (and closes) a PostgreSQL dollar-quoted string: $$ or $name$.
var dollarTag = regexp.MustCompile(`^\$[A-Za-z_]*\$`)

// checkSQLTemplate refuses a statement in which an alert value could be read
// as SQL: a template inside a quoted string, a quoted identifier, a
// dollar-quoted body or a comment (a bind parameter means nothing there), or
// next to bind parameters the runbook wrote itself (the numbering would clash).
func checkSQLTemplate(index int, s string) ([]placeholder, error) {
	ps, err := placeholders(s)
	if err != nil || len(ps) == 0 {
		return ps, err
	}
	refuse := func(why string) error {
		return fmt.Errorf("params.statements[%d]: %s; write templates bare (they are sent as bind parameters $1, $2… in order)", index, why)
	}
	next := 0 // the next placeholder to reach
	for i := 0; i < len(s); {
		if next < len(ps) && i == ps[next].start {
			i = ps[next].end
			next++
			continue
		}
		quoted := func(end string, backslash bool) int {
			for j := i + 1; j < len(s); j++ {
				if backslash && s[j] == '\\' {
					j++
					continue
				}
				if strings.HasPrefix(s[j:], end) {
					if end == "'" && strings.HasPrefix(s[j+1:], "'") { // '' inside a string
						j++
						continue
					}
					return j + len(end)
				}
			}
			return len(s)
		}
		var skip int
		switch c := s[i]; {
		case c == '\'':
			escapes := i > 0 && (s[i-1] == 'E' || s[i-1] == 'e')
			skip = quoted("'", escapes)
		case c == '"':
			skip = quoted(`"`, false)
		case strings.HasPrefix(s[i:], "--"):
			skip = quoted("\n", false)
		case strings.HasPrefix(s[i:], "/*"):
			skip = quoted("*/", false)
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			return nil, refuse("the statement mixes templates with its own bind parameters")
		case c == '$':
			tag := dollarTag.FindString(s[i:])
			if tag == "" {
				i++
				continue
			}
			end := strings.Index(s[i+len(tag):], tag)
			skip = len(s)
			if end >= 0 {
				skip = i + len(tag) + end + len(tag)
			}
		default:
			i++
			continue
		}
		if next < len(ps) && ps[next].start < skip {
			return nil, refuse("a template sits inside a quoted string, a quoted identifier or a comment")
		}
		i = skip
	}
	return ps, nil
}

// renderSQL turns each template into the next bind parameter and returns the
// statement with the values to bind.
func renderSQL(index int, s string, data TemplateData) (string, []any, error) {
	ps, err := checkSQLTemplate(index, s)
	if err != nil || len(ps) == 0 {
		return s, []any{}, err
	}
	args := make([]any, 0, len(ps))
	out, err := substitute(s, ps, func(i int, p placeholder) (string, error) {
		args = append(args, p.value(data))
		return "$" + strconv.Itoa(i+1), nil
	})
	return out, args, err
}
