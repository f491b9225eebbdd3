package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// post sends a chat request and returns the response.
func post(t *testing.T, url string, header map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// sse reads a whole event stream into (event name, data) pairs.
func sse(t *testing.T, r io.Reader) [][2]string {
	t.Helper()
	var out [][2]string
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, [2]string{name, strings.TrimPrefix(line, "data: ")})
			name = ""
		case line != "":
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func TestOpenAIStreamWireFormat(t *testing.T) {
	t.Parallel()
	srv := New(t, Script{Replies: []Reply{{
		Reasoning: "why", Think: "hm", Text: "Hi!", Chunks: 2,
		ToolCalls: []ToolCall{{Name: "a", Args: json.RawMessage(`{"x": 1}`), Fragments: 3}, {ID: "given", Name: "b"}},
		Usage:     &Usage{Input: 7, Output: 3},
	}}})
	res := post(t, srv.OpenAIURL()+"/chat/completions", nil,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"hello"}]}]}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := sse(t, res.Body)
	last := events[len(events)-1]
	if last != [2]string{"", "[DONE]"} {
		t.Fatalf("stream ends with %v, not [DONE]", last)
	}
	var chunks []map[string]any
	for _, ev := range events[:len(events)-1] {
		var c map[string]any
		if err := json.Unmarshal([]byte(ev[1]), &c); err != nil {
			t.Fatalf("chunk %q: %v", ev[1], err)
		}
		if c["object"] != "chat.completion.chunk" || c["model"] != "m" {
			t.Fatalf("chunk %v", c)
		}
		chunks = append(chunks, c)
	}
	delta := func(c map[string]any) map[string]any {
		return c["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	var reasoning, content string
	var calls []map[string]any
	for _, c := range chunks[:len(chunks)-1] {
		if choices := c["choices"].([]any); len(choices) == 0 {
			continue
		}
		d := delta(c)
		reasoning += str(d["reasoning_content"])
		content += str(d["content"])
		if tc, ok := d["tool_calls"].([]any); ok {
			calls = append(calls, tc[0].(map[string]any))
		}
	}
	if reasoning != "why" || content != "<think>hm</think>Hi!" {
		t.Fatalf("reasoning %q content %q", reasoning, content)
	}
	// Call a: 3 fragments, the first with id, type and name; call b ("{}"): 2 fragments.
	if len(calls) != 5 || calls[0]["id"] != "call_scripted_0" || calls[0]["type"] != "function" || calls[1]["id"] != nil || calls[3]["id"] != "given" || calls[4]["index"] != 1.0 {
		t.Fatalf("tool call fragments %v", calls)
	}
	args := ""
	for _, c := range calls[:3] {
		args += str(c["function"].(map[string]any)["arguments"])
	}
	if args != `{"x":1}` {
		t.Fatalf("arguments joined %q", args)
	}
	finish := chunks[len(chunks)-2]["choices"].([]any)[0].(map[string]any)["finish_reason"]
	usage := chunks[len(chunks)-1]
	if finish != "tool_calls" || len(usage["choices"].([]any)) != 0 || usage["usage"].(map[string]any)["total_tokens"] != 10.0 {
		t.Fatalf("finish %v usage chunk %v", finish, usage)
	}
	rec := srv.Requests()[0]
	if rec.System != "sys" || rec.LastUser != "hello" || !rec.Stream || rec.Protocol != "openai" || rec.Answer != "replies[0]" {
		t.Fatalf("record %+v", rec)
	}
}

func TestAnthropicStreamWireFormat(t *testing.T) {
	t.Parallel()
	srv := New(t, Script{Replies: []Reply{{
		Reasoning: "why", Text: "Hi!", Chunks: 2,
		ToolCalls: []ToolCall{{Name: "a", RawArgs: `{"x": 1`, Fragments: 2}},
		Usage:     &Usage{Input: 7, Output: 3},
	}}})
	res := post(t, srv.URL+"/v1/messages", map[string]string{"anthropic-version": "2023-06-01"},
		`{"model":"claude","stream":true,"max_tokens":10,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":"hello"}]}`)
	events := sse(t, res.Body)
	var names []string
	for _, ev := range events {
		var data map[string]any
		if err := json.Unmarshal([]byte(ev[1]), &data); err != nil || data["type"] != ev[0] {
			t.Fatalf("event %q has data %q", ev[0], ev[1])
		}
		names = append(names, ev[0])
	}
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " + // thinking + signature
		"content_block_start content_block_delta content_block_delta content_block_stop " + // text
		"content_block_start content_block_delta content_block_delta content_block_stop " + // tool_use
		"message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	for _, part := range []string{
		`"content_block":{"signature":"","thinking":"","type":"thinking"}`,
		`"delta":{"thinking":"w","type":"thinking_delta"}`,
		`"type":"signature_delta"`,
		`"delta":{"text":"H","type":"text_delta"}`,
		`"content_block":{"id":"toolu_scripted_0","input":{},"name":"a","type":"tool_use"}`,
		`"delta":{"partial_json":"{\"x","type":"input_json_delta"}`,
		`"delta":{"stop_reason":"tool_use","stop_sequence":null}`,
		`"usage":{"output_tokens":3}`,
		`"usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":7,"output_tokens":1}`,
	} {
		found := false
		for _, ev := range events {
			found = found || strings.Contains(ev[1], part)
		}
		if !found {
			t.Errorf("no event holds %s", part)
		}
	}
	if rec := srv.Requests()[0]; rec.System != "sys" || rec.LastUser != "hello" || rec.Protocol != "anthropic" {
		t.Fatalf("record %+v", rec)
	}
}

