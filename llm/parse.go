package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/causeway/causeway/analyzer"
)

// maxFindings bounds one agent's report; more than this is a sign the model
// is listing every log line rather than weighing evidence.
const maxFindings = 16

// maxValidationErrors keeps the repair message short when a reply is wrong
// everywhere; the model needs the kind of mistake, not every instance.
const maxValidationErrors = 8

// parseFindings validates a model reply against the output contract. It is
// strict about everything the synthesis relies on (closed category set, stance,
// strength range, non-empty summary and citation, correct JSON types) and
// returns every violation so the repair request can name them. Extra keys are
// ignored: they carry no meaning and rejecting them would only cost a repair.
func parseFindings(role, content string) ([]analyzer.Finding, []string) {
	trimmed := strings.TrimSpace(content)
	if trimmed == "" {
		return nil, []string{"the reply was empty; it must be a JSON object"}
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, []string{fmt.Sprintf("the reply is not a JSON object (%v); reply with only the JSON object, no prose or code fences", err)}
	}
	if dec.More() {
		return nil, []string{"the reply contains text after the JSON object; reply with only the JSON object"}
	}
	if top == nil {
		return nil, []string{"the reply is JSON null; it must be an object with a \"findings\" array"}
	}
	raw, ok := top["findings"]
	if !ok {
		return nil, []string{`the object has no "findings" array`}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || isNull(raw) {
		return nil, []string{`"findings" must be an array of objects`}
	}
	var errs []string
	addErr := func(format string, args ...any) {
		if len(errs) < maxValidationErrors {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	if len(items) > maxFindings {
		addErr("there are %d findings; report at most %d, strongest first", len(items), maxFindings)
	}
	findings := make([]analyzer.Finding, 0, len(items))
	for i, item := range items {
		f, ferrs := parseFinding(role, item)
		for _, e := range ferrs {
			addErr("findings[%d]: %s", i, e)
		}
		if len(ferrs) == 0 {
			findings = append(findings, f)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return findings, nil
}

func parseFinding(role string, raw json.RawMessage) (analyzer.Finding, []string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return analyzer.Finding{}, []string{"must be an object"}
	}
	var errs []string
	// text reads a required string field; ok is false when it is missing or
	// not a string, in which case the error is already recorded.
	text := func(key string) (string, bool) {
		v, present := obj[key]
		if !present {
			errs = append(errs, fmt.Sprintf("%q is missing", key))
			return "", false
		}
		var s string
		if isNull(v) || json.Unmarshal(v, &s) != nil {
			errs = append(errs, fmt.Sprintf("%q must be a string", key))
			return "", false
		}
		return strings.TrimSpace(s), true
	}
	f := analyzer.Finding{AgentRole: role}
	if c, ok := text("category"); ok {
		switch {
		case c == "":
			errs = append(errs, `"category" is empty; use "unknown" when no category fits`)
		case !analyzer.ValidCategory(c):
			errs = append(errs, fmt.Sprintf("category %q is not one of the allowed ids", c))
		}
		f.Category = c
	}
	if s, ok := text("stance"); ok {
		if s != analyzer.StanceSupports && s != analyzer.StanceRefutes {
			errs = append(errs, fmt.Sprintf(`stance %q must be "supports" or "refutes"`, s))
		}
		f.Stance = s
	}
	if v, present := obj["strength"]; !present {
		errs = append(errs, `"strength" is missing`)
	} else if x, e := parseStrength(v); e != "" {
		errs = append(errs, e)
	} else {
		f.Strength = x
	}
	if s, ok := text("summary"); ok {
		if s == "" {
			errs = append(errs, `"summary" is empty`)
		}
		f.Summary = s
	}
	if s, ok := text("citation"); ok {
		if s == "" {
			errs = append(errs, `"citation" is empty; quote the input verbatim or name a field`)
		}
		f.Citation = s
	}
	if v, present := obj["mechanism"]; present && !isNull(v) {
		var m string
		if json.Unmarshal(v, &m) != nil {
			errs = append(errs, `"mechanism" must be a string`)
		} else if m = strings.TrimSpace(m); m != "" {
			f.Mechanism = m
			if !analyzer.ValidMechanism(f.Category, m) {
				errs = append(errs, fmt.Sprintf("mechanism %q is not one of %s's; use \"other\"", m, f.Category))
			}
		}
	}
	if v, present := obj["culprit"]; present && !isNull(v) {
		if c, e := parseCulprit(v); e != "" {
			errs = append(errs, e)
		} else {
			f.Culprit = c
		}
	}
	return f, errs
}

// parseStrength reads a finding's strength: a JSON number in [0, 1], or the
// sentence that tells the model what is wrong with it.
func parseStrength(v json.RawMessage) (float64, string) {
	// Decoding into any (not json.Number) so that a quoted "0.8" is
	// rejected rather than silently accepted.
	var val any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	n, isNum := json.Number(""), false
	if d.Decode(&val) == nil {
		n, isNum = val.(json.Number)
	}
	if !isNum {
		return 0, `"strength" must be a number between 0 and 1`
	}
	x, err := n.Float64()
	if err != nil || math.IsNaN(x) || x < 0 || x > 1 {
		return 0, fmt.Sprintf("strength %s is outside 0..1", n.String())
	}
	return x, ""
}

// parseCulprit reads a finding's culprit object: a known kind and a name,
// nothing else, or the sentence that tells the model what is wrong with it.
func parseCulprit(v json.RawMessage) (*analyzer.Culprit, string) {
	var c analyzer.Culprit
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	switch {
	case dec.Decode(&c) != nil:
		return nil, `"culprit" must be an object {"kind", "name", "namespace"}`
	case !analyzer.ValidCulpritKind(c.Kind):
		return nil, fmt.Sprintf("culprit kind %q is not one of %s", c.Kind, strings.Join(analyzer.CulpritKinds, ", "))
	case strings.TrimSpace(c.Name) == "":
		return nil, `"culprit" has no name`
	}
	c.Name, c.Namespace = strings.TrimSpace(c.Name), strings.TrimSpace(c.Namespace)
	return &c, ""
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
