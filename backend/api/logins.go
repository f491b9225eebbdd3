package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// SaveLoginArgs adds (id "") or edits a saved login; input's password absent keeps the saved
// one.
type SaveLoginArgs struct {
	ID    string       `json:"id"`
	Input logins.Input `json:"input"`
}

// RevealLoginArgs asks for a saved password. Password is the server's login password, asked
// again under `serve` (a stolen access token alone must not read saved passwords); the
// desktop, whose person sits at the machine that holds the vault, needs none.
type RevealLoginArgs struct {
	ID       string `json:"id"`
	Password string `json:"password,omitempty"`
}

// LoginsResult is the saved logins, never their passwords.
type LoginsResult struct {
	Logins []logins.Login `json:"logins"`
}

// RevealedPassword is a saved login's password.
type RevealedPassword struct {
	Password string `json:"password"`
}

// RevealGuard lets a reveal go ahead, or refuses it (a *StatusError: 400 or 403 naming
// "password", 429 with RetryAfter while locked out). nil lets every reveal go ahead.
type RevealGuard func(ctx context.Context, password string) error

var errLoginsOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("saved logins are not available in this server; a server started by `clusterspace serve` has them")}

// loginError names the field a login got wrong (400), or the login that is not there (404).
func loginError(err error) error {
	return featureError(err, namesField(func(e *logins.FieldError) string { return e.Field }), logins.ErrNotFound, "id")
}

// addLogins declares Settings → Logins. The list never carries a password; RevealLogin is its
// own call, behind the door's RevealGuard.
func addLogins(t *rpc.Table, s Services) {
	l := s.Logins
	rpc.Add(t, rpc.Method{Name: "ListLogins", Route: "GET /api/logins"}, ifOn(l != nil, errLoginsOff, func(ctx context.Context, _ rpc.None) (LoginsResult, error) {
		list, err := l.List(ctx)
		return LoginsResult{Logins: list}, loginError(err)
	}))
	rpc.Add(t, rpc.Method{Name: "SaveLogin", Route: "PUT /api/logins/{id}", Body: "input",
		Also: []rpc.REST{{Route: "POST /api/logins", Status: http.StatusCreated}}}, ifOn(l != nil, errLoginsOff, func(ctx context.Context, a SaveLoginArgs) (logins.Login, error) {
		saved, err := l.Save(ctx, a.ID, a.Input)
		return saved, loginError(err)
	}))
	rpc.Do(t, rpc.Method{Name: "DeleteLogin", Route: "DELETE /api/logins/{id}"}, doIfOn(l != nil, errLoginsOff, func(ctx context.Context, a IDArgs) error {
		return loginError(l.Delete(ctx, a.ID))
	}))
	rpc.Add(t, rpc.Method{Name: "RevealLogin", Route: "POST /api/logins/{id}/reveal"}, ifOn(l != nil, errLoginsOff, func(ctx context.Context, a RevealLoginArgs) (RevealedPassword, error) {
		if s.RevealGuard != nil {
			if err := s.RevealGuard(ctx, a.Password); err != nil {
				return RevealedPassword{}, err
			}
		}
		pw, err := l.Reveal(ctx, a.ID)
		return RevealedPassword{Password: pw}, loginError(err)
	}))
}
