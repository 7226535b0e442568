package remediation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/causeway/causeway/egress"
	"github.com/causeway/causeway/models"
	"github.com/causeway/causeway/temporalx"
)

// Step types: the only kinds of step a runbook, and so a remediation, may hold.
const (
	StepHTTP               = "http"
	StepVerification       = "verification"
	StepSQLMigration       = "sql_migration"
	StepDeploymentRollback = "deployment_rollback"
	StepWait               = "wait"
)

// Error types of step executors. The blocked, rejected and bad-params types are
// non-retryable: no retry can change where a URL points, what a remote system
// refused or what a runbook says. StepUnavailable is retried.
const (
	ErrTypeEgressBlocked      = "EgressBlocked"
	ErrTypeStepRejected       = "StepRejected"
	ErrTypeStepBadParams      = "StepBadParams"
	ErrTypeStepUnavailable    = "StepUnavailable"
	ErrTypeVerificationFailed = "VerificationFailed"
)

// IdempotencyHeader carries each HTTP step's idempotency key, so a remote system
// that honours it applies a retried call once.
const IdempotencyHeader = "Idempotency-Key"

// executor is one step type: check validates params (fully once rendered, only
// their shape while they still hold templates), run performs the step.
type executor interface {
	check(p map[string]any, rendered bool, env checkEnv) error
	run(ctx context.Context, a *Activities, c stepCall) error
}

// checkEnv is what a params check needs beyond the params: the SQL targets and
// the tenant whose runbook or remediation it is.
type checkEnv struct {
	targets  SQLTargets
	tenantID string
}

// stepCall is one run of a step: its rendered params, the idempotency key the
// target sees, whose step it is, and (when the step is recorded in the
// database) how to record that its request is about to leave.
type stepCall struct {
	Params   map[string]any
	Key      string
	TenantID string
	// dispatch, when set, durably records that a request with side effects is
	// about to be sent; notSent undoes it when the request provably never
	// reached the target or the target refused it unprocessed.
	dispatch func(ctx context.Context) error
	notSent  func(ctx context.Context)
}

var executors = map[string]executor{
	StepHTTP:               httpStep{},
	StepVerification:       verificationStep{},
	StepSQLMigration:       sqlStep{},
	StepDeploymentRollback: rollbackStep{},
	StepWait:               waitStep{},
}

