package server

import (
	"net/http"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

func (s *Server) listSSH(w http.ResponseWriter, r *http.Request) {
	vs, err := s.deps.SSH.List(r.Context())
	respond(w, http.StatusOK, map[string]any{"servers": vs}, err)
}

func (s *Server) saveSSH(w http.ResponseWriter, r *http.Request) {
	var in config.SSHInput
	if !decodeBody(w, r, &in) {
		return
	}
	status := http.StatusOK
	if r.PathValue("id") == "" {
		status = http.StatusCreated
	}
	v, err := s.deps.SSH.Save(r.Context(), r.PathValue("id"), in)
	respond(w, status, v, err)
}

func (s *Server) deleteSSH(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.SSH.Delete(r.Context(), r.PathValue("id")); err != nil {
		writeServiceError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sshTarget resolves a saved server (with its password) for the terminal engine.
func (s *Server) sshTarget(r *http.Request, id string) (terminal.SSHTarget, error) {
	v, err := s.deps.SSH.Resolve(r.Context(), id)
	if err != nil {
		return terminal.SSHTarget{}, err
	}
	return terminal.SSHTarget{Host: v.Host, Port: v.Port, User: v.User, KeyPath: v.KeyPath, Password: v.Password}, nil
}

// openSSHTab opens a tab in the pane connected to a saved server, inside the pane's tmux
// session on that server (so it survives disconnects).
func (s *Server) openSSHTab(w http.ResponseWriter, r *http.Request) {
	pane, ok := s.terminalPane(w, r)
	if !ok {
		return
	}
	var body struct {
		ServerID string `json:"serverId"`
		Cols     int    `json:"cols"`
		Rows     int    `json:"rows"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	target, err := s.sshTarget(r, body.ServerID)
	if err != nil {
		writeServiceError(w, err)
		return
	}
	cols, rows := sizeBody{body.Cols, body.Rows}.orDefault()
	tab, err := s.deps.Terminals.Open(r.Context(), terminal.Spec{PaneID: pane, Cols: cols, Rows: rows, SSH: &target})
	if err != nil {
		writeTerminalError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, tab)
}

func (s *Server) remoteSessions(w http.ResponseWriter, r *http.Request) {
	target, err := s.sshTarget(r, r.PathValue("id"))
	if err != nil {
		writeServiceError(w, err)
		return
	}
	sessions, err := s.deps.Terminals.RemoteSessions(r.Context(), target)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error(), "")
		return
	}
	if sessions == nil {
		sessions = []terminal.RemoteSession{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": sessions})
}

func (s *Server) killRemoteSession(w http.ResponseWriter, r *http.Request) {
	target, err := s.sshTarget(r, r.PathValue("id"))
	if err != nil {
		writeServiceError(w, err)
		return
	}
	if err := s.deps.Terminals.KillRemoteSession(r.Context(), target, r.PathValue("name")); err != nil {
		writeError(w, http.StatusBadGateway, err.Error(), "")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