func str(v any) string { s, _ := v.(string); return s }

func TestFaultsAndAuth(t *testing.T) {
	t.Parallel()
	srv := New(t, Script{APIKey: "k", Replies: []Reply{RateLimited(7), Failing(404)}})
	auth := map[string]string{"Authorization": "Bearer k"}
	res := post(t, srv.OpenAIURL()+"/chat/completions", auth, `{"model":"m","messages":[]}`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "7" {
		t.Fatalf("status %d retry-after %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	res = post(t, srv.URL+"/v1/messages", map[string]string{"x-api-key": "k"}, `{"model":"nope","messages":[]}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 404 || !strings.Contains(string(body), `"type":"not_found_error"`) || !strings.Contains(string(body), "model: nope") {
		t.Fatalf("404: %d %s", res.StatusCode, body)
	}
	res = post(t, srv.OpenAIURL()+"/chat/completions", map[string]string{"Authorization": "Bearer wrong"}, `{}`)
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != 401 || !strings.Contains(string(body), "invalid_api_key") {
		t.Fatalf("401: %d %s", res.StatusCode, body)
	}
	if srv.Remaining() != 0 || len(srv.Requests()) != 3 {
		t.Fatalf("remaining %d, requests %d", srv.Remaining(), len(srv.Requests()))
	}
}

func TestRolesOrderedRepeatAndPush(t *testing.T) {
	t.Parallel()
	srv := New(t, Script{
		Roles:   []Role{{Name: "judge", Match: Match{System: "judge", LastUser: "verdict"}, Reply: Text("PASS")}},
		Replies: []Reply{{Text: "one", Repeat: 2}},
	})
	ask := func(system, user string) string {
		res := post(t, srv.OpenAIURL()+"/chat/completions", nil,
			`{"model":"m","messages":[{"role":"system","content":"`+system+`"},{"role":"user","content":"`+user+`"}]}`)
		var c struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		json.NewDecoder(res.Body).Decode(&c)
		if len(c.Choices) == 0 {
			return ""
		}
		return c.Choices[0].Message.Content
	}
	// The judge role needs both its system and its user text; "other" falls through to the
	// ordered replies, and the role answers again after that.
	got := []string{ask("agent", "go"), ask("you judge", "verdict?"), ask("you judge", "other"), ask("you judge", "verdict!")}
	srv.Push(Text("two"))
	got = append(got, ask("agent", "go"))
	if strings.Join(got, ",") != "one,PASS,one,PASS,two" {
		t.Fatalf("answers %q", got)
	}
	if srv.Remaining() != 0 {
		t.Fatalf("remaining %d", srv.Remaining())
	}
}

// failRecorder is a testing.TB that records Errorf instead of failing.
type failRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *failRecorder) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, format)
}

