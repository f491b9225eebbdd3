package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// The Goal Runner's and the chat's calls answer alike at their REST routes and at
// /api/rpc/{name}: a message that could not be sent comes back with its text (for the input)
// on both, the workspace's chat routes from before it had several conversations act on its
// current one, and a control of an unknown goal is 404 on both.
func TestGoalAndChatCallsAnswerAlikeOnBothDoors(t *testing.T) {
	h, tok := newLoggedIn(t)
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

// A workspace export comes back in two ways: the raw file at POST /api/workspaces/import (for
// scripts) and the UI's call ImportWorkspace, whose argument is the file's text. Both add the
// workspace; a file over the import limit is refused with the import's own words on both, not
// with the size of the JSON that carried it (a file's quotes grow when sent as a JSON string).
func TestImportWorkspaceAsRawFileAndAsTheUIsCall(t *testing.T) {
	h, tok := newLoggedIn(t)
	list, _ := h.ws.List(context.Background())
	resp, file := h.do(t, "GET", "/api/workspaces/"+list.Workspaces[0].ID+"/export", tok, "")
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d %s", resp.StatusCode, file)
	}
	if resp, body := h.do(t, "POST", "/api/workspaces/import", tok, file); resp.StatusCode != 201 || !strings.Contains(body, `"id":"ws-`) {
		t.Fatalf("raw import: %d %s", resp.StatusCode, body)
	}
	args, _ := json.Marshal(map[string]string{"text": file})
	if resp, body := h.do(t, "POST", "/api/rpc/ImportWorkspace", tok, string(args)); resp.StatusCode != 200 || !strings.Contains(body, `"id":"ws-`) {
		t.Fatalf("import call: %d %s", resp.StatusCode, body)
	}
	if after, _ := h.ws.List(context.Background()); len(after.Workspaces) != len(list.Workspaces)+2 {
		t.Errorf("workspaces after two imports: %d, want %d", len(after.Workspaces), len(list.Workspaces)+2)
	}
	// Just over the limit, and mostly quotes: as a JSON string it is nearly twice as long.
	big := `{"name":"` + strings.Repeat(`"`, workspace.MaxImportBytes/2) + strings.Repeat(" ", workspace.MaxImportBytes/2) + `"}`
	args, _ = json.Marshal(map[string]string{"text": big})
	resp, body := h.do(t, "POST", "/api/rpc/ImportWorkspace", tok, string(args))
	if resp.StatusCode != 400 || !strings.Contains(body, "a workspace export is at most") {
		t.Errorf("an oversized file: %d %.300s, want 400 saying how large an export may be", resp.StatusCode, body)
	}
}
