package llm

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCollect(t *testing.T) {
	t.Parallel()
	events := []Event{
		{Kind: EventReasoning, Text: "first "},
		{Kind: EventReasoning, Text: "thought"},
		{Kind: EventReasoning, Signature: "sig-1"},
		{Kind: EventReasoning, Text: "second block"},
		{Kind: EventText, Text: "Hello "},
		{Kind: EventText, Text: "there"},
		{Kind: EventToolCallStart, Index: 0, ToolCall: ToolCall{ID: "c1", Name: "read"}},
		{Kind: EventToolCallDelta, Index: 0, Text: `{"p":1}`},
		{Kind: EventToolCallEnd, Index: 0, ToolCall: ToolCall{ID: "c1", Name: "read", Args: json.RawMessage(`{"p":1}`)}},
		{Kind: EventUsage, Usage: Usage{InputTokens: 10, OutputTokens: 5}},
		{Kind: EventFinish, Finish: FinishToolCalls},
	}
	var seen int
	r, err := Collect(EventStream(StreamInfo{Model: "m", MaxTokens: 100}, events), func(Event) { seen++ })
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(events) {
		t.Errorf("callback saw %d events, want %d", seen, len(events))
	}
	m := r.Message
	if m.Role != RoleAssistant || m.Text() != "Hello there" || m.Reasoning() != "first thoughtsecond block" {
		t.Fatalf("message: %+v", m)
	}
	if m.Parts[0].Signature != "sig-1" || m.Parts[1].Kind != PartReasoning || m.Parts[1].Signature != "" {
		t.Fatalf("reasoning blocks not kept apart by their signature: %+v", m.Parts[:2])
	}
	if calls := m.ToolCalls(); len(calls) != 1 || string(calls[0].Args) != `{"p":1}` {
		t.Fatalf("calls: %+v", calls)
	}
	if r.Usage != (Usage{InputTokens: 10, OutputTokens: 5}) || r.Finish != FinishToolCalls || r.Model != "m" || r.Stall() != "" {
		t.Fatalf("reply: %+v", r)
	}
}

func TestCollectReturnsPartialReplyOnError(t *testing.T) {
	t.Parallel()
	boom := &Error{Kind: Unavailable, Message: "gone"}
	n := 0
	closed := false
	s := NewStream(StreamInfo{}, func() (Event, error) {
		n++
		if n == 1 {
			return Event{Kind: EventText, Text: "part"}, nil
		}
		return Event{}, boom
	}, func() error { closed = true; return nil })
	r, err := Collect(s, nil)
	if !errors.Is(err, Unavailable) || r.Message.Text() != "part" || !closed {
		t.Fatalf("got %q, %v, closed %v", r.Message.Text(), err, closed)
	}
	if s.Next() {
		t.Fatal("Next after the end")
	}
}

func TestStreamCleanEnd(t *testing.T) {
	t.Parallel()
	s := NewStream(StreamInfo{}, func() (Event, error) { return Event{}, io.EOF }, nil)
	if s.Next() || s.Err() != nil || s.Close() != nil || s.Close() != nil {
		t.Fatal("a clean end is not clean")
	}
}

func TestStallReason(t *testing.T) {
	t.Parallel()
	if got := StallReason(FinishLength, 4096); !strings.Contains(got, "max tokens limit (4096)") || !strings.Contains(got, "raise Max tokens") {
		t.Errorf("length: %q", got)
	}
	if got := StallReason(FinishLength, 0); !strings.Contains(got, "raise Max tokens") {
		t.Errorf("length without a limit: %q", got)
	}
	if got := StallReason(FinishContentFilter, 0); got == "" {
		t.Error("content filter gives no reason")
	}
	for _, f := range []FinishReason{FinishStop, FinishToolCalls, FinishOther} {
		if got := StallReason(f, 10); got != "" {
			t.Errorf("%s: %q", f, got)
		}
	}
	if got := (Reply{Finish: FinishLength, MaxTokens: 256}).Stall(); !strings.Contains(got, "256") {
		t.Errorf("Reply.Stall: %q", got)
	}
}

func TestImageContentType(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n0000")
	if mt, err := (Image{Data: png}).ContentType(); err != nil || mt != "image/png" {
		t.Errorf("sniffed %q, %v", mt, err)
	}
	if _, err := (Image{MediaType: "image/bmp", Data: png}).ContentType(); err == nil || !strings.Contains(err.Error(), "PNG or JPEG") {
		t.Errorf("bmp: %v", err)
	}
	if _, err := (Image{MediaType: "image/png"}).ContentType(); err == nil {
		t.Error("an empty image passed")
	}
}

func TestMessageHelpers(t *testing.T) {
	t.Parallel()
	call := ToolCall{ID: "c", Name: "click", ArgsError: "click was not run: cut off."}
	r := call.ArgsErrorResult()
	if !r.IsError || r.CallID != "c" || r.Text != call.ArgsError {
		t.Fatalf("ArgsErrorResult: %+v", r)
	}
	m := ToolMessage(r, ToolResult{CallID: "d"})
	if m.Role != RoleTool || len(m.ToolResults()) != 2 || m.HasImages() {
		t.Fatalf("ToolMessage: %+v", m)
	}
}
