package llm

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
