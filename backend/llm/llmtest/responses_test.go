package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func postResponses(t *testing.T, s *Server, key, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", s.OpenAIURL()+"/responses", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// The Responses API as Codex CLI reads it: typed events with increasing sequence numbers,
// each event's name equal to its type; a message item's text in output_text deltas, a
// function call's arguments in deltas that add up to them, and response.completed with
// every item and the usage. The request's instructions, user text and function output are
// read as the other protocols' are.
func TestResponsesStreamsItemsAsTheRealAPI(t *testing.T) {
	s := New(t, Script{APIKey: "k", Replies: []Reply{{Reasoning: "plan", Text: "Hello there", ToolCalls: []ToolCall{
		{ID: "call_1", Name: "shell", Args: json.RawMessage(`{"command":["ls","-la"]}`), Fragments: 4}}}}})
	res := postResponses(t, s, "k", `{"model":"m1","stream":true,"instructions":"You are Codex",
		"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"dev note"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]},
		{"type":"function_call","call_id":"c0","name":"shell","arguments":"{}"},
		{"type":"function_call_output","call_id":"c0","output":"earlier result"}]}`)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var types []string
	var text, args string
	var completed map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			event = name
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if e["type"] != event || e["sequence_number"] != float64(len(types)) {
			t.Errorf("event %q carries type %v sequence %v, want its name and %d", event, e["type"], e["sequence_number"], len(types))
		}
		types = append(types, event)
		switch event {
		case "response.output_text.delta":
			text += e["delta"].(string)
		case "response.function_call_arguments.delta":
			args += e["delta"].(string)
		case "response.completed":
			completed = e["response"].(map[string]any)
		}
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" || text != "Hello there" || args != `{"command":["ls","-la"]}` {
		t.Fatalf("events %v text %q args %q", types, text, args)
	}
	out := completed["output"].([]any)
	if len(out) != 3 || out[0].(map[string]any)["type"] != "reasoning" || out[2].(map[string]any)["call_id"] != "call_1" ||
		completed["status"] != "completed" || completed["usage"].(map[string]any)["output_tokens"] == nil {
		t.Errorf("completed response: %v", completed)
	}
	r := s.Requests()[0]
	if r.Protocol != "responses" || r.System != "You are Codex\ndev note" || r.LastUser != "list files" || r.LastToolResult() != "earlier result" {
		t.Errorf("request read as %q system %q user %q tool result %q", r.Protocol, r.System, r.LastUser, r.LastToolResult())
	}
}

// Without stream, one response object; a reply cut at its length is incomplete; a wrong key
// gets OpenAI's 401 error JSON.
func TestResponsesWholeIncompleteAndErrors(t *testing.T) {
	s := New(t, Script{APIKey: "k", Replies: []Reply{{Text: "cut", Finish: "length"}}})
	res := postResponses(t, s, "k", `{"model":"m","input":"hi"}`)
	var resp map[string]any
	json.NewDecoder(res.Body).Decode(&resp)
	if resp["object"] != "response" || resp["status"] != "incomplete" || resp["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
		t.Errorf("whole: %v", resp)
	}
	bad := postResponses(t, s, "wrong", `{"model":"m","input":"hi"}`)
	b, _ := io.ReadAll(bad.Body)
	if bad.StatusCode != 401 || !strings.Contains(string(b), `"code":"invalid_api_key"`) {
		t.Errorf("wrong key: %d %s", bad.StatusCode, b)
	}
}
