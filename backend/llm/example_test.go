package llm_test

import (
	"fmt"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A tools.Definition becomes a ToolDef in one line.
func ExampleToolDef() {
	defs := []tools.Definition{{Name: "read_file", Description: "Read a file.", Schema: []byte(`{"type":"object"}`), Risk: tools.ReadOnly}}
	var req llm.Request
	for _, d := range defs {
		req.Tools = append(req.Tools, llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema})
	}
	fmt.Println(req.Tools[0].Name, string(req.Tools[0].Schema))
	// Output: read_file {"type":"object"}
}

// A turn that read most of its input from the provider's prompt cache costs a fraction of
// the same turn uncached.
func ExampleCost() {
	price := llm.Price{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, CacheWritePerMTok: 3.75}
	uncached := llm.Usage{InputTokens: 12_000, OutputTokens: 800}
	cached := llm.Usage{InputTokens: 12_000, OutputTokens: 800, CachedInputTokens: 11_000, CacheWriteTokens: 500}
	fmt.Printf("$%.4f $%.5f\n", llm.Cost(uncached, price), llm.Cost(cached, price))
	// Output: $0.0480 $0.01868
}
