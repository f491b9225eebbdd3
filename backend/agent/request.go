package agent

import (
	"github.com/clusterspace/clusterspace/backend/llm"
)

// Turn is what one model turn is built from.
type Turn struct {
	// System is the stable head of every request; keep what changes out of it, so the
	// provider's prompt cache holds.
	System   string
	Messages []llm.Message // the whole conversation so far
	// Context is the per-turn context message: what is true now (a checklist, the panes),
	// sent as the newest message of this request only, never part of the conversation.
	Context string
	NoTools bool // a turn that must answer in words (the final report, a critic)
}

// Request builds the request of a turn: the conversation as compacted so far (see
// Compaction), with the latest pictures only, the per-turn context last, the offered tools,
// and the conversation's cache key. Everything before the context message is what the
// previous request sent plus what was appended since, so the provider's prompt cache holds.
func (a *Agent) Request(t Turn) llm.Request {
	// Built on the last turn's view, so it costs what was appended since: owners only append
	// to a conversation and never edit a message sent (see view). The messages are the
	// agent's own until its next request.
	msgs := a.window.sent.messages(t.Messages, a.Compaction, a.stub)
	volatile := 0
	if t.Context != "" {
		msgs = append(msgs, llm.UserText(llm.ContextText(t.Context)))
		volatile = 1
	}
	system := t.System
	if a.Instructions != "" {
		system += "\n\n" + a.Instructions
	}
	req := llm.Request{System: system, Messages: msgs, MaxTokens: a.Model.MaxTokens, Temperature: a.Temperature,
		CacheKey: a.ConversationID, Volatile: volatile}
	if !t.NoTools {
		req.Tools = a.offerFor(t.Messages)
		a.noteProblems()
	}
	return req
}

// ToolDefs describes the tools this agent is offered: every tool it may call, sorted by name,
// or with ByNeed the list sent so far (offer.go).
func (a *Agent) ToolDefs() []llm.ToolDef { return a.offeredDefs() }
