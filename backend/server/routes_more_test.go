package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// TestProviderKeysNeverLeaveTheBackend adds a provider with a key through the API, then reads
// every GET route, the WebSocket events and the server log, and greps them all for the key.
func TestProviderKeysNeverLeaveTheBackend(t *testing.T) {
	h, tok := newLoggedIn(t)
	const key = "sk-proj-LEAKCANARY-1234567890abcdef"
	ctx, conn := h.openWS(t, tok, 10*time.Second)
	for h.providers.Events().Subscribers() == 0 {
		time.Sleep(5 * time.Millisecond)
	}

	resp, body := h.do(t, "POST", "/api/providers", tok, `{"name":"Canary","kind":"openai","model":"gpt-x","apiKey":"`+key+`"}`)
	if resp.StatusCode != 201 || !strings.Contains(body, `"apiKeySet":true`) || !strings.Contains(body, "sk-…cdef") {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var p config.Provider
	json.Unmarshal([]byte(body), &p)
	seen := []string{body}
	// Bad input that carries the key: the error must not echo it.
	_, body = h.do(t, "PUT", "/api/providers/"+p.ID, tok, `{"name":"Canary","kind":"nope","model":"m","apiKey":"`+key+`"}`)
	seen = append(seen, body)
	_, body = h.do(t, "PUT", "/api/providers/"+p.ID, tok, `{"name":"Canary","kind":"openai","model":"m","apiKey":"`+key+`","extra":1}`)
	seen = append(seen, body)
	for _, r := range h.srv.routes() {
		if r.method == "GET" && !strings.Contains(r.pattern, "{") && r.pattern != "/api/ws" {
			_, body := h.do(t, "GET", r.pattern, tok, "")
			seen = append(seen, body)
		}
	}
	_, msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, string(msg), h.logs.String())
	for i, s := range seen {
		if strings.Contains(s, "LEAKCANARY") {
			t.Errorf("output %d contains the API key: %s", i, s)
		}
	}
	if !strings.Contains(string(msg), `"topic":"providers"`) {
		t.Fatalf("no providers event: %s", msg)
	}
	// The backend still has it, for the runners.
	r, err := h.providers.Resolve(context.Background(), p.ID)
	if err != nil || r.APIKey != key {
		t.Fatalf("resolve: %v", err)
	}
}

