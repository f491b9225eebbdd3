package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/api"
)

// Saved logins' calls are the table's (backend/api/logins.go). Under serve, revealing a saved
// password takes the server's login password again, counted by the same lockout as logins,
// since a stolen access token alone must not read saved passwords: that check is here, as the
// table's RevealGuard, because it needs the caller's address and the server's password.

// addrKey carries an authenticated request's client address in its context.
type addrKey struct{}

// revealGuard lets a reveal go ahead once the server's login password is given again; wrong
// passwords lock the caller's source out for a while (429 with retryAfter).
func (s *Server) revealGuard(ctx context.Context, password string) error {
	addr, _ := ctx.Value(addrKey{}).(string)
	key := "reveal " + lockSource(addr)
	if wait, locked := s.lockout.Locked(key); locked {
		return &api.StatusError{Status: http.StatusTooManyRequests, Field: "password", RetryAfter: int(math.Ceil(wait.Seconds())),
			Err: fmt.Errorf("too many wrong passwords: try again in %s", roundWait(wait))}
	}
	if password == "" {
		return &api.StatusError{Status: http.StatusBadRequest, Field: "password", Err: errors.New("enter the server's login password to reveal a saved password")}
	}
	if !s.deps.Auth.CheckPassword(password) {
		s.lockout.Fail(key)
		s.log.Warn("wrong password to reveal a saved login", "addr", addr)
		return &api.StatusError{Status: http.StatusForbidden, Field: "password", Err: errors.New("wrong password: enter the password you log in to this server with")}
	}
	s.lockout.Succeed(key)
	return nil
}
