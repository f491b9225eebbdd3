package chat

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// withModel is m asking for another of its provider's models: every request it sends names
// model (llm.Request.Model), which the provider sends instead of its configured one. Its
// price is unknown (the table's entry was for the configured model).
func withModel(m agent.Model, model string) agent.Model {
	m.Provider = modelProvider{Provider: m.Provider, model: model}
	m.ModelID, m.Price = model, nil
	return m
}

// modelProvider fills in the model of requests that do not name one.
type modelProvider struct {
	llm.Provider
	model string
}

func (p modelProvider) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	if req.Model == "" {
		req.Model = p.model
	}
	return p.Provider.Stream(ctx, req)
}

func (p modelProvider) Complete(ctx context.Context, req llm.Request) (llm.Reply, error) {
	if req.Model == "" {
		req.Model = p.model
	}
	return p.Provider.Complete(ctx, req)
}
