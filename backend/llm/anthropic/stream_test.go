package anthropic

import (
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire/wiretest"
)

// replay feeds event JSON through an eventReader and collects the reply.
func replay(t *testing.T, events ...string) llm.Reply {
	t.Helper()
	r := &eventReader{}
	return wiretest.Replay(t, &r.turn, r.event, events...)
}

func TestEventReader(t *testing.T) {
	t.Parallel()
	r := replay(t,
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\".\"}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"pwd","input":{}}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_3","name":"cat","input":{"file":"a"}}}`,
		`{"type":"content_block_stop","index":3}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42}}`,
		`{"type":"message_stop"}`,
	)
	if r.Message.Reasoning() != "let me see" || r.Message.Parts[0].Signature != "SIG" {
		t.Fatalf("thinking %+v", r.Message.Parts)
	}
	calls := r.Message.ToolCalls()
	if len(calls) != 3 || string(calls[0].Args) != `{"path":"."}` || string(calls[1].Args) != `{}` || string(calls[2].Args) != `{"file":"a"}` {
		t.Fatalf("calls %+v", calls)
	}
	if r.Usage != (llm.Usage{InputTokens: 15, OutputTokens: 42, CachedInputTokens: 5}) || r.Finish != llm.FinishToolCalls {
		t.Fatalf("usage %+v finish %s", r.Usage, r.Finish)
	}
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]llm.FinishReason{
		"end_turn": llm.FinishStop, "stop_sequence": llm.FinishStop, "tool_use": llm.FinishToolCalls,
		"max_tokens": llm.FinishLength, "model_context_window_exceeded": llm.FinishLength,
		"refusal": llm.FinishContentFilter, "pause_turn": llm.FinishOther,
	} {
		if got := stopReason(in); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                           "https://api.anthropic.com/",
		"https://api.anthropic.com":  "https://api.anthropic.com/",
		"http://127.0.0.1:8080/v1":   "http://127.0.0.1:8080/",
		"http://127.0.0.1:8080/v1/":  "http://127.0.0.1:8080/",
		"https://proxy.example/anth": "https://proxy.example/anth/",
	} {
		if got := BaseURL(in); got != want {
			t.Errorf("BaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}
