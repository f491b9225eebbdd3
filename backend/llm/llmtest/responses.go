package llmtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesProtocol answers as OpenAI's Responses API (POST /v1/responses) does, which Codex
// CLI speaks: a response object whose output is a list of items (reasoning, a message with
// output_text parts, function calls), streamed as typed events each carrying a
// sequence_number. Errors are the same JSON as Chat Completions' (see openaiProtocol.fail);
// a stream that cannot finish its reply ends with response.incomplete.
type responsesProtocol struct{}

func (responsesProtocol) fail(w http.ResponseWriter, rec Request, f Fault) {
	openaiProtocol{}.fail(w, rec, f)
}

func (responsesProtocol) models(w http.ResponseWriter, ids []string) {
	openaiProtocol{}.models(w, ids)
}

// responseItems are the reply's output items, complete, and their ids.
func responseItems(r Reply, seq int) []obj {
	var items []obj
	if r.Reasoning != "" {
		items = append(items, obj{"id": fmt.Sprintf("rs_scripted_%d", seq), "type": "reasoning",
			"summary": []obj{{"type": "summary_text", "text": r.Reasoning}}})
	}
	if c := r.content(); c != "" {
		items = append(items, obj{"id": fmt.Sprintf("msg_scripted_%d", seq), "type": "message", "status": "completed", "role": "assistant",
			"content": []obj{{"type": "output_text", "text": c, "annotations": []obj{}}}})
	}
	for i, c := range r.ToolCalls {
		items = append(items, obj{"id": fmt.Sprintf("fc_scripted_%d_%d", seq, i), "type": "function_call", "status": "completed",
			"call_id": openaiCallID(c, i), "name": c.Name, "arguments": c.argsText()})
	}
	return items
}

// responseObject is the whole response: status completed, or incomplete for a reply cut at
// its length or by a content filter, as the real API reports them.
func responseObject(rec Request, r Reply, seq int, status string, output []obj) obj {
	resp := obj{"id": fmt.Sprintf("resp_scripted_%d", seq), "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": rec.Model, "output": output, "error": nil, "incomplete_details": nil,
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []obj{}}
	if status == "in_progress" {
		return resp
	}
	switch r.Finish {
	case "length":
		resp["status"], resp["incomplete_details"] = "incomplete", obj{"reason": "max_output_tokens"}
	case "content_filter":
		resp["status"], resp["incomplete_details"] = "incomplete", obj{"reason": "content_filter"}
	}
	u := r.Usage
	resp["usage"] = obj{"input_tokens": u.Input, "input_tokens_details": obj{"cached_tokens": u.Cached},
		"output_tokens": u.Output, "output_tokens_details": obj{"reasoning_tokens": len(r.Reasoning) / charsPerToken},
		"total_tokens": u.Input + u.Output}
	return resp
}

