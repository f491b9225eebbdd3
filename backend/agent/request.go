package agent

import (
	"fmt"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Window fits one conversation's requests to its model's context window, starting from the
// provider's own count for the request last sent.
type Window struct {
	last         *llm.Usage
	lastMessages int
	dropped      int
}

// Fit trims req (the whole history) to the window of m. news is true when the number of
// messages left out changed since the last request, which is worth telling the person.
func (w *Window) Fit(m Model, req llm.Request) (fitted llm.Request, dropped int, news bool) {
	if m.Window <= 0 {
		return req, 0, false
	}
	fitted, dropped = llm.Fit(req, llm.Budget{Window: m.Window, Last: w.last, LastMessages: w.lastMessages})
	news = dropped > 0 && dropped != w.dropped
	w.dropped = dropped
	return fitted, dropped, news
}

// Observe records the usage of a reply to a request of messages messages (the whole
// history as sent to Fit).
func (w *Window) Observe(u llm.Usage, messages int) {
	w.last, w.lastMessages = &u, messages+1
}

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

// Request builds the request of a turn: the conversation with the latest pictures only, the
// offered tools, fitted to the model's window (the person is told when messages are left out).
func (a *Agent) Request(t Turn) llm.Request {
	msgs := llm.KeepLastImages(t.Messages, KeptImages)
	if t.Context != "" {
		msgs = append(msgs, llm.UserText(t.Context))
	}
	req := llm.Request{System: t.System, Messages: msgs, MaxTokens: a.Model.MaxTokens}
	if !t.NoTools {
		req.Tools = a.ToolDefs()
	}
	fitted, dropped, news := a.window.Fit(a.Model, req)
	if news {
		a.publish(Event{Kind: EventNotice, Text: fmt.Sprintf(
			"the conversation outgrew the %s model's window: %d older messages were left out of its request", a.Model.Name, dropped)})
	}
	return fitted
}

// ToolDefs describes the tools this agent is offered, sorted by name.
func (a *Agent) ToolDefs() []llm.ToolDef {
	var defs []llm.ToolDef
	if a.Registry == nil {
		return nil
	}
	for _, d := range a.Registry.Definitions() {
		if a.offered(d.Name) {
			defs = append(defs, llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema})
		}
	}
	return defs
}
