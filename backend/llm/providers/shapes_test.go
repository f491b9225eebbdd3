package providers_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

var jpegBytes = []byte("\xff\xd8\xff\xe0fake-jpeg-body")

// roundTrip is a conversation with every kind of part: a user image, an assistant turn
// with signed reasoning, text and two tool calls, and their results, one with a screenshot.
func roundTrip() llm.Request {
	return llm.Request{
		System: "You are the agent.",
		Messages: []llm.Message{
			llm.UserText("What is on screen?", llm.Image{MediaType: "image/png", Data: pngBytes}),
			llm.AssistantMessage(
				llm.ReasoningPart("I should look closer.", "sig-abc"),
				llm.Text("Taking a screenshot."),
				llm.ToolCallPart(llm.ToolCall{ID: "call_1", Name: "screenshot", Args: json.RawMessage(`{"pane":1}`)}),
				llm.ToolCallPart(llm.ToolCall{ID: "call_2", Name: "read_file", RawArgs: `{"path": "a`, ArgsError: "read_file was not run: cut off."}),
			),
			llm.ToolMessage(
				llm.ToolResult{CallID: "call_1", Name: "screenshot", Text: "Captured pane 1.", Images: []llm.Image{{MediaType: "image/jpeg", Data: jpegBytes}}},
				llm.ToolResult{CallID: "call_2", Name: "read_file", Text: "read_file was not run: cut off.", IsError: true},
			),
		},
	}
}

func messagesOf(t *testing.T, srv *llmtest.Server) []map[string]any {
	t.Helper()
	raw, _ := srv.ChatRequests()[0].JSON["messages"].([]any)
	var out []map[string]any
	for _, m := range raw {
		out = append(out, m.(map[string]any))
	}
	return out
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestOpenAIRequestShape(t *testing.T) {
	t.Parallel()
	r := newRig(t, llm.KindOpenAI, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("ok")}},
		func(c *llm.Config) { c.MaxTokens = 333; c.Temperature = new(0.2) })
	if _, _, err := r.stream(t, roundTrip()); err != nil {
		t.Fatal(err)
	}
	rec := r.srv.ChatRequests()[0]
	if rec.Path != "/v1/chat/completions" {
		t.Errorf("path %s: a bare host did not get /v1", rec.Path)
	}
	if rec.JSON["max_tokens"] != 333.0 || rec.JSON["temperature"] != 0.2 {
		t.Errorf("options: max_tokens %v temperature %v", rec.JSON["max_tokens"], rec.JSON["temperature"])
	}
	if opts := asJSON(rec.JSON["stream_options"]); opts != `{"include_usage":true}` {
		t.Errorf("stream_options %s", opts)
	}
	msgs := messagesOf(t, r.srv)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool,user" {
		t.Fatalf("roles %v", roles)
	}
	pngURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes)
	if user := asJSON(msgs[1]["content"]); !strings.Contains(user, `{"image_url":{"url":"`+pngURL+`"},"type":"image_url"}`) || !strings.Contains(user, `"text":"What is on screen?"`) {
		t.Errorf("user content %s", user)
	}
	a := msgs[2]
	if a["content"] != "Taking a screenshot." || strings.Contains(asJSON(a), "I should look closer") {
		t.Errorf("assistant %s (reasoning must not be sent back)", asJSON(a))
	}
	calls := asJSON(a["tool_calls"])
	if !strings.Contains(calls, `"arguments":"{\"pane\":1}"`) || !strings.Contains(calls, `"arguments":"{\"path\": \"a"`) || !strings.Contains(calls, `"id":"call_2"`) {
		t.Errorf("tool_calls %s", calls)
	}
	if msgs[3]["tool_call_id"] != "call_1" || !strings.Contains(msgs[3]["content"].(string), "Captured pane 1.") {
		t.Errorf("tool message %s", asJSON(msgs[3]))
	}
	if msgs[4]["tool_call_id"] != "call_2" || !strings.HasPrefix(msgs[4]["content"].(string), "Error: ") {
		t.Errorf("error tool message %s", asJSON(msgs[4]))
	}
	jpegURL := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(jpegBytes)
	if follow := asJSON(msgs[5]["content"]); !strings.Contains(follow, jpegURL) || !strings.Contains(follow, "call_1") {
		t.Errorf("the screenshot did not follow the tool messages: %s", follow)
	}
}

