package agent

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Stream sends one turn and collects the reply, publishing its text (and reasoning) as it
// arrives. On an error the reply holds what arrived before it.
func (a *Agent) Stream(ctx context.Context, t Turn) (llm.Reply, error) {
	req := a.Request(t)
	s, err := a.Model.Provider.Stream(ctx, req)
	if err != nil {
		return llm.Reply{Message: llm.Message{Role: llm.RoleAssistant}}, err
	}
	reply, err := llm.Collect(s, func(ev llm.Event) {
		if (ev.Kind == llm.EventText || ev.Kind == llm.EventReasoning) && ev.Text != "" {
			a.publish(Event{Kind: EventDelta, Text: ev.Text, Reasoning: ev.Kind == llm.EventReasoning})
		}
	})
	if err == nil {
		a.window.Observe(reply.Usage, len(t.Messages))
	}
	return reply, err
}
