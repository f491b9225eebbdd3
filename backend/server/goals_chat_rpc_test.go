package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The Goal Runner's and the chat's calls answer alike at their REST routes and at
// /api/rpc/{name}: a message that could not be sent comes back with its text (for the input)
// on both, the workspace's chat routes from before it had several conversations act on its
// current one, and a control of an unknown goal is 404 on both.
func TestGoalAndChatCallsAnswerAlikeOnBothDoors(t *testing.T) {
	h := newHarness(t)
	tok := h.login(t).AccessToken
	list, _ := h.ws.List(context.Background())
	ws := list.ActiveID
	_, body := h.do(t, "GET", "/api/workspaces/"+ws+"/chats", tok, "")
	var convs struct {
		Conversations []struct{ ConversationID string }
	}
	json.Unmarshal([]byte(body), &convs)
	if len(convs.Conversations) != 1 {
		t.Fatalf("conversations: %s", body)
	}
	conv := convs.Conversations[0].ConversationID

	type answer struct {
		status int
		body   string
	}
	ask := func(method, path, body string) answer {
		resp, b := h.do(t, method, path, tok, body)
		return answer{resp.StatusCode, b}
	}
	for name, doors := range map[string][]answer{
		"a message that could not be sent": {
			ask("POST", "/api/workspaces/"+ws+"/chat/messages", `{"text":"hello","images":[]}`),
			ask("POST", "/api/chats/"+conv+"/messages", `{"text":"hello","images":[]}`),
			ask("POST", "/api/rpc/ChatSend", `{"conversationId":"`+conv+`","text":"hello","images":[]}`),
			ask("POST", "/api/rpc/ChatSend", `{"workspaceId":"`+ws+`","text":"hello","images":[]}`),
		},
		"an empty message": {
			ask("POST", "/api/chats/"+conv+"/messages", `{"text":"  "}`),
			ask("POST", "/api/rpc/ChatSend", `{"conversationId":"`+conv+`","text":"  "}`),
		},
		"pausing an unknown goal": {
			ask("POST", "/api/goals/goal-nope/pause", ""),
			ask("POST", "/api/rpc/PauseGoal", `{"id":"goal-nope"}`),
		},
		"answering an approval nobody waits for": {
			ask("POST", "/api/approvals/appr-nope", `{"status":"deny","reason":""}`),
			ask("POST", "/api/rpc/AnswerApproval", `{"id":"appr-nope","status":"deny","reason":""}`),
		},
	} {
		for _, d := range doors[1:] {
			if d != doors[0] {
				t.Errorf("%s: the doors differ: %d %s and %d %s", name, doors[0].status, doors[0].body, d.status, d.body)
			}
		}
		if doors[0].status < 400 {
			t.Errorf("%s: not refused: %d %s", name, doors[0].status, doors[0].body)
		}
	}
	var refused struct{ Error, Field, Text string }
	json.Unmarshal([]byte(ask("POST", "/api/rpc/ChatSend", `{"conversationId":"`+conv+`","text":"hello","images":[]}`).body), &refused)
	if refused.Text != "hello" || refused.Error == "" {
		t.Errorf("a refused message does not come back with its text: %+v", refused)
	}
	if a := ask("POST", "/api/rpc/ChatSend", `{"text":"hello"}`); a.status != http.StatusBadRequest || !strings.Contains(a.body, `"field":"conversationId"`) {
		t.Errorf("a message for no conversation: %d %s", a.status, a.body)
	}
	// The step log's page is bounded alike on both doors, and an unknown goal's log is 404.
	if a, b := ask("GET", "/api/goals/goal-nope/steps?after=0&limit=9999", ""), ask("POST", "/api/rpc/GoalSteps", `{"id":"goal-nope","after":0,"limit":9999}`); a != b {
		t.Errorf("the step log differs: %v and %v", a, b)
	}
}
