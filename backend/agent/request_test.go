package agent_test

import (
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// The per-turn context message is the newest message of the request and nothing else: the
// system prompt and the conversation before it stay byte for byte what they were, which is
// what lets a provider's prompt cache hold.
func TestTheTurnContextIsTheNewestMessageOnly(t *testing.T) {
	t.Parallel()
	a := &agent.Agent{Model: agent.Model{MaxTokens: 100}}
	conv := []llm.Message{llm.UserText("goal"), llm.AssistantText("working")}
	req := a.Request(agent.Turn{System: "stable", Messages: conv, Context: "CHECKLIST: 1. [ ] x", NoTools: true})
	if len(req.Messages) != 3 || req.Messages[2].Text() != llm.ContextHeader+"\nCHECKLIST: 1. [ ] x" || req.Messages[2].Role != llm.RoleUser || req.System != "stable" {
		t.Fatalf("request %+v", req)
	}
	if len(conv) != 2 {
		t.Fatal("the context message leaked into the conversation")
	}
	if req := a.Request(agent.Turn{System: "stable", Messages: conv, NoTools: true}); len(req.Messages) != 2 {
		t.Fatalf("no context, yet %d messages", len(req.Messages))
	}
}
