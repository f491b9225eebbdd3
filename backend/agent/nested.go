package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

type nestedKey struct{}

// isNested reports whether ctx is that of a nested call (see Agent.nested).
func isNested(ctx context.Context) bool { return ctx.Value(nestedKey{}) != nil }

// errNestedClosed is what a nested call gets once its parent call was left behind by a stop.
var errNestedClosed = errors.New("the call that ran this step was stopped")

// nestGate keeps a tool's nested calls off the agent's state once the loop has moved on
// without that tool (a stop whose grace ran out). While the parent call runs, the loop
// goroutine waits for it, so the nested calls have the agent to themselves.
type nestGate struct {
	mu     sync.Mutex
	closed bool
}

func (g *nestGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// nested is the capability handed to the running call parent (tools.Call.Nested): each call
// it makes is decided, run and recorded exactly as a call of the model's own (the guard, the
// owner's decider with the call's own risk, the person's approval, the step log), under an
// id derived from the parent's, so running tools in a bundle never skips a question, and
// nothing a nested call does happens before it was allowed.
func (a *Agent) nested(parent tools.Call, gate *nestGate) tools.Nested {
	n := 0
	return func(ctx context.Context, tool tools.Tool, args json.RawMessage) (tools.Result, error) {
		if err := ctx.Err(); err != nil {
			return tools.Result{}, context.Cause(ctx)
		}
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		gate.mu.Lock()
		n++
		c := llm.ToolCall{ID: fmt.Sprintf("%s.%d", parent.ID, n), Name: tool.Name(), Args: args}
		if gate.closed {
			gate.mu.Unlock()
			return tools.Result{}, errNestedClosed
		}
		ctx = context.WithValue(ctx, nestedKey{}, true)
		rec := a.record(c, args)
		a.publish(Event{Kind: EventToolStarted, Call: &CallInfo{ID: c.ID, Name: c.Name, Args: rec.Args}})
		p, res, halt, abandoned := a.decideWith(ctx, ctx, c, tool, args, rec)
		gate.mu.Unlock()
		if abandoned {
			return tools.Result{}, errNestedClosed
		}
		if p == nil {
			if halt != nil {
				res.Text += "\n(the loop guard halted this run)"
			}
			return fromLLM(res), nil
		}
		out := a.execute(ctx, ctx, p)
		gate.mu.Lock()
		defer gate.mu.Unlock()
		if gate.closed {
			return tools.Result{}, errNestedClosed
		}
		return fromLLM(a.settle(p, out)), nil
	}
}

func fromLLM(r llm.ToolResult) tools.Result {
	out := tools.Result{Text: r.Text, IsError: r.IsError}
	for _, img := range r.Images {
		out.Images = append(out.Images, tools.Image{MediaType: img.MediaType, Data: img.Data})
	}
	return out
}
