package openai

import (
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire/wiretest"
)

// replay feeds chunk JSON through a chunkReader and collects the reply.
func replay(t *testing.T, chunks ...string) llm.Reply {
	t.Helper()
	r := &chunkReader{}
	return wiretest.Replay(t, &r.turn, r.chunk, chunks...)
}

func TestChunkReaderServerQuirks(t *testing.T) {
	t.Parallel()
	t.Run("parallel calls all at index 0 with their own ids", func(t *testing.T) {
		t.Parallel()
		r := replay(t,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{\"n\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		)
		calls := r.Message.ToolCalls()
		if len(calls) != 2 || calls[0].ID != "a" || string(calls[0].Args) != `{"n":1}` || calls[1].ID != "b" || calls[1].Name != "y" {
			t.Fatalf("calls %+v", calls)
		}
	})
	t.Run("whole call in one chunk and finish stop, as Ollama sends", func(t *testing.T) {
		t.Parallel()
		r := replay(t,
			`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		)
		if r.Finish != llm.FinishToolCalls || len(r.Message.ToolCalls()) != 1 {
			t.Fatalf("finish %s calls %+v", r.Finish, r.Message.ToolCalls())
		}
	})
	t.Run("arguments before the name and an id repeated on every fragment", func(t *testing.T) {
		t.Parallel()
		r := replay(t,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{\"q\""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"search","arguments":":1}"}}]}}]}`,
		)
		calls := r.Message.ToolCalls()
		if len(calls) != 1 || calls[0].Name != "search" || string(calls[0].Args) != `{"q":1}` {
			t.Fatalf("calls %+v", calls)
		}
	})
	t.Run("reasoning field and no finish reason", func(t *testing.T) {
		t.Parallel()
		r := replay(t,
			`{"choices":[{"index":0,"delta":{"reasoning":"hmm "}}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"ok","content":"Yes"}}]}`,
			`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
		)
		if r.Message.Reasoning() != "hmm ok" || r.Message.Text() != "Yes" || r.Finish != llm.FinishStop || r.Usage.Total() != 5 {
			t.Fatalf("reply %+v", r)
		}
	})
	t.Run("content filter", func(t *testing.T) {
		t.Parallel()
		r := replay(t, `{"choices":[{"index":0,"delta":{"content":"I can"},"finish_reason":"content_filter"}]}`)
		if r.Finish != llm.FinishContentFilter || r.Stall() == "" {
			t.Fatalf("finish %s", r.Finish)
		}
	})
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                "https://api.openai.com/v1/",
		"http://localhost:11434":          "http://localhost:11434/v1/",
		"http://localhost:11434/":         "http://localhost:11434/v1/",
		"http://localhost:1234/v1":        "http://localhost:1234/v1/",
		"https://openrouter.ai/api/v1/":   "https://openrouter.ai/api/v1/",
		"http://127.0.0.1:8000/custom/v1": "http://127.0.0.1:8000/custom/v1/",
	} {
		if got := BaseURL(in); got != want {
			t.Errorf("BaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewChecksKind(t *testing.T) {
	t.Parallel()
	if _, err := New(llm.Config{Name: "x", Kind: llm.KindAnthropic, Model: "m", APIKey: "k"}); err == nil {
		t.Fatal("an anthropic config made an openai provider")
	}
}