func TestGoalStartRefusalsNameTheField(t *testing.T) {
	h, tok := newLoggedIn(t)
	list, _ := h.ws.List(context.Background())
	pane := list.Workspaces[0].Panes[0].ID
	for body, field := range map[string]string{
		`{"paneId":"` + pane + `","goal":"  ","criterion":{"kind":"manual"}}`:                         "goal",
		`{"paneId":"pane-nope","goal":"x","criterion":{"kind":"manual"}}`:                             "paneId",
		`{"paneId":"` + pane + `","goal":"x","criterion":{"kind":"manual"}}`:                          "settings.provider",
		`{"paneId":"` + pane + `","goal":"x","criterion":{"kind":"manual"},"policy":{"risk":"yolo"}}`: "",
	} {
		resp, raw := h.do(t, "POST", "/api/goals", tok, body)
		var e errorBody
		json.Unmarshal([]byte(raw), &e)
		if resp.StatusCode != 400 || e.Field != field {
			t.Errorf("%s: %d %s (want 400 on %q)", body, resp.StatusCode, raw, field)
		}
	}
	if resp, _ := h.do(t, "POST", "/api/goals/goal-nope/pause", tok, ""); resp.StatusCode != 404 {
		t.Errorf("pause of an unknown goal: %d", resp.StatusCode)
	}
	if resp, body := h.do(t, "GET", "/api/goals/goal-nope/steps/x/images/0", tok, ""); resp.StatusCode != 400 || !strings.Contains(body, "whole numbers") {
		t.Errorf("a step picture with a bad index: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.do(t, "GET", "/api/goals/goal-nope/steps/1/images/0", tok, ""); resp.StatusCode != 404 {
		t.Errorf("a picture of an unknown goal: %d", resp.StatusCode)
	}
}

func TestChatSendThatCannotStartReturnsTheText(t *testing.T) {
	h, tok := newLoggedIn(t)
	list, _ := h.ws.List(context.Background())
	ws := list.ActiveID
	resp, body := h.do(t, "POST", "/api/workspaces/"+ws+"/chat/messages", tok, `{"text":"summarise the build log"}`)
	var e struct{ Error, Text string }
	json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != http.StatusBadGateway || e.Text != "summarise the build log" || !strings.Contains(e.Error, "Settings → Providers") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "GET", "/api/workspaces/"+ws+"/chat", tok, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"messages":[`) {
		t.Fatalf("history: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.do(t, "PUT", "/api/workspaces/"+ws+"/chat/critic", tok, `{"on":true}`); resp.StatusCode != 200 {
		t.Fatalf("critic mode: %d", resp.StatusCode)
	}
	if _, body := h.do(t, "GET", "/api/workspaces/"+ws+"/chat", tok, ""); !strings.Contains(body, `"criticMode":true`) {
		t.Fatalf("critic mode not kept: %s", body)
	}
}

// A workspace's conversations through the API: start one, rename it (an empty title is
// refused with its field), read it, delete it; the workspace's own chat routes keep acting on
// its current conversation.
func TestChatConversationsRoutes(t *testing.T) {
	h, tok := newLoggedIn(t)
	list, _ := h.ws.List(context.Background())
	ws := list.ActiveID
	if resp, body := h.do(t, "PUT", "/api/workspaces/"+ws+"/chat/critic", tok, `{"on":true}`); resp.StatusCode != 200 {
		t.Fatalf("critic mode on the workspace's chat: %d %s", resp.StatusCode, body)
	}
	resp, body := h.do(t, "POST", "/api/workspaces/"+ws+"/chats", tok, `{"title":"Deploy notes"}`)
	var c struct {
		ConversationID, Title string
		CriticMode            bool
	}
	json.Unmarshal([]byte(body), &c)
	if resp.StatusCode != http.StatusCreated || c.ConversationID == "" || c.Title != "Deploy notes" || c.CriticMode {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var l struct {
		Conversations []struct{ ConversationID, Title string }
	}
	_, body = h.do(t, "GET", "/api/workspaces/"+ws+"/chats", tok, "")
	json.Unmarshal([]byte(body), &l)
	if len(l.Conversations) != 2 {
		t.Fatalf("list: %s", body)
	}
	if resp, body := h.do(t, "PUT", "/api/chats/"+c.ConversationID+"/title", tok, `{"title":" "}`); resp.StatusCode != 400 || !strings.Contains(body, `"field":"title"`) {
		t.Fatalf("empty title: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "PUT", "/api/chats/"+c.ConversationID+"/title", tok, `{"title":"Deploy"}`); resp.StatusCode != 200 || !strings.Contains(body, `"title":"Deploy"`) {
		t.Fatalf("rename: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "GET", "/api/chats/"+c.ConversationID, tok, ""); resp.StatusCode != 200 || !strings.Contains(body, `"criticMode":false`) {
		t.Fatalf("read: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.do(t, "DELETE", "/api/chats/"+c.ConversationID, tok, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if resp, _ := h.do(t, "GET", "/api/chats/"+c.ConversationID, tok, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("read after delete: %d", resp.StatusCode)
	}
	if resp, _ := h.do(t, "DELETE", "/api/chats/"+c.ConversationID, tok, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("delete twice: %d", resp.StatusCode)
	}
	if _, body := h.do(t, "GET", "/api/workspaces/"+ws+"/chat", tok, ""); !strings.Contains(body, `"criticMode":true`) {
		t.Fatalf("the workspace's chat lost its conversation: %s", body)
	}
}

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
