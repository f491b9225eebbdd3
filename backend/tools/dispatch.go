package tools

import (
	"context"
	"encoding/json"
)

// Nested runs a call on behalf of the running one (a recipe's steps, a plugin's fetch)
// exactly as the model's own calls run: the loop guard, the owner's decider and the person's
// approval, the step log, and cut off when the owner stops. It is a capability of the running
// call (Call.Nested), not something found in a context: a tool run outside an agent has none,
// and must not run other tools on the model's behalf. tool need not be registered (a plugin's
// fetch is a tool of its own).
type Nested func(ctx context.Context, tool Tool, args json.RawMessage) (Result, error)

// AlwaysAsks is implemented by tools every call of which the person answers first, whatever
// the risk ceiling, the allow list or an earlier "allow for this goal" say: filling a saved
// password into a page. AlwaysAsk returns why, or "" when the call will do nothing that needs
// it (no saved login for the page).
type AlwaysAsks interface {
	AlwaysAsk(ctx context.Context, args json.RawMessage) string
}
