package config

import (
	"errors"
	"fmt"
	"strings"
)

// The README's configuration table stands between these two lines; everything
// between them is written by SpliceSettingsTable.
const (
	readmeBegin = "<!-- settings table: written from config/settings.go by `go generate ./config`; edit the table there -->"
	readmeEnd   = "<!-- end of settings table -->"
)

// SettingsTable is the README's configuration table in Markdown: one row per
// setting with its variable, its default (and `make run`'s where it differs)
// and what it means.
func SettingsTable() string {
	var b strings.Builder
	b.WriteString("| variable | default (`make run`) | meaning |\n|---|---|---|\n")
	for _, s := range settings {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", envName(s.key), cell(s.defaultText()), cell(s.meaning()))
	}
	return b.String()
}

// SpliceSettingsTable returns readme with the text between its settings
// markers replaced by SettingsTable.
func SpliceSettingsTable(readme string) (string, error) {
	before, rest, ok := strings.Cut(readme, readmeBegin+"\n")
	if !ok {
		return "", errors.New("config: the README has no line " + readmeBegin)
	}
	_, after, ok := strings.Cut(rest, readmeEnd)
	if !ok {
		return "", errors.New("config: the README has no line " + readmeEnd)
	}
	return before + readmeBegin + "\n" + SettingsTable() + readmeEnd + after, nil
}

// defaultText is the README's default column: the production default, the
// `make run` one before it where they differ, then the note.
func (s setting) defaultText() string {
	t := literal(s.def)
	if s.dev != nil {
		t = literal(s.dev) + " in `make run`, " + t + " otherwise"
	}
	if s.note != "" {
		t += " " + s.note
	}
	return t
}

// meaning is the README's meaning column: the doc line and the allowed range.
func (s setting) meaning() string {
	if s.check.allowed == "" {
		return s.doc
	}
	return s.doc + " (" + s.check.allowed + ")"
}

// literal is a default as an operator would write it; "empty" for "".
func literal(v any) string {
	if v == "" {
		return "empty"
	}
	return fmt.Sprintf("`%v`", v)
}

// cell escapes the one character that ends a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
