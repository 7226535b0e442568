package investigation

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// versionGather marks passes that query the tenant's data sources before
// their agents run. Histories recorded before it replay without gathering.
const versionGather = "gather-datasources"

// gathering is what the pass learned from the tenant's data sources: per
// agent (aligned with investigation.roles), the answers it reads and what
// could not be asked.
type gathering struct {
	facts [][]string
	notes [][]string
	keys  []string // every accepted answer, in plan order
}

// queryResult is what became of one planned query.
type queryResult struct {
	done bool
	out  QueryOutput
	err  error
}

// gather plans the pass's data-source queries and runs each as its own
// activity, all at once, until every one has answered or the pass's budget
// is spent; queries still running then are cancelled. Whatever failed or did
// not answer becomes a coverage note of the agents that wanted it: a source
// that is down never fails the pass.
func (w *investigation) gather(ctx workflow.Context) {
	w.gathered = gathering{facts: make([][]string, len(w.roles)), notes: make([][]string, len(w.roles))}
	if workflow.GetVersion(ctx, versionGather, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	var plan GatherPlan
	err := workflow.ExecuteLocalActivity(withLocalStoreOptions(ctx), NamePlanGathering, GatherPlanInput{
		TenantID: w.in.TenantID, IncidentID: w.in.IncidentID, InvestigationID: w.in.InvestigationID,
		Agents: w.roles, At: workflow.Now(ctx),
	}).Get(ctx, &plan)
	if err != nil {
		w.log.Error("could not plan data-source queries", "error", err)
		w.noteAll("data sources not queried: " + failureReason(err))
		return
	}
	for _, n := range plan.Notes {
		w.noteAll(n)
	}
	if len(plan.Queries) == 0 {
		return
	}

	w.distribute(plan, w.runQueries(ctx, plan))
}

// runQueries runs every planned query as its own activity, all at once, and
// waits until each has answered or the budget is spent; queries still running
// then are cancelled.
func (w *investigation) runQueries(ctx workflow.Context, plan GatherPlan) []queryResult {
	queriesCtx, cancelQueries := workflow.WithCancel(withQueryOptions(ctx, plan.QueryTimeout, plan.Budget))
	futures := make([]workflow.Future, len(plan.Queries))
	for i, q := range plan.Queries {
		futures[i] = workflow.ExecuteActivity(queriesCtx, NameRunDataSourceQuery, QueryInput{
			TenantID: w.in.TenantID, InvestigationID: w.in.InvestigationID, Query: q,
		})
	}
	results := make([]queryResult, len(futures))
	pending, expired := len(futures), false
	sel := workflow.NewSelector(ctx)
	for i := range futures {
		sel.AddFuture(futures[i], func(f workflow.Future) {
			results[i].err = f.Get(ctx, &results[i].out)
			results[i].done = true
			pending--
		})
	}
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	sel.AddFuture(workflow.NewTimer(timerCtx, plan.Budget), func(workflow.Future) { expired = true })
	for pending > 0 && !expired {
		sel.Select(ctx)
	}
	cancelTimer()
	if pending > 0 {
		cancelQueries()
	}
	return results
}

// distribute gives each agent the answers meant for it, and tells each
// failure to the agents that wanted the answer.
func (w *investigation) distribute(plan GatherPlan, results []queryResult) {
	for i, q := range plan.Queries {
		r := results[i]
		var note string
		switch {
		case !r.done:
			note = fmt.Sprintf("%s %s of %q: no answer within the gathering budget of %s", q.Type, q.Entry, q.Source, plan.Budget)
		case r.err != nil:
			note = fmt.Sprintf("%s %s of %q failed: %s", q.Type, q.Entry, q.Source, failureReason(r.err))
		default:
			w.gathered.keys = append(w.gathered.keys, q.Key)
		}
		for j, role := range w.roles {
			if !slices.Contains(q.Roles, role) {
				continue
			}
			if note != "" {
				w.gathered.notes[j] = append(w.gathered.notes[j], note)
			} else {
				w.gathered.facts[j] = append(w.gathered.facts[j], q.Key)
			}
		}
	}
}

// noteAll tells every agent of the pass something about its gathering.
func (w *investigation) noteAll(note string) {
	for j := range w.roles {
		w.gathered.notes[j] = append(w.gathered.notes[j], note)
	}
}

// gatherCoverage is the part of an agent's coverage reason that says what
// its data sources answered.
func (w *investigation) gatherCoverage(i int) string {
	if i >= len(w.gathered.facts) {
		return ""
	}
	n, notes := len(w.gathered.facts[i]), w.gathered.notes[i]
	if n == 0 && len(notes) == 0 {
		return ""
	}
	s := fmt.Sprintf("; data sources: %d answers", n)
	if len(notes) > 0 {
		s += "; " + strings.Join(notes, "; ")
	}
	return s
}
