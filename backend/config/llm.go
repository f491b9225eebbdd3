package config

import (
	"context"
	"log/slog"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

// LLMConfig is the model layer's view of a resolved provider, key included.
func (r Resolved) LLMConfig() llm.Config {
	return llm.Config{Name: r.Name, Kind: r.Kind, BaseURL: r.BaseURL, Model: r.Model, VisionModel: r.VisionModel,
		APIKey: r.APIKey, Temperature: r.Temperature, MaxTokens: r.MaxTokens, Thinking: r.Thinking, ContextWindow: r.ContextWindow}
}

// LLMTester tests providers by calling them through the model layer.
type LLMTester struct {
	Logger *slog.Logger
}

// Test lists the provider's models (or sends a one-token chat) and reports what happened.
func (t LLMTester) Test(ctx context.Context, p Resolved) TestResult {
	opts := []llm.Option{}
	if t.Logger != nil {
		opts = append(opts, llm.WithLogger(t.Logger))
	}
	cfg := p.LLMConfig()
	if cfg.Model == "" {
		// An unsaved form tested before a model is chosen: the test lists the models to pick
		// from, and the model layer only wants some name to start.
		cfg.Model = "unset"
	}
	prov, err := providers.New(cfg, opts...)
	if err != nil {
		return TestResult{Message: err.Error()}
	}
	c := providers.Test(ctx, prov, p.Model)
	return TestResult{OK: c.OK, Message: c.Message, Models: c.Models, LatencyMS: c.Latency.Milliseconds()}
}
