// Package wire holds what the protocol packages (openai, anthropic) share between them: a
// Turn that turns protocol deltas into llm events the same way for both, and a Watchdog
// that ends a request when the server goes quiet.
package wire

import (
	"fmt"
	"io"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Turn assembles one reply's events. Protocol code reports what arrived (text, reasoning,
// tool-call pieces, usage, a stop reason); Turn splits <think> tags out of text, numbers the
// tool calls, salvages their arguments, and ends with usage and the finish reason, in that
// order. Pop takes the events out.
type Turn struct {
	events []llm.Event
	think  llm.ThinkSplitter
	calls  []*call
	usage  *llm.Usage
	finish llm.FinishReason
	closed bool
}

type call struct {
	id, name string
	args     []byte
	started  bool
	ended    bool
}

// Pop removes and returns the oldest pending event.
func (t *Turn) Pop() (llm.Event, bool) {
	if len(t.events) == 0 {
		return llm.Event{}, false
	}
	ev := t.events[0]
	t.events = t.events[1:]
	return ev, true
}

// Events removes and returns every pending event.
func (t *Turn) Events() []llm.Event {
	evs := t.events
	t.events = nil
	return evs
}

// Content takes a delta of the model's content, which may hold <think> tags.
func (t *Turn) Content(delta string) {
	t.pieces(t.think.Feed(delta))
}

func (t *Turn) pieces(ps []llm.Piece) {
	for _, p := range ps {
		kind := llm.EventText
		if p.Reasoning {
			kind = llm.EventReasoning
		}
		t.events = append(t.events, llm.Event{Kind: kind, Text: p.Text})
	}
}

// Reasoning takes a delta of reasoning sent apart from the content (reasoning_content,
// a thinking block).
func (t *Turn) Reasoning(delta string) {
	if delta != "" {
		t.events = append(t.events, llm.Event{Kind: llm.EventReasoning, Text: delta})
	}
}

// Signature takes the seal of the reasoning sent so far (an Anthropic thinking block).
func (t *Turn) Signature(sig string) {
	if sig != "" {
		t.events = append(t.events, llm.Event{Kind: llm.EventReasoning, Signature: sig})
	}
}

// NewCall opens a tool call and returns its index. id and name may still be empty; they
// can be completed with Name before arguments flow.
func (t *Turn) NewCall(id, name string) int {
	t.calls = append(t.calls, &call{id: id, name: name})
	i := len(t.calls) - 1
	if name != "" {
		t.start(i)
	}
	return i
}

// CallID completes the id of a call whose first fragment lacked it.
func (t *Turn) CallID(i int, id string) {
	if t.calls[i].id == "" {
		t.calls[i].id = id
	}
}

// CallName adds to the name of call i (some servers stream names in pieces) if it has not
// started yet.
func (t *Turn) CallName(i int, name string) {
	if c := t.calls[i]; !c.started {
		c.name += name
	}
}

// HasArgs reports whether call i has received any argument text.
func (t *Turn) HasArgs(i int) bool { return len(t.calls[i].args) > 0 }

// HasID returns the id call i has so far.
func (t *Turn) HasID(i int) string { return t.calls[i].id }

func (t *Turn) start(i int) {
	c := t.calls[i]
	if c.started {
		return
	}
	c.started = true
	if c.id == "" {
		c.id = fmt.Sprintf("call_%d", i)
	}
	t.events = append(t.events, llm.Event{Kind: llm.EventToolCallStart, Index: i, ToolCall: llm.ToolCall{ID: c.id, Name: c.name}})
	if len(c.args) > 0 {
		t.events = append(t.events, llm.Event{Kind: llm.EventToolCallDelta, Index: i, Text: string(c.args)})
	}
}

// CallArgs takes a fragment of call i's arguments.
func (t *Turn) CallArgs(i int, frag string) {
	c := t.calls[i]
	if frag == "" {
		return
	}
	c.args = append(c.args, frag...)
	if c.started {
		t.events = append(t.events, llm.Event{Kind: llm.EventToolCallDelta, Index: i, Text: frag})
	} else if c.name != "" {
		t.start(i)
	}
}

// EndCall completes call i: its arguments are salvaged, or it carries an ArgsError the
// caller hands back to the model.
func (t *Turn) EndCall(i int) {
	c := t.calls[i]
	if c.ended {
		return
	}
	t.start(i)
	c.ended = true
	tc := llm.ToolCall{ID: c.id, Name: c.name}
	raw := string(c.args)
	args, err := llm.SalvageArgs(raw)
	switch {
	case err != nil:
		tc.RawArgs = raw
		tc.ArgsError = fmt.Sprintf("%s was not run: %v.", c.name, err)
	default:
		tc.Args = args
		if string(args) != raw {
			tc.RawArgs = raw
		}
	}
	t.events = append(t.events, llm.Event{Kind: llm.EventToolCallEnd, Index: i, ToolCall: tc})
}

// Usage records the latest usage reported.
func (t *Turn) Usage(u llm.Usage) { t.usage = &u }

// Finish records the stop reason reported.
func (t *Turn) Finish(f llm.FinishReason) { t.finish = f }

// Close ends the turn: held-back text, open tool calls, usage, then the finish reason.
// A finish the server did not send is inferred; a "stop" with tool calls (Ollama sends
// that) becomes tool_calls, so callers can trust FinishToolCalls.
func (t *Turn) Close() {
	if t.closed {
		return
	}
	t.closed = true
	t.pieces(t.think.Flush())
	for i := range t.calls {
		t.EndCall(i)
	}
	if t.usage != nil {
		t.events = append(t.events, llm.Event{Kind: llm.EventUsage, Usage: *t.usage})
	}
	f := t.finish
	switch {
	case len(t.calls) > 0 && (f == "" || f == llm.FinishStop):
		f = llm.FinishToolCalls
	case f == "":
		f = llm.FinishStop
	}
	t.events = append(t.events, llm.Event{Kind: llm.EventFinish, Finish: f})
}

// Closed reports whether Close has run.
func (t *Turn) Closed() bool { return t.closed }

// SDKStream is what both SDKs' streaming responses offer.
type SDKStream[T any] interface {
	Next() bool
	Current() T
	Err() error
}

// Pull turns an SDK stream into the pull function of an llm.Stream: it hands out the events
// turn has ready, reads the next SDK item into it (via read) when none are, and ends with
// io.EOF after the stream ends cleanly. Every item kicks the idle watchdog; a stream error
// stops it and goes through fail (the protocol's error classification).
func Pull[T any](turn *Turn, s SDKStream[T], w *Watchdog, stop func(), read func(T), fail func(error) error) func() (llm.Event, error) {
	return func() (llm.Event, error) {
		for {
			if ev, ok := turn.Pop(); ok {
				return ev, nil
			}
			if turn.Closed() {
				return llm.Event{}, io.EOF
			}
			if !s.Next() {
				if err := s.Err(); err != nil {
					stop()
					return llm.Event{}, fail(err)
				}
				turn.Close()
				continue
			}
			w.Kick()
			read(s.Current())
		}
	}
}
