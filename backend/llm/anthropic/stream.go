package anthropic

import (
	"github.com/anthropics/anthropic-sdk-go"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire"
)

// eventReader turns streamed Messages events into a Turn's events.
type eventReader struct {
	turn wire.Turn
	// calls maps a content block index to the Turn's call, for tool_use blocks.
	calls map[int64]int
	// inputs holds the input a tool_use block started with: the API sends {} and streams
	// the arguments, but a compatible server may send them whole here instead.
	inputs map[int64]string
	usage  llm.Usage
}

func (r *eventReader) event(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		r.usage = usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
		r.turn.Usage(r.usage)
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "tool_use":
			if r.calls == nil {
				r.calls = map[int64]int{}
			}
			if r.inputs == nil {
				r.inputs = map[int64]string{}
			}
			r.calls[ev.Index] = r.turn.NewCall(cb.ID, cb.Name)
			r.inputs[ev.Index] = cb.JSON.Input.Raw()
		case "thinking":
			r.turn.Reasoning(cb.Thinking)
		case "text":
			r.turn.Content(cb.Text)
		}
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			r.turn.Content(d.Text)
		case "thinking_delta":
			r.turn.Reasoning(d.Thinking)
		case "signature_delta":
			r.turn.Signature(d.Signature)
		case "input_json_delta":
			if i, ok := r.calls[ev.Index]; ok {
				r.turn.CallArgs(i, d.PartialJSON)
			}
		}
	case "content_block_stop":
		if i, ok := r.calls[ev.Index]; ok {
			if in := r.inputs[ev.Index]; !r.turn.HasArgs(i) && in != "" && in != "{}" && in != "null" {
				r.turn.CallArgs(i, in)
			}
			r.turn.EndCall(i)
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			r.turn.Finish(stopReason(string(ev.Delta.StopReason)))
		}
		// message_delta's counts are cumulative; input appears here only on some servers.
		if u := ev.Usage; u.OutputTokens > 0 || u.InputTokens > 0 {
			if u.InputTokens > 0 {
				in := usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, 0)
				r.usage.InputTokens, r.usage.CachedInputTokens, r.usage.CacheWriteTokens = in.InputTokens, in.CachedInputTokens, in.CacheWriteTokens
			}
			r.usage.OutputTokens = int(u.OutputTokens)
			r.turn.Usage(r.usage)
		}
	}
}

// message turns a non-streamed reply into the same events a stream would give.
func message(m *anthropic.Message) []llm.Event {
	var t wire.Turn
	for _, b := range m.Content {
		switch b.Type {
		case "thinking":
			t.Reasoning(b.Thinking)
			t.Signature(b.Signature)
		case "text":
			t.Content(b.Text)
		case "tool_use":
			i := t.NewCall(b.ID, b.Name)
			t.CallArgs(i, string(b.Input))
			t.EndCall(i)
		}
	}
	u := m.Usage
	t.Usage(usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens))
	t.Finish(stopReason(string(m.StopReason)))
	t.Close()
	return t.Events()
}

// usage reads Anthropic's counts: input_tokens are only the tokens after the last cache
// breakpoint, so the whole input is their sum with the cache reads and writes.
func usage(input, read, write, output int64) llm.Usage {
	return llm.Usage{InputTokens: int(input + read + write), OutputTokens: int(output),
		CachedInputTokens: int(read), CacheWriteTokens: int(write)}
}

func stopReason(s string) llm.FinishReason {
	switch s {
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	case "tool_use":
		return llm.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "refusal":
		return llm.FinishContentFilter
	case "":
		return ""
	}
	return llm.FinishOther
}
