package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// ChatRef names a conversation. The UI always gives its id; the REST routes of a workspace's
// one chat from before it had several (/api/workspaces/{id}/chat…) give the workspace instead,
// and act on its current conversation.
type ChatRef struct {
	ConversationID string `json:"conversationId,omitempty"`
	WorkspaceID    string `json:"workspaceId,omitempty"`
}

// resolve is the conversation the reference names.
func (r ChatRef) resolve(ctx context.Context, c *chat.Service) (string, error) {
	switch {
	case r.ConversationID != "":
		return r.ConversationID, nil
	case r.WorkspaceID != "":
		return c.Current(ctx, r.WorkspaceID)
	}
	return "", &StatusError{Status: http.StatusBadRequest, Field: "conversationId",
		Err: errors.New("conversationId: missing; name the conversation (or the workspace whose current one is meant)")}
}

// ChatArgs names the conversation a call acts on.
type ChatArgs struct {
	ChatRef `tstype:",extends"`
}

// WorkspaceChatsArgs names the workspace whose conversations are listed.
type WorkspaceChatsArgs struct {
	WorkspaceID string `json:"workspaceId"`
}

// ConversationsResult is a workspace's conversations, the most recently updated first (never
// empty: a workspace without any gets a first one).
type ConversationsResult struct {
	Conversations []chat.Conversation `json:"conversations"`
}

// ChatCreateArgs starts a conversation in the workspace (absent settings: the defaults).
type ChatCreateArgs struct {
	WorkspaceID string               `json:"workspaceId"`
	Input       chat.NewConversation `json:"input"`
}

// ConversationArgs names a conversation by its id.
type ConversationArgs struct {
	ConversationID string `json:"conversationId"`
}

// ChatRenameArgs sets a conversation's title.
type ChatRenameArgs struct {
	ConversationID string `json:"conversationId"`
	Title          string `json:"title"`
}

// ChatView is a conversation's messages and its state.
type ChatView struct {
	Messages []chat.Message `json:"messages"`
	State    chat.State     `json:"state"`
}

// ChatSendArgs is a message for the conversation (exactly "/critic" toggles actor–critic
// mode), with pictures.
type ChatSendArgs struct {
	ChatRef `tstype:",extends"`
	Text    string      `json:"text"`
	Images  []llm.Image `json:"images"`
}

// ChatSetCriticArgs turns actor–critic mode on or off.
type ChatSetCriticArgs struct {
	ChatRef `tstype:",extends"`
	On      bool `json:"on"`
}

// ChatSetSettingsArgs sets the persona, skills, providers and model, iteration cap and
// ask-above level.
type ChatSetSettingsArgs struct {
	ChatRef  `tstype:",extends"`
	Settings chat.Settings `json:"settings"`
}

// ChatSetEditingArgs says an edit is pending (the automatic loop stops at its next turn).
type ChatSetEditingArgs struct {
	ChatRef `tstype:",extends"`
	Editing bool `json:"editing"`
}