// stream sends the reply as the Responses API does: response.created and in_progress; per
// item output_item.added, its deltas (a reasoning summary, output_text, function call
// arguments) and their done events, output_item.done; then response.completed (or
// response.incomplete) with the whole response and its usage.
func (responsesProtocol) stream(o *output, rec Request, r Reply, seq int) {
	n := 0
	send := func(typ string, fields obj) bool {
		fields["type"], fields["sequence_number"] = typ, n
		n++
		return o.event(typ, fields)
	}
	if !send("response.created", obj{"response": responseObject(rec, r, seq, "in_progress", []obj{})}) ||
		!send("response.in_progress", obj{"response": responseObject(rec, r, seq, "in_progress", []obj{})}) {
		return
	}
	items := responseItems(r, seq)
	for idx, item := range items {
		id := item["id"]
		added := obj{}
		for k, v := range item {
			added[k] = v
		}
		switch item["type"] {
		case "reasoning":
			added["summary"] = []obj{}
		case "message":
			added["status"], added["content"] = "in_progress", []obj{}
		case "function_call":
			added["status"], added["arguments"] = "in_progress", ""
		}
		if !send("response.output_item.added", obj{"output_index": idx, "item": added}) {
			return
		}
		ok := true
		switch item["type"] {
		case "reasoning":
			ok = streamText(send, r.Reasoning, r.chunks(), obj{"item_id": id, "output_index": idx, "summary_index": 0},
				"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
				"response.reasoning_summary_part.done", obj{"type": "summary_text"})
		case "message":
			ok = streamText(send, r.content(), r.chunks(), obj{"item_id": id, "output_index": idx, "content_index": 0},
				"response.content_part.added", "response.output_text.delta", "response.output_text.done",
				"response.content_part.done", obj{"type": "output_text", "annotations": []obj{}})
		case "function_call":
			c := r.ToolCalls[idx-(len(items)-len(r.ToolCalls))]
			for _, frag := range split(c.argsText(), c.fragments()) {
				if ok = send("response.function_call_arguments.delta", obj{"item_id": id, "output_index": idx, "delta": frag}); !ok {
					break
				}
			}
			ok = ok && send("response.function_call_arguments.done", obj{"item_id": id, "output_index": idx, "arguments": c.argsText()})
		}
		if !ok || !send("response.output_item.done", obj{"output_index": idx, "item": item}) {
			return
		}
	}
	final := responseObject(rec, r, seq, "completed", items)
	if final["status"] == "incomplete" {
		send("response.incomplete", obj{"response": final})
		return
	}
	send("response.completed", obj{"response": final})
}

// streamText sends one text of an item: its part added (empty), deltas, the text done, and
// the part done (whole).
func streamText(send func(string, obj) bool, text string, chunks int, at obj, added, delta, done, partDone string, part obj) bool {
	with := func(extra obj) obj {
		m := obj{}
		for k, v := range at {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	partWith := func(t string) obj {
		p := obj{"text": t}
		for k, v := range part {
			p[k] = v
		}
		return p
	}
	if !send(added, with(obj{"part": partWith("")})) {
		return false
	}
	for _, piece := range split(text, chunks) {
		if !send(delta, with(obj{"delta": piece})) {
			return false
		}
	}
	return send(done, with(obj{"text": text})) && send(partDone, with(obj{"part": partWith(text)}))
}

// whole sends the reply as one response object.
func (responsesProtocol) whole(o *output, rec Request, r Reply, seq int) {
	o.json(responseObject(rec, r, seq, "completed", responseItems(r, seq)))
}

// parseResponses fills in a Responses request's system prompt (instructions and developer
// or system messages) and last user text from its input items.
func parseResponses(rec *Request) {
	j := rec.JSON
	var system []string
	if s, _ := j["instructions"].(string); s != "" {
		system = append(system, s)
	}
	switch in := j["input"].(type) {
	case string:
		rec.LastUser = in
	case []any:
		for _, raw := range in {
			m, _ := raw.(map[string]any)
			if t, _ := m["type"].(string); t != "" && t != "message" {
				continue
			}
			text := responsesText(m["content"])
			switch m["role"] {
			case "system", "developer":
				system = append(system, text)
			case "user":
				if text != "" {
					rec.LastUser = text
				}
			}
		}
	}
	rec.System = strings.Join(system, "\n")
}

// responsesText joins a Responses content value: a string, or input_text/output_text parts.
func responsesText(v any) string {
	parts, ok := v.([]any)
	if !ok {
		s, _ := v.(string)
		return s
	}
	var out []string
	for _, p := range parts {
		m, _ := p.(map[string]any)
		if t, _ := m["text"].(string); t != "" && (m["type"] == "input_text" || m["type"] == "output_text" || m["type"] == "text") {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// lastFunctionOutput is the output of the newest function_call_output input item ("" if none).
func lastFunctionOutput(j map[string]any) (string, bool) {
	in, _ := j["input"].([]any)
	for i := len(in) - 1; i >= 0; i-- {
		m, _ := in[i].(map[string]any)
		if m["type"] == "function_call_output" || m["type"] == "custom_tool_call_output" {
			if s, ok := m["output"].(string); ok {
				return s, true
			}
			return responsesText(m["output"]), true
		}
	}
	return "", false
}
