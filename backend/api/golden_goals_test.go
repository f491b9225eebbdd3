package api

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// TestGoldenGoalAndChatAnswers runs the Goal Runner's and the chat's calls on a real engine
// whose provider is the scripted model server, and compares their answers with the golden JSON
// the frontend's goal and chat tests read (src/lib/api/goals.test.ts, chat.test.ts). The goal
// takes a step, then asks to type in a terminal above its read-only ceiling, so the answers
// carry a step, the story's events and a waiting approval (whose args are the tool's own,
// snake_case as the model's tool schema names them).
func TestGoldenGoalAndChatAnswers(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		{ToolCalls: []llmtest.ToolCall{{ID: "call-1", Name: "write_todos", Args: json.RawMessage(`{"items": ["Read the notes", "Say hello"], "active_index": 0}`)}}},
		{ToolCalls: []llmtest.ToolCall{{ID: "call-2", Name: "write_to_terminal", Args: json.RawMessage(`{"pane_id": "term-1", "text": "echo hello"}`)}}},
		// The goal waits here, in its next model call, until it is aborted.
		{Fault: &llmtest.Fault{Stall: true}},
	}})
	g := newGoldenEngine(t)
	g.call("SaveProvider", `{"id": "", "input": {"name": "Scripted", "kind": "openai", "baseUrl": "`+model.OpenAIURL()+`", "model": "scripted-model", "visionModel": "", "temperature": null, "maxTokens": 0, "thinking": false, "contextWindow": 0}}`)
	_, l := g.workspaces()
	pane := l.Workspaces[0].Panes[0].ID

	answers := map[string]json.RawMessage{}
	started := g.call("StartGoal", `{"spec": {"paneId": "`+pane+`", "goal": "Plan, then say hello in the terminal", "criterion": {"kind": "manual"}, "policy": {"risk": "read_only"}, "settings": {"wallClock": "10m"}}}`)
	var goal struct {
		ID string `json:"id"`
	}
	json.Unmarshal(started, &goal)
	var approvals ApprovalsResult
	for deadline := time.Now().Add(20 * time.Second); len(approvals.Approvals) == 0; time.Sleep(50 * time.Millisecond) {
		answers["PendingApprovals"] = g.call("PendingApprovals", `{}`)
		json.Unmarshal(answers["PendingApprovals"], &approvals)
		if time.Now().After(deadline) {
			t.Fatalf("the goal did not ask to type in the terminal: %s", g.call("GoalEvents", `{"id": "`+goal.ID+`", "after": 0}`))
		}
	}
	answers["AnswerApproval"] = g.call("AnswerApproval", `{"id": "`+approvals.Approvals[0].ID+`", "status": "deny", "reason": "not now"}`)
	for deadline := time.Now().Add(20 * time.Second); model.Remaining() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the goal did not go on after the answer")
		}
	}
	answers["GoalSteps"] = g.call("GoalSteps", `{"id": "`+goal.ID+`", "after": 0, "limit": 0}`)
	g.call("AbortGoal", `{"id": "`+goal.ID+`"}`)
	answers["GetGoal"] = g.call("GetGoal", `{"id": "`+goal.ID+`"}`)
	answers["ListGoals"] = g.call("ListGoals", `{}`)
	answers["GoalEvents"] = g.call("GoalEvents", `{"id": "`+goal.ID+`", "after": 0}`)

	// The chat: the workspace's first conversation answers once.
	model.Push(llmtest.Reply{Text: "Hello! How can I help?"})
	var convs ConversationsResult
	answers["ChatConversations"] = g.call("ChatConversations", `{"workspaceId": "`+l.ActiveID+`"}`)
	json.Unmarshal(answers["ChatConversations"], &convs)
	conv := convs.Conversations[0].ConversationID
	g.call("ChatSend", `{"conversationId": "`+conv+`", "text": "Hello", "images": []}`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		answers["Chat"] = g.call("Chat", `{"conversationId": "`+conv+`"}`)
		var v ChatView
		json.Unmarshal(answers["Chat"], &v)
		if !v.State.Running && len(v.Messages) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chat did not answer: %s", answers["Chat"])
		}
	}
	answers["ChatCreate"] = g.call("ChatCreate", `{"workspaceId": "`+l.ActiveID+`", "input": {"title": "Deploy notes"}}`)
	answers["ChatSetCritic"] = g.call("ChatSetCritic", `{"conversationId": "`+conv+`", "on": true}`)
	checkGolden(t, answers,
		unstableValue{regexp.MustCompile(`"(goal|conv|chat|appr|approval)-[0-9a-f]{6,}"`), `"$1-0"`},
		unstableValue{regexp.MustCompile(`"(durationMs|elapsedMs|inputTokens|outputTokens|cachedInputTokens|cacheWriteTokens)":\s*\d+`), `"$1": 1`},
		unstableValue{regexp.MustCompile(`"costUsd":\s*[0-9.e-]+`), `"costUsd": 0`},
		unstableValue{regexp.MustCompile(`"workDir":\s*"[^"]*"`), `"workDir": "/home/me"`})
	if !strings.Contains(string(answers["PendingApprovals"]), `"goalId"`) {
		t.Errorf("a goal's approval does not say its goal: %s", answers["PendingApprovals"])
	}
}
