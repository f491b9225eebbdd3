package server

import (
	"net/http"
)

func (s *Server) agentRoutes() []route {
	return []route{
		{"GET", "/api/agents", false, s.listAgents},
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
