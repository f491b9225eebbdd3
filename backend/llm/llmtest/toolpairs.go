package llmtest

import (
	"fmt"
	"strings"
)

// Both real APIs refuse a conversation in which a tool call has no result right after it
// (OpenAI: tool messages answering each tool_call_id; Anthropic: tool_result blocks in the
// next user message). The scripted server refuses it the same way, with the providers' own
// 400, so a client that loses a result after a crash fails here as it would there.

// unansweredCalls returns the provider's refusal for the first assistant message whose tool
// calls are not all answered before the next assistant or user message, or "".
func unansweredCalls(rec Request) string {
	msgs, _ := rec.JSON["messages"].([]any)
	if rec.Protocol == "anthropic" {
		return anthropicUnanswered(msgs)
	}
	return openaiUnanswered(msgs)
}

func openaiUnanswered(msgs []any) string {
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		calls, _ := m["tool_calls"].([]any)
		if m["role"] != "assistant" || len(calls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for _, next := range msgs[i+1:] {
			n, _ := next.(map[string]any)
			if n["role"] != "tool" {
				break
			}
			id, _ := n["tool_call_id"].(string)
			answered[id] = true
		}
		var missing []string
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			if id, _ := cm["id"].(string); !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
				"The following tool_call_ids did not have response messages: " + strings.Join(missing, ", ")
		}
	}
	return ""
}

func anthropicUnanswered(msgs []any) string {
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		if m["role"] != "assistant" {
			continue
		}
		var uses []string
		for _, b := range blocks(m) {
			if b["type"] == "tool_use" {
				id, _ := b["id"].(string)
				uses = append(uses, id)
			}
		}
		if len(uses) == 0 {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(msgs) {
			if n, _ := msgs[i+1].(map[string]any); n["role"] == "user" {
				for _, b := range blocks(n) {
					if b["type"] == "tool_result" {
						id, _ := b["tool_use_id"].(string)
						answered[id] = true
					}
				}
			}
		}
		var missing []string
		for _, id := range uses {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
		}
	}
	return ""
}

// blocks is a message's content as blocks (a plain string has none).
func blocks(m map[string]any) []map[string]any {
	list, _ := m["content"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, b := range list {
		if bm, ok := b.(map[string]any); ok {
			out = append(out, bm)
		}
	}
	return out
}
