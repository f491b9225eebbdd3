// Package providers builds a Provider from a Config. It sits apart from package llm
// because the protocol packages import llm, so llm cannot import them.
package providers

import (
	"fmt"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/anthropic"
	"github.com/clusterspace/clusterspace/backend/llm/openai"
)

// New returns the provider cfg describes. A config that does not validate returns its
// field errors (see llm.Config.Validate).
func New(cfg llm.Config, opts ...llm.Option) (llm.Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("provider %q: %w", cfg.Name, err)
	}
	switch cfg.Kind {
	case llm.KindOpenAI:
		return openai.New(cfg, opts...)
	case llm.KindAnthropic:
		return anthropic.New(cfg, opts...)
	}
	// Validate already refuses other kinds; this keeps the switch honest if one is added.
	return nil, fmt.Errorf("provider %q: unknown kind %q", cfg.Name, cfg.Kind)
}
