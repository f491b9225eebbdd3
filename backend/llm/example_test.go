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

// A whole budget round: the provider reported 9,000 tokens for the last call, the
// window is 8,192, so the oldest turns go.
func ExampleFit() {
	req := llm.Request{System: "You are the agent.", Messages: []llm.Message{llm.UserText("Goal: fix the build.")}}
	for range 6 {
		req.Messages = append(req.Messages, llm.AssistantText("Working on it."), llm.UserText("Continue."))
	}
	last := llm.Usage{InputTokens: 9000, OutputTokens: 200}
	sent, dropped := llm.Fit(req, llm.Budget{Window: 8192, Reserve: 1024, Last: &last, LastMessages: len(req.Messages)})
	fmt.Println(dropped, sent.Messages[0].Text())
	// Output: 4 Goal: fix the build.
}

func ExampleCost() {
	u := llm.Usage{InputTokens: 12_000, OutputTokens: 800}
	fmt.Printf("$%.4f\n", llm.Cost(u, llm.Price{InputPerMTok: 3, OutputPerMTok: 15}))
	// Output: $0.0480
}
