// Package llmtest is a scripted model server for tests: a real HTTP server that speaks the
// OpenAI Chat Completions, OpenAI Responses (POST /v1/responses, as Codex CLI uses it) and
// Anthropic Messages protocols the way the real services stream them, and answers from a
// script instead of a model.
//
// Point a provider at Server.URL (both protocols are served there: OpenAI-style clients
// use URL+"/v1", Anthropic clients URL). Each chat request is answered by:
//  1. the first role whose Match fits the request (a critic or judge recognised by its
//     system prompt, say) — roles answer as often as they match; else
//  2. the next ordered reply, consumed in turn (Repeat serves one several times); else
//  3. HTTP 500 "the script is exhausted", with x-should-retry: false so clients fail at
//     once; with a testing.TB the test also fails, loudly.
//
// A reply is text, reasoning (reasoning_content / a thinking block), <think> text inside
// the content, tool calls (arguments as JSON, or a raw malformed string) split into
// fragments, usage and a finish reason — or a Fault: an HTTP error (429 with Retry-After,
// 500, 401, 404 model, …) or a stream that stalls after K events. Every request is recorded
// (Requests) for assertions.
//
// # Script files
//
// The same script is JSON for the scripted-model command (see testdata/example.json):
//
//	{
//	  "models": ["scripted-model"],          // GET /v1/models lists these
//	  "apiKey": "sk-test-…",                 // optional: other keys get 401
//	  "noModels": false,                     // true: GET /v1/models answers 404
//	  "roles": [
//	    {"name": "critic", "match": {"system": "You are the critic"},
//	     "reply": {"text": "PROGRESSING"}}
//	  ],
//	  "replies": [
//	    {"fault": {"status": 429, "retryAfter": 1}},
//	    {"think": "plan", "text": "Hello", "chunks": 4},
//	    {"toolCalls": [{"name": "read_file", "args": {"path": "a.txt"}, "fragments": 5}],
//	     "usage": {"input": 120, "output": 30}},
//	    {"toolCalls": [{"name": "read_file", "rawArgs": "```json\n{\"path\":\"b\"}\n```"}]},
//	    {"text": "partial", "fault": {"stall": true, "stallAfter": 3}},
//	    {"fault": {"status": 500}, "repeat": 4}
//	  ]
//	}
//
// Match fields (all given must hold): "system" and "lastUser" are substrings of the system
// prompt and of the last user message that has text; "model" and "protocol" ("openai",
// "responses", "anthropic") must equal. Reply fields: "text", "think", "reasoning", "toolCalls" (each
// "id", "name", "args" or "rawArgs", "fragments"), "usage" ("input", "output"), "finish"
// ("stop", "tool_calls", "length", "content_filter", or a protocol's own word), "chunks"
// (pieces per text, default 3), "chunkDelayMs", "repeat", "fault" ("status", "retryAfter"
// seconds, "message", "code", "stall", "stallAfter" events).
//
// Usage the script leaves out is estimated (~4 bytes of the request a token) and split the
// way each API reports its prompt cache, from a simulated cache (see cache.go): OpenAI's
// prompt_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens and
// cache_creation_input_tokens. A scripted "usage" may give "cached" and "cacheWrite" itself.
// "contextLimit" (tokens) answers longer requests with HTTP 400 "context length exceeded" in
// each API's shape; "forgetBodies" keeps only the newest request's body in the log.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Script is what the server answers.
type Script struct {
	Replies []Reply `json:"replies,omitempty"`
	Roles   []Role  `json:"roles,omitempty"`
	// Models are listed by GET /v1/models (default: "scripted-model").
	Models []string `json:"models,omitempty"`
	// APIKey, if set, is required: requests with another key get 401.
	APIKey string `json:"apiKey,omitempty"`
	// NoModels answers GET /v1/models with 404, as servers without a model list do.
	NoModels bool `json:"noModels,omitempty"`
	// ContextLimit, if set, answers a request of more tokens (~4 bytes of its JSON each) with
	// HTTP 400 "context length exceeded" in the protocol's own shape, as the real APIs do.
	ContextLimit int `json:"contextLimit,omitempty"`
	// ForgetBodies keeps only each request's summary and prefix in the log, and the body of
	// the newest: long benchmarks would otherwise hold every request they sent.
	ForgetBodies bool `json:"forgetBodies,omitempty"`
	// Lenient accepts a conversation with a tool call left without its result, which both
	// real APIs refuse with 400 (the default answer here too, see toolpairs.go).
	Lenient bool `json:"lenient,omitempty"`
}

// Role is a reply chosen by matching the request; it may answer any number of times.
type Role struct {
	Name  string `json:"name"`
	Match Match  `json:"match"`
	Reply Reply  `json:"reply"`
}

