package providers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Check is what "Test connection" found.
type Check struct {
	OK      bool
	Message string // for the person: what worked, or what failed and what to do
	Models  []string
	Latency time.Duration
}

// Test checks that p answers: it lists the models, and when the server cannot list them
// sends a one-token chat to model instead. A refused key is reported without the chat.
func Test(ctx context.Context, p llm.Provider, model string) Check {
	start := time.Now()
	models, err := p.ListModels(ctx)
	if err == nil {
		c := Check{OK: true, Latency: time.Since(start)}
		for _, m := range models {
			c.Models = append(c.Models, m.ID)
		}
		switch {
		case model != "" && !slices.Contains(c.Models, model):
			c.Message = fmt.Sprintf("connected; the server lists %s but not %q: pick one from the list", modelCount(len(c.Models)), model)
		default:
			c.Message = fmt.Sprintf("connected; the server lists %s", modelCount(len(c.Models)))
		}
		return c
	}
	if errors.Is(err, llm.Auth) || errors.Is(err, llm.Canceled) {
		return Check{Message: err.Error(), Latency: time.Since(start)}
	}
	// Some servers have no model list; a one-token chat shows whether they answer at all.
	start = time.Now()
	_, chatErr := p.Complete(ctx, llm.Request{Model: model, MaxTokens: 1, Messages: []llm.Message{llm.UserText("ping")}})
	if chatErr != nil {
		return Check{Message: chatErr.Error(), Latency: time.Since(start)}
	}
	return Check{OK: true, Latency: time.Since(start), Message: fmt.Sprintf("connected; %q answered (the server lists no models)", model)}
}

// modelCount is "1 model", "3 models".
func modelCount(n int) string {
	if n == 1 {
		return "1 model"
	}
	return fmt.Sprintf("%d models", n)
}