func TestAnthropicRequestShape(t *testing.T) {
	t.Parallel()
	r := newRig(t, llm.KindAnthropic, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("ok")}},
		func(c *llm.Config) { c.BaseURL += "/v1"; c.Temperature = new(0.5) })
	req := roundTrip()
	req.Tools = []llm.ToolDef{{Name: "screenshot", Description: "Capture a pane.", Schema: json.RawMessage(`{"type":"object","properties":{"pane":{"type":"integer"}},"required":["pane"],"additionalProperties":false}`)}}
	if _, _, err := r.stream(t, req); err != nil {
		t.Fatal(err)
	}
	rec := r.srv.ChatRequests()[0]
	if rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != testKey || rec.Header.Get("Anthropic-Version") == "" {
		t.Errorf("path %s, headers %v", rec.Path, rec.Header)
	}
	if rec.JSON["max_tokens"] != 4096.0 || rec.JSON["temperature"] != 0.5 || asJSON(rec.JSON["system"]) != `[{"text":"You are the agent.","type":"text"}]` {
		t.Errorf("max_tokens %v temperature %v system %v", rec.JSON["max_tokens"], rec.JSON["temperature"], rec.JSON["system"])
	}
	if tools := asJSON(rec.JSON["tools"]); !strings.Contains(tools, `"input_schema":{"additionalProperties":false,"properties":{"pane":{"type":"integer"}},"required":["pane"],"type":"object"}`) {
		t.Errorf("tools %s", tools)
	}
	msgs := messagesOf(t, r.srv)
	if len(msgs) != 3 || msgs[0]["role"] != "user" || msgs[1]["role"] != "assistant" || msgs[2]["role"] != "user" {
		t.Fatalf("messages %s", asJSON(msgs))
	}
	png := base64.StdEncoding.EncodeToString(pngBytes)
	if user := asJSON(msgs[0]["content"]); !strings.Contains(user, `{"source":{"data":"`+png+`","media_type":"image/png","type":"base64"},"type":"image"}`) {
		t.Errorf("user content %s", user)
	}
	a := asJSON(msgs[1]["content"])
	for _, want := range []string{
		`{"signature":"sig-abc","thinking":"I should look closer.","type":"thinking"}`,
		`{"text":"Taking a screenshot.","type":"text"}`,
		`{"id":"call_1","input":{"pane":1},"name":"screenshot","type":"tool_use"}`,
		`{"id":"call_2","input":{},"name":"read_file","type":"tool_use"}`,
	} {
		if !strings.Contains(a, want) {
			t.Errorf("assistant content lacks %s:\n%s", want, a)
		}
	}
	jpeg := base64.StdEncoding.EncodeToString(jpegBytes)
	results := asJSON(msgs[2]["content"])
	for _, want := range []string{
		`{"content":[{"text":"Captured pane 1.","type":"text"},{"source":{"data":"` + jpeg + `","media_type":"image/jpeg","type":"base64"},"type":"image"}],"tool_use_id":"call_1","type":"tool_result"}`,
		`"is_error":true`,
		`"tool_use_id":"call_2"`,
	} {
		if !strings.Contains(results, want) {
			t.Errorf("tool results lack %s:\n%s", want, results)
		}
	}
}

func TestAnthropicThinkingToggle(t *testing.T) {
	t.Parallel()
	r := newRig(t, llm.KindAnthropic, llmtest.Script{Replies: []llmtest.Reply{{Reasoning: "thought", Text: "ok"}}},
		func(c *llm.Config) { c.Thinking = true; c.MaxTokens = 1000; c.Temperature = new(0.3) })
	if _, _, err := r.stream(t, ask("hi")); err != nil {
		t.Fatal(err)
	}
	rec := r.srv.ChatRequests()[0]
	if got := asJSON(rec.JSON["thinking"]); got != `{"budget_tokens":1024,"type":"enabled"}` {
		t.Errorf("thinking %s", got)
	}
	if rec.JSON["max_tokens"] != 2048.0 {
		t.Errorf("max_tokens %v: no room left to answer after thinking", rec.JSON["max_tokens"])
	}
	if _, ok := rec.JSON["temperature"]; ok {
		t.Error("temperature sent with thinking on")
	}
}

func TestBadImageIsABadRequest(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{})
		req := llm.Request{Messages: []llm.Message{llm.UserText("see", llm.Image{MediaType: "image/tiff", Data: []byte("II*")})}}
		_, _, err := r.stream(t, req)
		var e *llm.Error
		if !asLLM(err, &e) || e.Kind != llm.BadRequest || !strings.Contains(e.Message, "PNG or JPEG") {
			t.Fatalf("err %v", err)
		}
		if n := len(r.srv.Requests()); n != 0 {
			t.Errorf("a request with a bad image was sent")
		}
	})
}
