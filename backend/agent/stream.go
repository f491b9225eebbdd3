package agent

import (
	"context"
	"errors"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Stream sends one turn and collects the reply, publishing its text (and reasoning) as it
// arrives. Near the model's window the conversation is compacted first; when the provider
// still answers "context length exceeded", it is compacted harder and the same turn sent
// again, a bounded number of times. On an error the reply holds what arrived before it.
func (a *Agent) Stream(ctx context.Context, t Turn) (llm.Reply, error) {
	a.fit(ctx, t)
	for attempt := 0; ; attempt++ {
		req := a.Request(t)
		s, err := a.Model.Provider.Stream(ctx, req)
		if err != nil {
			if errors.Is(err, llm.ContextTooLong) && attempt < maxContextRetries && ctx.Err() == nil && a.recover(ctx, t, req, err, attempt) {
				continue
			}
			return llm.Reply{Message: llm.Message{Role: llm.RoleAssistant}}, err
		}
		reply, err := llm.Collect(s, func(ev llm.Event) {
			if (ev.Kind == llm.EventText || ev.Kind == llm.EventReasoning) && ev.Text != "" {
				a.publish(Event{Kind: EventDelta, Text: ev.Text, Reasoning: ev.Kind == llm.EventReasoning})
			}
		})
		if err == nil {
			a.observe(req, reply.Usage)
		}
		return reply, err
	}
}
