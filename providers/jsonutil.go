package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// decodeObject unmarshals a JSON object body into v, turning decoder errors into messages a client can act
// on. Content-Type is never consulted: several tools send JSON as text/plain.
func decodeObject(provider string, body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return invalid("%s: body is empty", provider)
	}
	if trimmed[0] != '{' {
		return invalid("%s: body must be a JSON object", provider)
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid("%s: field %q has %s where %s is expected", provider, te.Field, article(te.Value), jsonKind(te.Type.Kind().String()))
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return invalid("%s: body is not valid JSON", provider)
		}
		return invalid("%s: body does not match the expected %s payload shape", provider, provider)
	}
	return nil
}

// article names a JSON value kind as reported by encoding/json ("number", "array", ...).
func article(value string) string {
	switch value {
	case "array", "object":
		return "an " + value
	case "bool":
		return "a boolean"
	}
	return "a " + value
}

func jsonKind(goKind string) string {
	switch goKind {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "float64", "float32", "int", "int64", "int32", "uint", "uint64", "uint32":
		return "a number"
	}
	return "of another type"
}

var errNotScalar = errors.New("expected a string, number or boolean")

// flexString accepts a JSON string, number or boolean as text. Ids and template variables arrive quoted or
// not depending on how the tenant wrote the provider template, and rejecting either would drop alerts.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*f = ""
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
		return nil
	case '{', '[':
		return errNotScalar
	}
	if string(b) == "true" || string(b) == "false" {
		*f = flexString(b)
		return nil
	}
	if _, err := strconv.ParseFloat(string(b), 64); err != nil {
		return err
	}
	*f = flexString(b)
	return nil
}

func (f flexString) String() string { return strings.TrimSpace(string(f)) }

// stringList accepts either a JSON array of scalars or a single comma-separated string, because
// template-driven providers (Datadog $TAGS, New Relic Handlebars) produce whichever the tenant typed.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		*l = nil
		return nil
	}
	if b[0] == '[' {
		var items []flexString
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			out = append(out, it.String())
		}
		*l = out
		return nil
	}
	var s flexString
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = strings.Split(string(s), ",")
	return nil
}

// flexText accepts a string or an array of strings (New Relic renders annotations as arrays) and joins
// arrays with newlines.
type flexText string

func (t *flexText) UnmarshalJSON(b []byte) error {
	var l stringList
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		if err := l.UnmarshalJSON(b); err != nil {
			return err
		}
		*t = flexText(joinNonEmpty("\n", l...))
		return nil
	}
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = flexText(s)
	return nil
}

// stringMap reads a JSON object whose values should be strings but may be numbers or booleans (labels and
// custom properties typed by hand); nested values are rendered as compact JSON rather than rejected.
type stringMap map[string]string

func (m *stringMap) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(stringMap, len(raw))
	for k, v := range raw {
		var s flexString
		if err := s.UnmarshalJSON(v); err != nil {
			out[k] = string(bytes.TrimSpace(v))
			continue
		}
		out[k] = s.String()
	}
	*m = out
	return nil
}

// copyMap returns a fresh map so callers can delete keys without touching the parsed payload.
func (m stringMap) copyMap() map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k = strings.TrimSpace(k); k != "" {
			out[k] = v
		}
	}
	return out
}
