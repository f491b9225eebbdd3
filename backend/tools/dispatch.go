package tools

import (
	"context"
	"encoding/json"
)

// Dispatch runs one tool call on behalf of a running tool (a browser recipe's steps) exactly
// as the model's own calls run: the loop guard, the caller's policy, the person's approval,
// the step log. A tool that runs other tools must go through it, so that running them in a
// bundle never bypasses a question the person would have been asked for each one.
type Dispatch func(ctx context.Context, name string, args json.RawMessage) (Result, error)

type dispatchKey struct{}

// WithDispatch hands the tools run under ctx the dispatcher of the agent that runs them.
func WithDispatch(ctx context.Context, d Dispatch) context.Context {
	return context.WithValue(ctx, dispatchKey{}, d)
}

// DispatchFrom returns the dispatcher of the agent running the current tool, or false when
// the tool runs outside an agent (then it must not run other tools on the model's behalf).
func DispatchFrom(ctx context.Context) (Dispatch, bool) {
	d, ok := ctx.Value(dispatchKey{}).(Dispatch)
	return d, ok && d != nil
}

// AlwaysAsks is implemented by tools every call of which the person answers first, whatever
// the risk ceiling, the allow list or an earlier "allow for this goal" say: filling a saved
// password into a page. AlwaysAsk returns why, or "" when the call will do nothing that needs
// it (no saved login for the page).
type AlwaysAsks interface {
	AlwaysAsk(ctx context.Context, args json.RawMessage) string
}