// Match selects requests; every field that is set must hold.
type Match struct {
	System   string `json:"system,omitempty"`   // the system prompt contains it
	LastUser string `json:"lastUser,omitempty"` // the last user message with text contains it
	Model    string `json:"model,omitempty"`    // the model equals it
	Protocol string `json:"protocol,omitempty"` // "openai" or "anthropic"
}

// Reply is one scripted answer.
type Reply struct {
	Text string `json:"text,omitempty"`
	// Think goes into the content as <think>Think</think> before Text.
	Think string `json:"think,omitempty"`
	// Reasoning is sent apart: reasoning_content (OpenAI) or a thinking block (Anthropic).
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Usage is reported as given; nil estimates it at ~4 characters a token.
	Usage *Usage `json:"usage,omitempty"`
	// Finish is "stop", "tool_calls", "length", "content_filter" or the protocol's own
	// word; empty means tool_calls when there are calls, else stop.
	Finish string `json:"finish,omitempty"`
	// Chunks is how many pieces each text is streamed in (default 3).
	Chunks       int `json:"chunks,omitempty"`
	ChunkDelayMs int `json:"chunkDelayMs,omitempty"`
	// Repeat serves an ordered reply this many times (default once).
	Repeat int    `json:"repeat,omitempty"`
	Fault  *Fault `json:"fault,omitempty"`
	// Compute, when set, makes the reply from the request it answers: a model that reads a
	// tool result (an id from list_panes, say) and uses it in its next call. Go scripts only.
	Compute func(Request) Reply `json:"-"`
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// RawArgs is sent verbatim instead of Args, to script malformed arguments.
	RawArgs string `json:"rawArgs,omitempty"`
	// Fragments is how many pieces the arguments are streamed in (default 3).
	Fragments int `json:"fragments,omitempty"`
}

// Usage is scripted token counts. Input counts every input token; Cached and CacheWrite say
// how many of them were read from and written to the prompt cache. Estimated usage (no
// Usage in the reply) fills them in from the simulated cache (see cache.go).
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	Cached     int `json:"cached,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
}

// Fault makes a reply fail.
type Fault struct {
	// Status answers with this HTTP error instead of a reply.
	Status int `json:"status,omitempty"`
	// RetryAfter is sent as the Retry-After header, in seconds.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Message and Code override the error's text and code (OpenAI) or type (Anthropic).
	Message string `json:"message,omitempty"`
	Code    string `json:"code,omitempty"`
	// Stall streams StallAfter events, then hangs until the client goes away.
	Stall      bool `json:"stall,omitempty"`
	StallAfter int  `json:"stallAfter,omitempty"`
}

// LoadScript reads a script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	return ParseScript(data)
}

// ParseScript reads a script from JSON, refusing unknown fields so a typo is not ignored.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("script: %w", err)
	}
	return s, s.check()
}

func (s Script) check() error {
	for i, r := range s.Replies {
		if err := r.check(); err != nil {
			return fmt.Errorf("script: replies[%d]: %w", i, err)
		}
	}
	for i, r := range s.Roles {
		if r.Match == (Match{}) {
			return fmt.Errorf("script: roles[%d] (%q) has an empty match, which would answer every request: give it a system, lastUser, model or protocol", i, r.Name)
		}
		if err := r.Reply.check(); err != nil {
			return fmt.Errorf("script: roles[%d]: %w", i, err)
		}
	}
	return nil
}

func (r Reply) check() error {
	for i, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("toolCalls[%d] has no name", i)
		}
		if len(c.Args) > 0 && !json.Valid(c.Args) {
			return fmt.Errorf("toolCalls[%d] (%s): args are not JSON: put malformed arguments in rawArgs", i, c.Name)
		}
	}
	return nil
}

// Text is a reply of plain text.
func Text(s string) Reply { return Reply{Text: s} }

// Calls is a reply of tool calls.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Call is a tool call with arguments marshalled from args.
func Call(name string, args any) ToolCall {
	data, err := json.Marshal(args)
	if err != nil {
		panic("llmtest.Call: " + err.Error())
	}
	return ToolCall{Name: name, Args: data}
}

// RateLimited is a 429 asking to wait retryAfter seconds.
func RateLimited(retryAfter int) Reply {
	return Reply{Fault: &Fault{Status: 429, RetryAfter: retryAfter}}
}

// Failing is an HTTP error with the given status (500, 401, 404, …).
func Failing(status int) Reply { return Reply{Fault: &Fault{Status: status}} }

// Stalled streams text for after events, then hangs until the client goes away.
func Stalled(text string, after int) Reply {
	return Reply{Text: text, Chunks: 4, Fault: &Fault{Stall: true, StallAfter: after}}
}
