package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// ErrorBody is what a refused call answers, on both doors: the message written for people,
// the argument to blame, and what the UI needs to offer a way on.
type ErrorBody struct {
	Error string `json:"error"`
	// Field is the argument or form field the message is about.
	Field string `json:"field,omitempty"`
	// Task is the fleet task the field belongs to (a fleet file's mistakes).
	Task string `json:"task,omitempty"`
	// Line is the fleet file's line the mistake is on.
	Line int `json:"line,omitempty"`
	// RetryAfter is seconds until a locked-out login may be tried again.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Busy lists the panes a refused removal would interrupt, for the UI's confirm dialog.
	Busy []workspace.BusyPane `json:"busy,omitempty"`
	// Text is the chat message that could not be sent, for the UI to put back in the input.
	Text string `json:"text,omitempty"`
}

// SetHeaders puts a refusal's wait in Retry-After too, for HTTP clients that read only that.
func (b ErrorBody) SetHeaders(h http.Header) {
	if b.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(b.RetryAfter))
	}
}

// StatusError is a refusal with a status of its own (the service's errors are classified by
// their type in Classify).
type StatusError struct {
	Status int
	Field  string
	// RetryAfter is seconds until the refused call may be tried again (a lockout's 429).
	RetryAfter int
	Err        error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// Conflict marks err as a refusal because of the state things are in (409).
func Conflict(err error) error {
	if err == nil {
		return nil
	}
	return &StatusError{Status: http.StatusConflict, Err: err}
}

// fieldErrors are the person's mistakes that name the field to fix (400 with that field): in
// the call's arguments, a goal's spec, an approval's answer, a workspace, a provider or an SSH
// server.
var fieldErrors = []func(error) (string, bool){
	namesField(func(e *rpc.ArgsError) string { return e.Field }),
	namesField(func(e *goal.FieldError) string { return e.Field }),
	namesField(func(e *agent.AnswerError) string { return e.Field }),
	namesField(func(e *workspace.FieldError) string { return e.Field }),
	namesField(func(e *config.FieldError) string { return e.Field }),
}

// namesField answers, of an error whose chain holds an E, the field field reads from it.
func namesField[E error](field func(E) string) func(error) (string, bool) {
	return func(err error) (string, bool) {
		var e E
		if !errors.As(err, &e) {
			return "", false
		}
		return field(e), true
	}
}

// ifOn is fn when its service runs in this door (on), else a call that answers off: a door
// runs without the services it has no use for.
func ifOn[A, R any](on bool, off error, fn func(context.Context, A) (R, error)) func(context.Context, A) (R, error) {
	if on {
		return fn
	}
	return func(context.Context, A) (R, error) {
		var none R
		return none, off
	}
}

// doIfOn is ifOn for a call without a result.
func doIfOn[A any](on bool, off error, fn func(context.Context, A) error) func(context.Context, A) error {
	if on {
		return fn
	}
	return func(context.Context, A) error { return off }
}

// featureError is a feature's refusal with its status: a mistake in the field named names (400
// naming it), or no record for the key the call gave (notFound: 404 naming key).
func featureError(err error, named func(error) (string, bool), notFound error, key string) error {
	if field, ok := named(err); ok {
		return &StatusError{Status: http.StatusBadRequest, Field: field, Err: err}
	}
	if errors.Is(err, notFound) {
		return &StatusError{Status: http.StatusNotFound, Field: key, Err: err}
	}
	return err
}

// Classify maps a call's error to an HTTP status and the body both doors send.
func Classify(err error) (int, ErrorBody) {
	body := ErrorBody{Error: err.Error()}
	var (
		st    *StatusError
		un    *rpc.UnknownError
		ie    *workspace.ImportError
		ffe   *fleet.FieldError
		busy  *panes.BusyError
		inUse *panes.GoalInPaneError
		be    *workspace.BusyError
	)
	if status, ok := classifyChat(err, &body); ok {
		return status, body
	}
	for _, named := range fieldErrors {
		if field, ok := named(err); ok {
			body.Field = field
			return http.StatusBadRequest, body
		}
	}
	switch {
	case errors.As(err, &un):
		return http.StatusNotFound, body
	case errors.As(err, &ffe):
		body.Field, body.Task, body.Line = ffe.Field, ffe.Task, ffe.Line
		if u, uerr := strconv.Unquote(ffe.Task); uerr == nil {
			body.Task = u
		}
		return http.StatusBadRequest, body
	case errors.As(err, &inUse):
		body.Field = "paneId"
		return http.StatusConflict, body
	case errors.As(err, &busy):
		// One shape for every "this would end work in progress": the panes and what is busy.
		body.Field, body.Busy = "force", []workspace.BusyPane{{PaneID: busy.PaneID, Busy: busy.What}}
		return http.StatusConflict, body
	case errors.As(err, &be):
		body.Busy = be.Panes
		return http.StatusConflict, body
	case errors.As(err, &ie):
		return http.StatusBadRequest, body
	case errors.Is(err, terminal.ErrNoPane), errors.Is(err, terminal.ErrNoTab):
		return http.StatusNotFound, body
	case errors.Is(err, terminal.ErrBadSize):
		body.Field = "cols"
		return http.StatusBadRequest, body
	case errors.Is(err, workspace.ErrNotFound), errors.Is(err, config.ErrNotFound), errors.Is(err, goal.ErrNotFound),
		errors.Is(err, agent.ErrNotWaiting), errors.Is(err, fleet.ErrNotFound):
		return http.StatusNotFound, body
	case errors.As(err, &st):
		body.Field, body.RetryAfter = st.Field, st.RetryAfter
		return st.Status, body
	case errors.Is(err, config.ErrNoProvider):
		body.Field = "provider"
		return http.StatusConflict, body
	case errors.Is(err, workspace.ErrLastWorkspace):
		return http.StatusConflict, body
	}
	body.Error = "internal error: " + err.Error()
	return http.StatusInternalServerError, body
}

// classifyChat maps the chat service's errors. A message that could not be sent comes back
// with its text; of those, the person's mistakes (an empty message, no provider yet) are 4xx
// and only a model or store that failed is a bad gateway.
func classifyChat(err error, body *ErrorBody) (int, bool) {
	var se *chat.StartError
	var fe *chat.FieldError
	switch {
	case errors.As(err, &se):
		body.Text = se.Text
		switch {
		case errors.As(se.Err, &fe):
			body.Field = fe.Field
			return http.StatusBadRequest, true
		case errors.Is(err, config.ErrNoProvider):
			body.Field = "provider"
			return http.StatusConflict, true
		case errors.Is(err, config.ErrNotFound):
			body.Field = "provider"
			return http.StatusNotFound, true
		}
		return http.StatusBadGateway, true
	case errors.As(err, &fe):
		body.Field = fe.Field
		return http.StatusBadRequest, true
	case errors.Is(err, chat.ErrNotFound):
		return http.StatusNotFound, true
	case errors.Is(err, chat.ErrNothingToResume):
		return http.StatusConflict, true
	}
	return 0, false
}

// HTTPErrors is Classify for rpc.Table.HTTP.
func HTTPErrors(err error) (int, any) {
	status, body := Classify(err)
	return status, body
}
