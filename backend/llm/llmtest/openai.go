package llmtest

import (
	"fmt"
	"net/http"
	"time"
)

// openaiProtocol answers as OpenAI's Chat Completions API does.
type openaiProtocol struct{}

type obj = map[string]any

func (openaiProtocol) fail(w http.ResponseWriter, rec Request, f Fault) {
	code, typ, msg := "", "invalid_request_error", ""
	switch f.Status {
	case http.StatusUnauthorized:
		code, msg = "invalid_api_key", "Incorrect API key provided. You can find your API key in your account settings."
	case http.StatusNotFound:
		code, msg = "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", rec.Model)
	case http.StatusTooManyRequests:
		code, typ, msg = "rate_limit_exceeded", "requests", "Rate limit reached for requests. Please try again later."
	case http.StatusBadRequest:
		msg = "Invalid request."
	default:
		if f.Status >= 500 {
			code, typ, msg = "server_error", "server_error", "The server had an error while processing your request."
		}
	}
	if f.Message != "" {
		msg = f.Message
	}
	if f.Code != "" {
		code = f.Code
	}
	retryAfterHeader(w, f)
	var c any
	if code != "" {
		c = code
	}
	writeJSON(w, f.Status, obj{"error": obj{"message": msg, "type": typ, "param": nil, "code": c}})
}

func (openaiProtocol) models(w http.ResponseWriter, ids []string) {
	var data []obj
	for _, id := range ids {
		data = append(data, obj{"id": id, "object": "model", "created": 1700000000, "owned_by": "scripted-model"})
	}
	writeJSON(w, http.StatusOK, obj{"object": "list", "data": data})
}

func openaiFinish(r Reply) string {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func openaiCallID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_scripted_%d", i)
}

func openaiUsage(u *Usage) obj {
	return obj{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details": obj{"cached_tokens": u.Cached}}
}

// stream sends the reply as OpenAI does: a role chunk, reasoning_content and content
// deltas, tool calls whose first fragment carries index, id and name and whose later ones
// carry only index and an argument piece, a chunk with the finish_reason, a usage chunk with
// no choices when stream_options.include_usage asked for one, and data: [DONE].
func (openaiProtocol) stream(o *output, rec Request, r Reply, seq int) {
	id := fmt.Sprintf("chatcmpl-scripted-%d", seq)
	model := rec.Model
	chunk := func(delta obj, finish any) obj {
		return obj{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []obj{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	if !o.event("", chunk(obj{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for _, piece := range split(r.Reasoning, r.chunks()) {
		if !o.event("", chunk(obj{"reasoning_content": piece}, nil)) {
			return
		}
	}
	for _, piece := range split(r.content(), r.chunks()) {
		if !o.event("", chunk(obj{"content": piece}, nil)) {
			return
		}
	}
	for i, c := range r.ToolCalls {
		frags := split(c.argsText(), c.fragments())
		if len(frags) == 0 {
			frags = []string{""}
		}
		for k, frag := range frags {
			call := obj{"index": i, "function": obj{"arguments": frag}}
			if k == 0 {
				call = obj{"index": i, "id": openaiCallID(c, i), "type": "function", "function": obj{"name": c.Name, "arguments": frag}}
			}
			if !o.event("", chunk(obj{"tool_calls": []obj{call}}, nil)) {
				return
			}
		}
	}
	if !o.event("", chunk(obj{}, openaiFinish(r))) {
		return
	}
	if opts, _ := rec.JSON["stream_options"].(map[string]any); opts != nil && opts["include_usage"] == true {
		u := obj{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []obj{}, "usage": openaiUsage(r.Usage)}
		if !o.event("", u) {
			return
		}
	}
	o.event("", "[DONE]")
}

// whole sends the reply as one chat.completion object.
func (openaiProtocol) whole(o *output, rec Request, r Reply, seq int) {
	msg := obj{"role": "assistant", "content": nil, "refusal": nil}
	if c := r.content(); c != "" {
		msg["content"] = c
	}
	if r.Reasoning != "" {
		msg["reasoning_content"] = r.Reasoning
	}
	var calls []obj
	for i, c := range r.ToolCalls {
		calls = append(calls, obj{"id": openaiCallID(c, i), "type": "function", "function": obj{"name": c.Name, "arguments": c.argsText()}})
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	o.json(obj{
		"id": fmt.Sprintf("chatcmpl-scripted-%d", seq), "object": "chat.completion", "created": time.Now().Unix(), "model": rec.Model,
		"choices": []obj{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": openaiFinish(r)}},
		"usage":   openaiUsage(r.Usage),
	})
}