func addChat(t *rpc.Table, s Services) {
	c := s.Chat
	// on runs act on the conversation the reference names.
	on := func(ctx context.Context, r ChatRef, act func(conv string) error) error {
		conv, err := r.resolve(ctx, c)
		if err != nil {
			return err
		}
		return act(conv)
	}
	// both is a call's route under the conversation and, with the same status, under the
	// workspace (the routes from before a workspace had several conversations).
	both := func(method, rest string, status int) (string, []rpc.REST) {
		return method + " /api/chats/{conversationId}" + rest, []rpc.REST{{Route: method + " /api/workspaces/{workspaceId}/chat" + rest, Status: status}}
	}

	rpc.Add(t, rpc.Method{Name: "ChatConversations", Route: "GET /api/workspaces/{workspaceId}/chats"}, func(ctx context.Context, a WorkspaceChatsArgs) (ConversationsResult, error) {
		list, err := c.Conversations(ctx, a.WorkspaceID)
		return ConversationsResult{Conversations: list}, err
	})
	rpc.Add(t, rpc.Method{Name: "ChatCreate", Route: "POST /api/workspaces/{workspaceId}/chats", Body: "input", Status: http.StatusCreated}, func(ctx context.Context, a ChatCreateArgs) (chat.Conversation, error) {
		return c.Create(ctx, a.WorkspaceID, a.Input)
	})
	rpc.Add(t, rpc.Method{Name: "ChatRename", Route: "PUT /api/chats/{conversationId}/title"}, func(ctx context.Context, a ChatRenameArgs) (chat.State, error) {
		return c.Rename(ctx, a.ConversationID, a.Title)
	})
	rpc.Do(t, rpc.Method{Name: "ChatDelete", Route: "DELETE /api/chats/{conversationId}"}, func(ctx context.Context, a ConversationArgs) error {
		return c.Delete(ctx, a.ConversationID)
	})

	route, also := both("GET", "", 0)
	rpc.Add(t, rpc.Method{Name: "Chat", Route: route, Also: also}, func(ctx context.Context, a ChatArgs) (ChatView, error) {
		var v ChatView
		err := on(ctx, a.ChatRef, func(conv string) (err error) {
			if v.Messages, err = c.History(ctx, conv); err != nil {
				return err
			}
			v.State, err = c.State(ctx, conv)
			return err
		})
		return v, err
	})
	// A conversation's own DELETE deletes it: its messages are emptied at …/messages; the
	// workspace's chat is emptied by its DELETE.
	rpc.Do(t, rpc.Method{Name: "ChatClear", Route: "DELETE /api/chats/{conversationId}/messages",
		Also: []rpc.REST{{Route: "DELETE /api/workspaces/{workspaceId}/chat"}}}, func(ctx context.Context, a ChatArgs) error {
		return on(ctx, a.ChatRef, func(conv string) error { return c.Clear(ctx, conv) })
	})
	route, also = both("POST", "/messages", http.StatusAccepted)
	rpc.Do(t, rpc.Method{Name: "ChatSend", Route: route, Also: also, Status: http.StatusAccepted}, func(ctx context.Context, a ChatSendArgs) error {
		return on(ctx, a.ChatRef, func(conv string) error { return c.Send(ctx, conv, a.Text, a.Images) })
	})
	route, also = both("POST", "/stop", 0)
	rpc.Do(t, rpc.Method{Name: "ChatStop", Route: route, Also: also}, func(ctx context.Context, a ChatArgs) error {
		return on(ctx, a.ChatRef, func(conv string) error { return c.Stop(ctx, conv) })
	})
	route, also = both("POST", "/resume", 0)
	rpc.Do(t, rpc.Method{Name: "ChatResume", Route: route, Also: also}, func(ctx context.Context, a ChatArgs) error {
		return on(ctx, a.ChatRef, func(conv string) error { return c.Resume(ctx, conv) })
	})
	route, also = both("PUT", "/critic", 0)
	rpc.Add(t, rpc.Method{Name: "ChatSetCritic", Route: route, Also: also}, func(ctx context.Context, a ChatSetCriticArgs) (st chat.State, err error) {
		err = on(ctx, a.ChatRef, func(conv string) (err error) { st, err = c.SetCriticMode(ctx, conv, a.On); return err })
		return st, err
	})
	route, also = both("PUT", "/settings", 0)
	rpc.Add(t, rpc.Method{Name: "ChatSetSettings", Route: route, Also: also, Body: "settings"}, func(ctx context.Context, a ChatSetSettingsArgs) (st chat.State, err error) {
		err = on(ctx, a.ChatRef, func(conv string) (err error) { st, err = c.SetSettings(ctx, conv, a.Settings); return err })
		return st, err
	})
	route, also = both("PUT", "/editing", 0)
	rpc.Do(t, rpc.Method{Name: "ChatSetEditing", Route: route, Also: also}, func(ctx context.Context, a ChatSetEditingArgs) error {
		return on(ctx, a.ChatRef, func(conv string) error { return c.SetEditing(ctx, conv, a.Editing) })
	})
	rpc.Add(t, rpc.Method{Name: "ChatAnswerApproval", Route: "POST /api/chat/approvals/{id}"}, func(ctx context.Context, a AnswerApprovalArgs) (agent.Approval, error) {
		return c.AnswerApproval(ctx, a.ID, a.Status, a.Reason)
	})
}
