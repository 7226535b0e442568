package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/opensre"
)

const evalUsage = `usage: causeway [--config FILE] eval [--format causeway|opensre] [--verbose] DIR

  --format causeway  DIR holds Causeway scenario files (docs/scenarios.md); the default
  --format opensre   DIR is an OpenSRE synthetic suite's folder, or the folder holding
                     its eks and rds_postgres suites (docs/opensre.md)
  --verbose          explain every miss: the answer's narrative and ranked candidates
`

// evalCommand is `causeway eval`: Causeway's own scenario files, or
// OpenSRE's synthetic suites.
func evalCommand(ctx context.Context, cfgPath string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, evalUsage) }
	format := fs.String("format", "causeway", "the format of DIR's cases: causeway or opensre")
	verbose := fs.Bool("verbose", false, "explain every miss")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *format {
	case "causeway":
		return evaluateWith(ctx, cfgPath, fs.Arg(0), *verbose, out)
	case "opensre":
		return evaluateOpenSRE(ctx, cfgPath, fs.Arg(0), *verbose, out)
	}
	fs.Usage()
	return fmt.Errorf("eval: unknown format %q", *format)
}

// openSREResult is one OpenSRE case's outcome.
type openSREResult struct {
	evalResult
	mapped    string
	right     bool
	forbidden bool
	err       error
}

// evaluateOpenSRE runs every OpenSRE case of dir through the real pipeline
// as evaluate does a snapshot, and scores Causeway's answer mapped onto
// OpenSRE's categories (docs/opensre.md) against the case's answer key. A
// case that cannot run (no Prometheus for its series) is reported and the
// others still run.
func evaluateOpenSRE(ctx context.Context, cfgPath, dir string, verbose bool, out io.Writer) error {
	if dir == "" {
		return errors.New("usage: causeway eval --format opensre DIR")
	}
	cases, err := opensre.Load(dir)
	if err != nil {
		return err
	}
	env, stop, err := startEval(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(out, "Evaluating %d OpenSRE cases from %s with the %s\n\n%-52s %-20s %-26s %-20s\n", len(cases), dir, env.model,
		"case", "expected", "causeway", "mapped")
	results := make([]openSREResult, 0, len(cases))
	for _, c := range cases {
		r, err := evalScenario(ctx, env, c.Scenario)
		res := openSREResult{evalResult: r, err: err}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		id := c.Suite + "/" + c.ID
		if err != nil {
			fmt.Fprintf(out, "%-52s %-20s did not run: %v\n", id, c.Answer.Category, err)
			results = append(results, res)
			continue
		}
		res.mapped = opensre.OpenSRECategory(r.got, r.mechanism)
		res.right = c.Answer.Accepts(res.mapped)
		res.forbidden = c.Answer.Forbidden(r.got, r.mechanism)
		mark, note := "✗", ""
		if res.right {
			mark = "✓"
		}
		if res.forbidden {
			note = "FORBIDDEN"
		}
		fmt.Fprintf(out, "%-52s %-20s %-26s %-20s %s %-9s %6.1fs\n", id, c.Answer.Category, r.got, res.mapped, mark, note, res.seconds)
		if verbose && !res.right {
			fmt.Fprintf(out, "%-52s   %s\n", "", strings.ReplaceAll(r.why, "\n", "\n"+strings.Repeat(" ", 55)))
		}
		results = append(results, res)
	}
	printOpenSRESummary(out, results)
	return nil
}

// printOpenSRESummary prints category accuracy, how many answers a case
// forbade, how many cases did not run, and the median time a case took.
func printOpenSRESummary(out io.Writer, results []openSREResult) {
	right, forbidden, failed := 0, 0, 0
	var secs []float64
	for _, r := range results {
		if r.err != nil {
			failed++
			continue
		}
		if r.right {
			right++
		}
		if r.forbidden {
			forbidden++
		}
		secs = append(secs, r.seconds)
	}
	n := len(results)
	fmt.Fprintf(out, "\nCategory accuracy: %d/%d (%.1f%%)\nForbidden answers: %d/%d\n", right, n, 100*float64(right)/float64(max(n, 1)), forbidden, n)
	if failed > 0 {
		fmt.Fprintf(out, "Did not run: %d/%d\n", failed, n)
	}
	fmt.Fprintf(out, "Median seconds per case: %.1f\n", median(secs))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
