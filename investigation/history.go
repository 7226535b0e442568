package investigation

import (
	"context"

	"github.com/causeway/causeway/auth"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/models"
)

// Agent progress states beyond the coverage statuses: an agent of a running
// pass that has not reported yet.
const AgentRunning = "running"

// AgentProgress is what one agent of a pass has done so far.
type AgentProgress struct {
	AgentRole string
	Status    string // AgentRunning or a coverage status
	Reason    string
}

// PassProgress is one investigation pass with its agents' progress.
type PassProgress struct {
	Investigation models.Investigation
	Agents        []AgentProgress
}

// History returns the incident's investigation passes, newest first, each with
// the progress of its agents: the recorded coverage once the pass has finished,
// and while it runs, each agent's report as it lands. It lets a person watch a
// pass without waiting for its result.
func (s *Investigations) History(ctx context.Context, p auth.Principal, incidentID string) ([]PassProgress, error) {
	if _, err := FindIncident(ctx, s.store, p.TenantID, incidentID); err != nil {
		return nil, err
	}
	passes, err := s.store.InvestigationPasses(ctx, p.TenantID, incidentID)
	if err != nil {
		return nil, errcode.Down("the database", err)
	}
	out := make([]PassProgress, len(passes))
	for i := range passes {
		out[i] = PassProgress{Investigation: passes[i]}
		if passes[i].Status != models.InvestigationRunning {
			for _, c := range passes[i].Coverage {
				out[i].Agents = append(out[i].Agents, AgentProgress{AgentRole: c.AgentRole, Status: c.Status, Reason: c.Reason})
			}
			continue
		}
		// The pass was read with the tenant's id, so its agent rows are the tenant's.
		runs, err := s.store.AgentRuns(ctx, passes[i].ID)
		if err != nil {
			return nil, errcode.Down("the database", err)
		}
		byRole := make(map[string]models.AgentRun, len(runs))
		for _, r := range runs {
			byRole[r.AgentRole] = r
		}
		for _, role := range passes[i].Agents {
			a := AgentProgress{AgentRole: role, Status: AgentRunning}
			if r, ok := byRole[role]; ok {
				a.Status, a.Reason = r.Status, r.Reason
			}
			out[i].Agents = append(out[i].Agents, a)
		}
	}
	return out, nil
}
