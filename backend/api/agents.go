package api

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// AgentsResult is every pane's agent, for the Fleet Dashboard's agent cards: role, purpose,
// status, current task with its progress, queue, history and inbox.
type AgentsResult struct {
	Agents []fleet.Agent `json:"agents"`
}

// SetAgentRoleArgs gives a pane's agent a role (built-in or the user's own) and a purpose, both
// replacing what it had.
type SetAgentRoleArgs struct {
	Pane    string `json:"pane"`
	Role    string `json:"role"`
	Purpose string `json:"purpose"`
}

func addAgents(t *rpc.Table, s Services) {
	fl := s.Fleets
	rpc.Add(t, rpc.Method{Name: "ListAgents", Route: "GET /api/agents"}, ifOn(fl != nil, errFleetsOff, func(ctx context.Context, _ rpc.None) (AgentsResult, error) {
		agents, err := fl.Agents(ctx)
		return AgentsResult{Agents: agents}, err
	}))
	// Checked as the set_agent_role tool checks them: a mistake names the field and changes
	// nothing. The answer is the agent's stored record.
	rpc.Add(t, rpc.Method{Name: "SetAgentRole", Route: "PUT /api/agents/{pane}"}, ifOn(fl != nil, errFleetsOff, func(ctx context.Context, a SetAgentRoleArgs) (fleet.AgentRecord, error) {
		return fl.SetRole(ctx, fleet.Caller{User: true}, a.Pane, a.Role, a.Purpose)
	}))
}
