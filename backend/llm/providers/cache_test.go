package providers_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// cachedConversation is a conversation long enough to be cached (over 1,024 tokens), with a
// tool, and a per-turn context message at its end.
func cachedConversation(extra ...llm.Message) llm.Request {
	msgs := []llm.Message{
		llm.UserText("GOAL: " + strings.Repeat("count the sensors carefully; ", 200)),
		llm.AssistantMessage(llm.ToolCallPart(llm.ToolCall{ID: "call_1", Name: "probe", Args: json.RawMessage(`{"i":1}`)})),
		llm.ToolMessage(llm.ToolResult{CallID: "call_1", Name: "probe", Text: "sensor 1 ok"}),
	}
	msgs = append(msgs, extra...)
	msgs = append(msgs, llm.UserText("CURRENT CHECKLIST: 1. [ ] probe"))
	return llm.Request{System: "You are the agent.", Messages: msgs, CacheKey: "goal-123", Volatile: 1,
		Tools: []llm.ToolDef{{Name: "probe", Description: "Probe a sensor.", Schema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}}}`)}}}
}

// With a cache key, an Anthropic request carries cache_control on the last tool, the system
// prompt and the newest stable block (the tool result, not the per-turn context after it):
// three breakpoints, within the API's four. An OpenAI-compatible request carries the key as
// prompt_cache_key. Both read the cached tokens the server reports on the next request.
func TestCacheMarkersAndCachedUsage(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{llm.KindOpenAI, llm.KindAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("one"), llmtest.Text("two")}})
			first := cachedConversation()
			r.mustStream(t, first)
			reply, _ := r.mustStream(t, cachedConversation(llm.AssistantText("one"), llm.UserText("go on")))
			reqs := r.srv.ChatRequests()
			j := reqs[0].JSON
			if kind == llm.KindOpenAI {
				if j["prompt_cache_key"] != "goal-123" {
					t.Fatalf("prompt_cache_key %v", j["prompt_cache_key"])
				}
			} else {
				body := string(reqs[0].Body)
				if n := strings.Count(body, `"cache_control"`); n != 3 {
					t.Fatalf("%d breakpoints: %s", n, body)
				}
				tools := j["tools"].([]any)
				system := j["system"].([]any)
				msgs := j["messages"].([]any)
				last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
				result, context := last[len(last)-2].(map[string]any), last[len(last)-1].(map[string]any)
				if tools[0].(map[string]any)["cache_control"] == nil || system[0].(map[string]any)["cache_control"] == nil ||
					result["type"] != "tool_result" || result["cache_control"] == nil || context["cache_control"] != nil {
					t.Fatalf("breakpoints misplaced: %s", body)
				}
			}
			if reply.Usage.CachedInputTokens == 0 || reply.Usage.CachedInputTokens >= reply.Usage.InputTokens {
				t.Fatalf("the second request's usage %+v reads no cached input", reply.Usage)
			}
			if want := reqs[1].Usage; reply.Usage.InputTokens != want.Input || reply.Usage.CachedInputTokens != want.Cached || reply.Usage.CacheWriteTokens != want.CacheWrite {
				t.Fatalf("usage %+v, the server reported %+v", reply.Usage, *want)
			}
		})
	}
}

// Without a cache key nothing cache-related is sent, for servers that know no such fields.
func TestNoCacheKeyNoMarkers(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{llm.KindOpenAI, llm.KindAnthropic} {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("ok")}})
		req := cachedConversation()
		req.CacheKey = ""
		r.mustStream(t, req)
		if body := string(r.srv.ChatRequests()[0].Body); strings.Contains(body, "cache_control") || strings.Contains(body, "prompt_cache_key") {
			t.Fatalf("%s: cache fields without a key: %s", kind, body)
		}
	}
}

// A server past its context limit answers 400 in each API's own words, which both providers
// read as llm.ContextTooLong.
func TestContextLimitIsContextTooLong(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{llm.KindOpenAI, llm.KindAnthropic} {
		r := newRig(t, kind, llmtest.Script{ContextLimit: 100})
		_, _, err := r.stream(t, cachedConversation())
		if !errors.Is(err, llm.ContextTooLong) {
			t.Fatalf("%s: %v", kind, err)
		}
		if a := r.srv.ChatRequests()[0].Answer; a != "context_length_exceeded" {
			t.Fatalf("%s: answered %s", kind, a)
		}
	}
}
