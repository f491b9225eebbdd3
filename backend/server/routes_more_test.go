package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
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