// StepTypes lists the implemented step types, sorted.
func StepTypes() []string {
	out := make([]string, 0, len(executors))
	for k := range executors {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// MaxPlanBytes bounds a runbook's steps, and a remediation's rendered steps, as
// JSON: a plan is something a person reads before approving it, and rendering
// must stay cheap on the shared worker.
const MaxPlanBytes = 64 << 10

// ValidateStep checks a runbook step of tenantID before it is stored: a known
// type, params of the right shape for its executor, templates of the allowed
// forms in the allowed places, and SQL targets the tenant may use. allowPrivate
// is the deployment's private-egress setting, so a URL the egress client would
// always refuse (a private IP literal, a numeric host) is refused now.
func ValidateStep(typ string, params map[string]any, targets SQLTargets, tenantID string, allowPrivate bool) error {
	ex, ok := executors[typ]
	if !ok {
		return fmt.Errorf("unknown step type %q; valid types are %s", typ, strings.Join(StepTypes(), ", "))
	}
	if err := walkStrings(params, func(s string) error { _, err := placeholders(s); return err }); err != nil {
		return err
	}
	if err := ex.check(params, false, checkEnv{targets: targets, tenantID: tenantID}); err != nil {
		return err
	}
	// Every URL-bearing step type keeps its URL in params.url, already checked
	// to be a string of the right shape (with a literal origin) above.
	if raw, ok := params["url"].(string); ok {
		sample, _ := renderURL("url", raw, sampleData)
		if u, err := url.Parse(sample); err == nil {
			if err := egress.CheckURL(u, allowPrivate); err != nil {
				return fmt.Errorf("params.url: %w", err)
			}
		}
	}
	return nil
}

// TemplateData is what step params may refer to: {{.Service}}, {{.Environment}},
// {{.IncidentID}} and tag values {{index .Tags "k"}}.
type TemplateData struct {
	Service     string
	Environment string
	IncidentID  string
	Tags        map[string]string
}

// sampleData stands in for an incident when a template is checked before any
// incident exists.
var sampleData = TemplateData{Service: "x", Environment: "x", IncidentID: "x"}

// RenderParams renders a step's params with data; the result is what the step
// runs with, what the approver sees and what the plan hash covers. params.url
// is rendered as a URL and params.statements as SQL with bind parameters (their
// values in params.args, one list per statement); any other string as plain
// text.
func RenderParams(params map[string]any, data TemplateData) (map[string]any, error) {
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		var err error
		switch raw, isString := v.(string); {
		case k == "url" && isString:
			out[k], err = renderURL(k, raw, data)
		case k == "statements":
			err = renderStatements(v, data, out)
		default:
			out[k], err = render(v, data)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renderStatements renders a sql_migration step's statements into out, with
// params.args when any statement holds a template.
func renderStatements(v any, data TemplateData, out map[string]any) error {
	list, ok := v.([]any)
	if !ok {
		out["statements"] = v // the executor's check reports the wrong shape
		return nil
	}
	stmts, args := make([]any, len(list)), make([]any, len(list))
	bound := false
	for i, e := range list {
		raw, ok := e.(string)
		if !ok {
			stmts[i], args[i] = e, []any{}
			continue
		}
		stmt, vals, err := renderSQL(i, raw, data)
		if err != nil {
			return err
		}
		stmts[i], args[i] = stmt, vals
		bound = bound || len(vals) > 0
	}
	out["statements"] = stmts
	if bound {
		out["args"] = args
	}
	return nil
}

func render(v any, data TemplateData) (any, error) {
	switch x := v.(type) {
	case string:
		return renderPlain(x, data)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := render(e, data)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := render(e, data)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func walkStrings(v any, f func(string) error) error {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		for _, e := range x {
			if err := walkStrings(e, f); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := walkStrings(e, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeParams reads params into the executor's typed struct; unknown keys are
// refused so a typo in a runbook is caught when it is created.
func decodeParams(p map[string]any, v any) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	return nil
}

func templated(s string) bool { return strings.Contains(s, "{{") }

// checkURL is the static URL check, egress.CheckURL's shape part; where the URL
// may go is decided at dial time by the egress client, and at creation by
// ValidateStep with the deployment's private-egress setting. Before rendering,
// the template must leave the scheme and host literal, and the URL is checked
// with sample values.
func checkURL(field, raw string, rendered bool) error {
	if raw == "" {
		return fmt.Errorf("params.%s is required", field)
	}
	if !rendered {
		sample, err := renderURL(field, raw, sampleData)
		if err != nil {
			return err
		}
		raw = sample
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("params.%s must be an absolute http or https URL", field)
	}
	if err := egress.CheckURL(u, true); err != nil {
		return fmt.Errorf("params.%s must be an absolute http or https URL the egress policy allows: %w", field, err)
	}
	return nil
}

func checkDuration(field, raw string, rendered bool, limit time.Duration) (time.Duration, error) {
	if raw == "" || (!rendered && templated(raw)) {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 0 || d > limit {
		return 0, fmt.Errorf("params.%s must be a duration between 0 and %s, like \"30s\"", field, limit)
	}
	return d, nil
}

// badParams makes bad params final; a URL the egress policy refuses is
// reported as EgressBlocked, the same as when the client refuses it.
// Messages are redacted (models.RedactText): they quote URLs, and a step's
// error is shown to every role and kept in workflow history.
func badParams(err error) error {
	if egress.IsBlocked(err) {
		return temporal.NewNonRetryableApplicationError(stepReason(err), ErrTypeEgressBlocked, nil)
	}
	return temporal.NewNonRetryableApplicationError(stepReason(err), ErrTypeStepBadParams, nil)
}

// stepReason is an error's text fit for a step's error: short, with the
// credentials in any URL it quotes masked.
func stepReason(err error) string { return models.RedactText(temporalx.Reason(err.Error())) }

// classifyTransport turns a failed request into Temporal's retry decision: a
// destination refused by the egress policy is final, anything else on the wire
// (DNS, connect, timeout) is worth retrying.
func classifyTransport(err error) error {
	if egress.IsBlocked(err) {
		return temporal.NewNonRetryableApplicationError(stepReason(err), ErrTypeEgressBlocked, nil)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return temporal.NewApplicationErrorWithCause(stepReason(err), ErrTypeStepUnavailable, nil)
}

// classifyStatus judges a response status: 408, 429 and 5xx are transient, any
// other 4xx is a refusal no retry can fix, and a 2xx/3xx other than the one
// expected (when one is) is a failed step.
func classifyStatus(status, expect int, retryAfter time.Duration) error {
	switch {
	case status == 408 || status == 429 || status >= 500:
		return temporal.NewApplicationErrorWithOptions(fmt.Sprintf("remote answered %d", status), ErrTypeStepUnavailable,
			temporal.ApplicationErrorOptions{NextRetryDelay: retryAfter})
	case status >= 400:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("remote refused the call with %d", status), ErrTypeStepRejected, nil)
	case expect != 0 && status != expect:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("remote answered %d, expected %d", status, expect), ErrTypeStepRejected, nil)
	case expect == 0 && (status < 200 || status > 299):
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("remote answered %d, expected a 2xx", status), ErrTypeStepRejected, nil)
	}
	return nil
}
