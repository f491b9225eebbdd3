package openai

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire"
)

// chunkReader turns streamed chunks into a Turn's events.
type chunkReader struct {
	model string
	turn  wire.Turn
	// slots maps the server's tool-call index to the Turn's call.
	slots map[int64]int
}

func (r *chunkReader) chunk(c openai.ChatCompletionChunk) {
	if c.JSON.Usage.Valid() {
		r.turn.Usage(usage(c.Usage))
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is ever asked for
		}
		d := ch.Delta
		r.turn.Reasoning(reasoning(d.JSON.ExtraFields))
		r.turn.Content(d.Content)
		r.turn.Content(d.Refusal)
		for _, tc := range d.ToolCalls {
			r.toolFragment(tc)
		}
		if ch.FinishReason != "" {
			r.turn.Finish(finishReason(ch.FinishReason))
		}
	}
}

// toolFragment routes one fragment to its call. Fragments of a call share an index; a new
// id at a known index is a new call, because some servers (Gemini's compatibility layer)
// number every parallel call 0.
func (r *chunkReader) toolFragment(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if r.slots == nil {
		r.slots = map[int64]int{}
	}
	i, ok := r.slots[tc.Index]
	if !ok || (tc.ID != "" && r.turn.HasID(i) != "" && tc.ID != r.turn.HasID(i)) {
		i = r.turn.NewCall(tc.ID, tc.Function.Name)
		r.slots[tc.Index] = i
	} else {
		r.turn.CallID(i, tc.ID)
		r.turn.CallName(i, tc.Function.Name)
	}
	r.turn.CallArgs(i, tc.Function.Arguments)
}

// completion turns a non-streamed reply into the same events a stream would give.
func completion(res *openai.ChatCompletion) []llm.Event {
	var t wire.Turn
	if len(res.Choices) > 0 {
		ch := res.Choices[0]
		m := ch.Message
		t.Reasoning(reasoning(m.JSON.ExtraFields))
		t.Content(m.Content)
		t.Content(m.Refusal)
		for _, tc := range m.ToolCalls {
			i := t.NewCall(tc.ID, tc.Function.Name)
			t.CallArgs(i, tc.Function.Arguments)
		}
		t.Finish(finishReason(ch.FinishReason))
	}
	if res.JSON.Usage.Valid() {
		t.Usage(usage(res.Usage))
	}
	t.Close()
	return t.Events()
}

// reasoning reads the reasoning a server sent beside the content. The field is not part of
// the official schema: DeepSeek, llama.cpp and older vLLM call it reasoning_content;
// OpenRouter, Ollama and newer vLLM call it reasoning.
func reasoning(extra map[string]respjson.Field) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func usage(u openai.CompletionUsage) llm.Usage {
	// prompt_tokens counts every input token; cached_tokens says how many came from the
	// prompt cache (OpenAI reports it; vLLM and others may, or leave it 0).
	return llm.Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens),
		CachedInputTokens: int(u.PromptTokensDetails.CachedTokens)}
}

func finishReason(s string) llm.FinishReason {
	switch s {
	case "stop":
		return llm.FinishStop
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	}
	return llm.FinishOther
}
