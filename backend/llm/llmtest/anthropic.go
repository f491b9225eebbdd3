package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicProtocol answers as Anthropic's Messages API does.
type anthropicProtocol struct{}

func (anthropicProtocol) fail(w http.ResponseWriter, rec Request, f Fault) {
	typ, msg := "invalid_request_error", "Invalid request."
	switch f.Status {
	case http.StatusUnauthorized:
		typ, msg = "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		typ, msg = "permission_error", "Your API key does not have permission to use the specified resource."
	case http.StatusNotFound:
		typ, msg = "not_found_error", "model: "+rec.Model
	case http.StatusRequestEntityTooLarge:
		typ, msg = "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case http.StatusTooManyRequests:
		typ, msg = "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."
	case 529:
		typ, msg = "overloaded_error", "Overloaded"
	default:
		if f.Status >= 500 {
			typ, msg = "api_error", "Internal server error"
		}
	}
	if f.Message != "" {
		msg = f.Message
	}
	if f.Code != "" {
		typ = f.Code
	}
	retryAfterHeader(w, f)
	w.Header().Set("request-id", "req_scripted")
	writeJSON(w, f.Status, obj{"type": "error", "error": obj{"type": typ, "message": msg}})
}

func (anthropicProtocol) models(w http.ResponseWriter, ids []string) {
	var data []obj
	for _, id := range ids {
		data = append(data, obj{"type": "model", "id": id, "display_name": id, "created_at": "2025-01-01T00:00:00Z"})
	}
	first, last := "", ""
	if len(ids) > 0 {
		first, last = ids[0], ids[len(ids)-1]
	}
	writeJSON(w, http.StatusOK, obj{"data": data, "has_more": false, "first_id": first, "last_id": last})
}

func anthropicStop(r Reply) string {
	switch r.Finish {
	case "stop":
		return "end_turn"
	case "tool_calls":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	case "":
		if len(r.ToolCalls) > 0 {
			return "tool_use"
		}
		return "end_turn"
	}
	return r.Finish
}

func anthropicCallID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("toolu_scripted_%d", i)
}

// anthropicUsage reports input as the API does: input_tokens only after the last cache
// breakpoint, the cache reads and writes apart.
func anthropicUsage(u *Usage, output int) obj {
	return obj{"input_tokens": max(0, u.Input-u.Cached-u.CacheWrite), "output_tokens": output,
		"cache_read_input_tokens": u.Cached, "cache_creation_input_tokens": u.CacheWrite}
}

func signature(seq int) string { return fmt.Sprintf("scripted-signature-%d", seq) }

// stream sends the reply as Anthropic does: message_start (with input usage), a ping, then
// per content block content_block_start / content_block_delta (thinking_delta and
// signature_delta, text_delta, input_json_delta) / content_block_stop, then message_delta
// (stop_reason, output usage) and message_stop.
func (anthropicProtocol) stream(o *output, rec Request, r Reply, seq int) {
	start := obj{"type": "message_start", "message": obj{
		"id": fmt.Sprintf("msg_scripted_%d", seq), "type": "message", "role": "assistant", "model": rec.Model,
		"content": []obj{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage(r.Usage, 1),
	}}
	if !o.event("message_start", start) || !o.event("ping", obj{"type": "ping"}) {
		return
	}
	index := 0
	block := func(startBlock obj, deltas []obj) bool {
		if !o.event("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": startBlock}) {
			return false
		}
		for _, d := range deltas {
			if !o.event("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d}) {
				return false
			}
		}
		ok := o.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
		return ok
	}
	if r.Reasoning != "" {
		var deltas []obj
		for _, piece := range split(r.Reasoning, r.chunks()) {
			deltas = append(deltas, obj{"type": "thinking_delta", "thinking": piece})
		}
		deltas = append(deltas, obj{"type": "signature_delta", "signature": signature(seq)})
		if !block(obj{"type": "thinking", "thinking": "", "signature": ""}, deltas) {
			return
		}
	}
	if c := r.content(); c != "" {
		var deltas []obj
		for _, piece := range split(c, r.chunks()) {
			deltas = append(deltas, obj{"type": "text_delta", "text": piece})
		}
		if !block(obj{"type": "text", "text": ""}, deltas) {
			return
		}
	}
	for i, c := range r.ToolCalls {
		var deltas []obj
		for _, frag := range split(c.argsText(), c.fragments()) {
			deltas = append(deltas, obj{"type": "input_json_delta", "partial_json": frag})
		}
		if !block(obj{"type": "tool_use", "id": anthropicCallID(c, i), "name": c.Name, "input": obj{}}, deltas) {
			return
		}
	}
	delta := obj{"type": "message_delta", "delta": obj{"stop_reason": anthropicStop(r), "stop_sequence": nil},
		"usage": obj{"output_tokens": r.Usage.Output}}
	if !o.event("message_delta", delta) {
		return
	}
	o.event("message_stop", obj{"type": "message_stop"})
}

// whole sends the reply as one message object.
func (anthropicProtocol) whole(o *output, rec Request, r Reply, seq int) {
	content := []obj{}
	if r.Reasoning != "" {
		content = append(content, obj{"type": "thinking", "thinking": r.Reasoning, "signature": signature(seq)})
	}
	if c := r.content(); c != "" {
		content = append(content, obj{"type": "text", "text": c})
	}
	for i, c := range r.ToolCalls {
		// The real API always sends an object; malformed scripted arguments go as a string.
		var input any = c.argsText()
		if raw := json.RawMessage(c.argsText()); json.Valid(raw) {
			input = raw
		}
		content = append(content, obj{"type": "tool_use", "id": anthropicCallID(c, i), "name": c.Name, "input": input})
	}
	o.json(obj{
		"id": fmt.Sprintf("msg_scripted_%d", seq), "type": "message", "role": "assistant", "model": rec.Model,
		"content": content, "stop_reason": anthropicStop(r), "stop_sequence": nil,
		"usage": anthropicUsage(r.Usage, r.Usage.Output),
	})
}
