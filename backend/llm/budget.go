package llm

import (
	"fmt"
	"slices"
)

const (
	// charsPerToken is the usual estimate for English text and code when no count is known.
	charsPerToken = 4
	// imageTokens is a flat estimate per image: providers charge from about 85 to about
	// 1,600 tokens for one, depending on its size; a screenshot is near the top.
	imageTokens = 1500
	// messageOverheadTokens covers the role markers and framing every message costs.
	messageOverheadTokens = 4
	// defaultReplyTokens is kept free for the reply when the request names no limit.
	defaultReplyTokens = 4096
)

// Budget is what the context budget needs to know.
type Budget struct {
	// Window is the model's context size in tokens; 0 means unknown and nothing is dropped.
	Window int
	// Reserve is kept free for the reply; 0 means the request's MaxTokens, else 4096.
	Reserve int
	// Last is the usage the provider reported for the previous call, if any; with it the
	// estimate follows the model's own tokenizer instead of ~4 characters a token.
	Last *Usage
	// LastMessages is how many of the request's messages that call covered, its reply
	// included (len(messages) right after appending the reply).
	LastMessages int
}

// EstimateTokens guesses the tokens of a message at ~4 characters a token.
func EstimateTokens(m Message) int {
	chars, images := 0, 0
	for _, p := range m.Parts {
		chars += len(p.Text)
		switch {
		case p.Image != nil:
			images++
		case p.ToolCall != nil:
			chars += len(p.ToolCall.Name) + len(p.ToolCall.Args) + len(p.ToolCall.RawArgs)
		case p.ToolResult != nil:
			chars += len(p.ToolResult.Text)
			images += len(p.ToolResult.Images)
		}
	}
	return messageOverheadTokens + chars/charsPerToken + images*imageTokens
}

// EstimateRequest guesses the input tokens of a whole request at ~4 characters a token.
func EstimateRequest(req Request) int {
	n := estimateFixed(req)
	for _, m := range req.Messages {
		n += EstimateTokens(m)
	}
	return n
}

// ReserveFor is what a request keeps free for the reply within window: its MaxTokens, else
// 4096, but never more than a quarter of a small window.
func ReserveFor(req Request, window int) int {
	r := req.MaxTokens
	if r <= 0 {
		r = defaultReplyTokens
	}
	return min(r, window/4)
}

// estimateFixed guesses the tokens of the system prompt and the tool definitions.
func estimateFixed(req Request) int {
	chars := len(req.System)
	for _, t := range req.Tools {
		chars += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return chars / charsPerToken
}

// Fit drops the oldest turns of req until it fits b, and returns the trimmed request and
// how many messages were dropped. It never drops the system prompt, the first user message
// (the goal prompt) or the latest turn; a tool call goes with its results. When it drops
// anything it inserts a user message saying so after the goal prompt. Call it on the whole
// history before each call; the result is for sending, not for keeping.
func Fit(req Request, b Budget) (Request, int) {
	if b.Window <= 0 || len(req.Messages) == 0 {
		return req, 0
	}
	reserve := b.Reserve
	if reserve <= 0 {
		reserve = req.MaxTokens
	}
	if reserve <= 0 {
		reserve = defaultReplyTokens
	}
	limit := b.Window - reserve

	costs := make([]int, len(req.Messages))
	for i, m := range req.Messages {
		costs[i] = EstimateTokens(m)
	}
	fixed := estimateFixed(req)
	total := fixed
	for _, c := range costs {
		total += c
	}
	if n := b.LastMessages; b.Last != nil && n > 0 && n <= len(costs) {
		// Scale the estimates so the covered part adds up to what the provider counted.
		covered := fixed
		for _, c := range costs[:n] {
			covered += c
		}
		if reported := b.Last.Total(); reported > 0 && covered > 0 {
			total = 0
			for i := range costs {
				costs[i] = costs[i] * reported / covered
				total += costs[i]
			}
			total += fixed * reported / covered
		}
	}
	if total <= limit {
		return req, 0
	}

	pinned := 1 + slices.IndexFunc(req.Messages, func(m Message) bool { return m.Role == RoleUser })
	units := turnUnits(req.Messages, pinned)
	if len(units) <= 1 {
		return req, 0
	}
	dropped, cut := 0, pinned
	total += EstimateTokens(DroppedNotice(len(req.Messages)))
	for _, u := range units[:len(units)-1] {
		if total <= limit {
			break
		}
		for i := u.start; i < u.end; i++ {
			total -= costs[i]
		}
		dropped += u.end - u.start
		cut = u.end
	}
	out := req
	out.Messages = make([]Message, 0, len(req.Messages)-dropped+1)
	out.Messages = append(out.Messages, req.Messages[:pinned]...)
	out.Messages = append(out.Messages, DroppedNotice(dropped))
	out.Messages = append(out.Messages, req.Messages[cut:]...)
	return out, dropped
}

// DroppedNotice is the message Fit inserts where it dropped n messages.
func DroppedNotice(n int) Message {
	return UserText(fmt.Sprintf("[Note: %d earlier messages were dropped to fit the model's context window. The goal above still stands; continue from the latest state below.]", n))
}

// unit is a run of messages dropped together: a message and the tool results after it.
type unit struct{ start, end int }

// turnUnits groups messages[from:] so that tool results stay with the call before them.
func turnUnits(msgs []Message, from int) []unit {
	var units []unit
	for i := from; i < len(msgs); i++ {
		if msgs[i].Role == RoleTool && len(units) > 0 {
			units[len(units)-1].end = i + 1
			continue
		}
		units = append(units, unit{start: i, end: i + 1})
	}
	return units
}
