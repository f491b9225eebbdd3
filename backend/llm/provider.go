package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
)

// Provider is one configured model service speaking one wire protocol.
type Provider interface {
	// Stream sends the request and returns the reply as it arrives. An error that happens
	// before the reply starts (a refused key, an unknown model, retries run out) is returned
	// here as an *Error; one that happens later ends the stream and is returned by Err.
	Stream(ctx context.Context, req Request) (*Stream, error)
	// Complete sends the request without streaming and returns the whole reply; judges and
	// critics use it.
	Complete(ctx context.Context, req Request) (Reply, error)
	// ListModels lists the models the service offers.
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

// ModelInfo is one model a service offers.
type ModelInfo struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName,omitempty"`
}

// Options are what a caller may hand a provider besides its Config.
type Options struct {
	// Logger receives the provider's logs (default slog.Default()). Keys never reach it.
	Logger *slog.Logger
	// HTTPClient makes the requests (default: a client with its own transport).
	HTTPClient *http.Client
}

// Option sets one of Options.
type Option func(*Options)

// WithLogger sends the provider's logs to l.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithHTTPClient makes the provider send its requests through c.
func WithHTTPClient(c *http.Client) Option { return func(o *Options) { o.HTTPClient = c } }

// ApplyOptions returns the options with defaults filled in.
func ApplyOptions(opts ...Option) Options {
	var o Options
	for _, f := range opts {
		f(&o)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return o
}

// EventKind says what an Event carries.
type EventKind string

const (
	EventText          EventKind = "text"            // Text: a piece of the answer
	EventReasoning     EventKind = "reasoning"       // Text: a piece of reasoning; or Signature alone
	EventToolCallStart EventKind = "tool_call_start" // Index, ToolCall.ID, ToolCall.Name
	EventToolCallDelta EventKind = "tool_call_delta" // Index, Text: a fragment of the arguments
	EventToolCallEnd   EventKind = "tool_call_end"   // Index, ToolCall: complete, arguments salvaged
	EventUsage         EventKind = "usage"           // Usage
	EventFinish        EventKind = "finish"          // Finish: always the last event of a reply
)

// Event is one step of a streamed reply.
type Event struct {
	Kind EventKind
	Text string
	// Signature seals the reasoning sent so far (Anthropic thinking blocks); it comes once,
	// after the block's text, in an EventReasoning with no Text.
	Signature string
	// Index numbers the tool calls of this reply 0, 1, … in the order they started.
	Index    int
	ToolCall ToolCall
	Usage    Usage
	Finish   FinishReason
}

// FinishReason says why a reply ended.
type FinishReason string

const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
	FinishOther         FinishReason = "other"
)

// StallReason explains a finish that leaves the work undone, or returns "" for one that
// does not. maxTokens is the limit the request ran with (0 if unknown).
func StallReason(f FinishReason, maxTokens int) string {
	switch f {
	case FinishLength:
		limit := "its output limit"
		if maxTokens > 0 {
			limit = fmt.Sprintf("the max tokens limit (%d)", maxTokens)
		}
		return "the reply was cut off at " + limit + " before it finished: raise Max tokens in Settings → Providers"
	case FinishContentFilter:
		return "the provider's content filter stopped the reply: rephrase the request or use another model"
	}
	return ""
}

// StreamInfo describes the request a stream answers.
type StreamInfo struct {
	Model     string // the model asked for
	MaxTokens int    // the output limit sent (0 if none)
}

// Stream is a reply as it arrives. Call Next until it returns false, then Err. Close
// releases the connection; it is safe at any time, more than once, and after the end.
// A Stream is not safe for concurrent use, except Close.
type Stream struct {
	info  StreamInfo
	pull  func() (Event, error)
	close func() error

	ev        Event
	err       error
	done      bool
	closeOnce sync.Once
	closeErr  error
}

// NewStream makes a Stream over pull, which returns the next event or io.EOF at the end;
// close releases what pull reads from. Providers call it.
func NewStream(info StreamInfo, pull func() (Event, error), close func() error) *Stream {
	if close == nil {
		close = func() error { return nil }
	}
	return &Stream{info: info, pull: pull, close: close}
}

// EventStream replays a fixed list of events; providers use it for non-streamed replies.
func EventStream(info StreamInfo, events []Event) *Stream {
	return NewStream(info, func() (Event, error) {
		if len(events) == 0 {
			return Event{}, io.EOF
		}
		ev := events[0]
		events = events[1:]
		return ev, nil
	}, nil)
}

// Info describes the request the stream answers.
func (s *Stream) Info() StreamInfo { return s.info }

// Next advances to the next event and reports whether there is one.
func (s *Stream) Next() bool {
	if s.done {
		return false
	}
	ev, err := s.pull()
	if err != nil {
		s.done = true
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
		s.Close() // Best effort: the reply is over either way.
		return false
	}
	s.ev = ev
	return true
}

// Event returns the current event.
func (s *Stream) Event() Event { return s.ev }

// Err returns the error that ended the stream, or nil if it ended cleanly.
func (s *Stream) Err() error { return s.err }

// Close releases the connection.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

// Reply is a whole reply: the assistant message, what it cost and why it ended.
type Reply struct {
	Message   Message
	Usage     Usage
	Finish    FinishReason
	Model     string
	MaxTokens int
}

// Stall explains a finish that leaves the work undone ("" if none); see StallReason.
func (r Reply) Stall() string { return StallReason(r.Finish, r.MaxTokens) }

// Collect reads the stream to its end into a Reply, calling each (if not nil) for every
// event on the way, and closes the stream. On error it returns what arrived so far.
func Collect(s *Stream, each func(Event)) (Reply, error) {
	defer s.Close()
	info := s.Info()
	r := Reply{Message: Message{Role: RoleAssistant}, Model: info.Model, MaxTokens: info.MaxTokens}
	// sealed marks the last reasoning part as closed by a signature, so the next reasoning
	// starts a part of its own (each Anthropic thinking block keeps its own signature).
	sealed := false
	add := func(kind PartKind, text string) {
		n := len(r.Message.Parts)
		if n > 0 && r.Message.Parts[n-1].Kind == kind && !(kind == PartReasoning && sealed) {
			r.Message.Parts[n-1].Text += text
			return
		}
		r.Message.Parts = append(r.Message.Parts, Part{Kind: kind, Text: text})
		sealed = false
	}
	for s.Next() {
		ev := s.Event()
		if each != nil {
			each(ev)
		}
		switch ev.Kind {
		case EventText:
			add(PartText, ev.Text)
		case EventReasoning:
			if ev.Text != "" {
				add(PartReasoning, ev.Text)
			}
			if ev.Signature != "" {
				if n := len(r.Message.Parts); n > 0 && r.Message.Parts[n-1].Kind == PartReasoning && !sealed {
					r.Message.Parts[n-1].Signature = ev.Signature
				} else {
					r.Message.Parts = append(r.Message.Parts, ReasoningPart("", ev.Signature))
				}
				sealed = true
			}
		case EventToolCallEnd:
			r.Message.Parts = append(r.Message.Parts, ToolCallPart(ev.ToolCall))
		case EventUsage:
			r.Usage = ev.Usage
		case EventFinish:
			r.Finish = ev.Finish
		}
	}
	return r, s.Err()
}