func TestExhaustedScript(t *testing.T) {
	t.Parallel()
	rec := &failRecorder{TB: t}
	srv := New(rec, Script{})
	res := post(t, srv.OpenAIURL()+"/chat/completions", nil, `{"model":"m","messages":[]}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 500 || res.Header.Get("x-should-retry") != "false" || !strings.Contains(string(body), "the script is exhausted") {
		t.Fatalf("%d %q %s", res.StatusCode, res.Header.Get("x-should-retry"), body)
	}
	if len(rec.errs) != 1 {
		t.Fatalf("the test was not failed: %v", rec.errs)
	}
}

func TestStallHoldsUntilClientLeavesOrServerCloses(t *testing.T) {
	t.Parallel()
	srv := New(nil, Script{Replies: []Reply{{Text: "abc", Chunks: 3, Fault: &Fault{Stall: true, StallAfter: 2}}}})
	res := post(t, srv.OpenAIURL()+"/chat/completions", nil, `{"model":"m","stream":true,"messages":[]}`)
	rd := bufio.NewReader(res.Body)
	for range 2 {
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "data: ") {
			t.Fatalf("%q %v", line, err)
		}
		rd.ReadString('\n') // the blank line after each event
	}
	got := make(chan error, 1)
	go func() { _, err := rd.ReadString('\n'); got <- err }()
	select {
	case err := <-got:
		t.Fatalf("the stream went on after the stall: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	start := time.Now()
	srv.Close()
	<-got
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %s with a stalled stream", d)
	}
}

func TestModelsBothProtocols(t *testing.T) {
	t.Parallel()
	srv := New(t, Script{Models: []string{"a", "b"}})
	get := func(header map[string]string) string {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/models", nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if o := get(nil); !strings.Contains(o, `"object":"list"`) || !strings.Contains(o, `"owned_by"`) {
		t.Errorf("openai models %s", o)
	}
	if a := get(map[string]string{"anthropic-version": "2023-06-01"}); !strings.Contains(a, `"has_more":false`) || !strings.Contains(a, `"display_name":"a"`) {
		t.Errorf("anthropic models %s", a)
	}
}

func TestScriptFiles(t *testing.T) {
	t.Parallel()
	s, err := LoadScript("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Replies) != 5 || len(s.Roles) != 1 || s.APIKey == "" {
		t.Fatalf("example script %+v", s)
	}
	for _, bad := range []string{
		`{"replies":[{"txt":"typo"}]}`,
		`{"replies":[{"toolCalls":[{"args":{}}]}]}`,
		`{"roles":[{"name":"all","reply":{"text":"x"}}]}`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) accepted it", bad)
		}
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	if got := split("héllo wörld", 4); strings.Join(got, "") != "héllo wörld" || len(got) != 4 {
		t.Fatalf("split %q", got)
	}
	if got := split("ab", 5); len(got) != 2 {
		t.Fatalf("split %q", got)
	}
	if split("", 3) != nil {
		t.Fatal("split of nothing")
	}
}

func TestAssistantTurns(t *testing.T) {
	var r Request
	if err := json.Unmarshal([]byte(`{"messages": [{"role": "system"}, {"role": "user"}, {"role": "assistant"},
		{"role": "tool"}, {"role": "assistant"}, {"role": "user"}]}`), &r.JSON); err != nil {
		t.Fatal(err)
	}
	if n := r.AssistantTurns(); n != 2 {
		t.Errorf("two assistant messages counted as %d turns", n)
	}
	if n := (Request{}).AssistantTurns(); n != 0 {
		t.Errorf("a request that is not JSON counted as %d turns", n)
	}
}

// ByPane tells the agents of panes apart by the pane their goal prompt names, answers each
// with the pane and turn, and keeps their requests; a request naming no pane is not kept.
func TestByPane(t *testing.T) {
	p := ByPane(func(pane string, turn int, _ Request) Reply { return Text(pane) })
	answer := p.Reply().Compute
	first := Request{Body: []byte(`{"messages":[{"role":"user","content":"You are working in pane build-term.\n\nBuild."}]}`)}
	first.JSON = map[string]any{"messages": []any{map[string]any{"role": "user"}}}
	second := Request{Body: first.Body, JSON: map[string]any{"messages": []any{map[string]any{"role": "user"}, map[string]any{"role": "assistant"}}}}
	for _, c := range []struct {
		req  Request
		want string
	}{{first, "build-term"}, {Request{Body: []byte(`{"messages":[]}`)}, "no pane in this request"}, {second, "build-term"}} {
		if got := answer(c.req).Text; got != c.want {
			t.Errorf("answered %q, want %q", got, c.want)
		}
	}
	if got := strings.Join(p.Order(), ","); got != "build-term:0,build-term:1" {
		t.Errorf("order %s, want build-term:0,build-term:1", got)
	}
	if n := len(p.Requests("build-term")); n != 2 {
		t.Errorf("%d requests kept for build-term, want 2", n)
	}
}
