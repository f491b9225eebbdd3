package server

import (
	"net/http"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

func (s *Server) agentRoutes() []route {
	return []route{
		{"GET", "/api/agents", false, s.listAgents},
		{"PUT", "/api/agents/{pane}", false, s.setAgentRole},
	}
}

// listAgents answers the Fleet Dashboard's agent cards: every pane's agent with its role,
// purpose, status, current task and progress, queue, history and inbox.
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	if s.deps.Fleets == nil {
		writeError(w, http.StatusServiceUnavailable, "fleets are not running in this server", "")
		return
	}
	agents, err := s.deps.Fleets.Agents(r.Context())
	if err != nil {
		writeServiceError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": agents})
}

// agentRoleRequest is what an agent card's editor sends: the role (built-in or the user's
// own) and the purpose, both replacing what the pane's agent had.
type agentRoleRequest struct {
	Role    string `json:"role"`
	Purpose string `json:"purpose"`
}

// setAgentRole gives a pane's agent a role and purpose from the dashboard, checked as the
// set_agent_role tool checks them: a mistake is a 400 naming the field, and changes nothing.
// It answers the agent's stored record.
func (s *Server) setAgentRole(w http.ResponseWriter, r *http.Request) {
	if s.deps.Fleets == nil {
		writeError(w, http.StatusServiceUnavailable, "fleets are not running in this server", "")
		return
	}
	var body agentRoleRequest
	if !decodeBody(w, r, &body) {
		return
	}
	rec, err := s.deps.Fleets.SetRole(r.Context(), fleet.Caller{User: true}, r.PathValue("pane"), body.Role, body.Purpose)
	if err != nil {
		writeFleetError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}
