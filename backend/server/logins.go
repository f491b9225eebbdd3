package server

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/clusterspace/clusterspace/backend/logins"
)

// loginRoutes are Settings → Logins. The list never carries a password; Reveal is its own
// call, and under serve it takes the server's login password again (counted by the same
// lockout as logins), since a stolen access token alone must not read saved passwords.
func (s *Server) loginRoutes() []route {
	if s.deps.Logins == nil {
		return nil
	}
	return []route{
		{"GET", "/api/logins", false, s.listLogins},
		{"POST", "/api/logins", false, s.saveLogin},
		{"PUT", "/api/logins/{id}", false, s.saveLogin},
		{"DELETE", "/api/logins/{id}", false, s.deleteLogin},
		{"POST", "/api/logins/{id}/reveal", false, s.revealLogin},
	}
}

func (s *Server) listLogins(w http.ResponseWriter, r *http.Request) {
	list, err := s.deps.Logins.List(r.Context())
	respond(w, http.StatusOK, map[string]any{"logins": list}, err)
}

func (s *Server) saveLogin(w http.ResponseWriter, r *http.Request) {
	var in logins.Input
	if !decodeBody(w, r, &in) {
		return
	}
	status := http.StatusOK
	if r.PathValue("id") == "" {
		status = http.StatusCreated
	}
	l, err := s.deps.Logins.Save(r.Context(), r.PathValue("id"), in)
	loginRespond(w, status, l, err)
}

func (s *Server) deleteLogin(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Logins.Delete(r.Context(), r.PathValue("id")); err != nil {
		loginRespond(w, 0, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) revealLogin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Password string `json:"password"` // the server's login password, asked again
	}
	if !decodeBody(w, r, &body) {
		return
	}
	key := "reveal " + lockSource(clientAddr(r))
	if wait, locked := s.lockout.Locked(key); locked {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeJSON(w, http.StatusTooManyRequests, errorBody{Error: fmt.Sprintf("too many wrong passwords: try again in %s", roundWait(wait)), Field: "password", RetryAfter: secs})
		return
	}
	if body.Password == "" {
		writeError(w, http.StatusBadRequest, "enter the server's login password to reveal a saved password", "password")
		return
	}
	if !s.deps.Auth.CheckPassword(body.Password) {
		s.lockout.Fail(key)
		s.log.Warn("wrong password to reveal a saved login", "addr", clientAddr(r))
		writeError(w, http.StatusForbidden, "wrong password: enter the password you log in to this server with", "password")
		return
	}
	s.lockout.Succeed(key)
	pw, err := s.deps.Logins.Reveal(r.Context(), r.PathValue("id"))
	loginRespond(w, http.StatusOK, map[string]string{"password": pw}, err)
}

func loginRespond(w http.ResponseWriter, status int, v any, err error) {
	var fe *logins.FieldError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, err.Error(), fe.Field)
	case errors.Is(err, logins.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "id")
	default:
		respond(w, status, v, err)
	}
}
