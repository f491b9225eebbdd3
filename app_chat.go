package main

import (
	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// ChatView is a conversation's messages and its state.
type ChatView struct {
	Messages []chat.Message `json:"messages"`
	State    chat.State     `json:"state"`
}

// ChatConversations lists the workspace's conversations, the most recently updated first
// (a workspace without any gets a first one).
func (a *App) ChatConversations(workspaceID string) ([]chat.Conversation, error) {
	return a.eng.Chat.Conversations(a.ctx, workspaceID)
}

// ChatCreate starts a new conversation in the workspace.
func (a *App) ChatCreate(workspaceID string, in chat.NewConversation) (chat.Conversation, error) {
	return a.eng.Chat.Create(a.ctx, workspaceID, in)
}

// ChatRename sets a conversation's title.
func (a *App) ChatRename(conversationID, title string) (chat.State, error) {
	return a.eng.Chat.Rename(a.ctx, conversationID, title)
}

// ChatDelete stops the conversation if it runs and deletes it with its messages.
func (a *App) ChatDelete(conversationID string) error {
	return a.eng.Chat.Delete(a.ctx, conversationID)
}

// Chat returns the conversation's messages and its state.
func (a *App) Chat(conversationID string) (ChatView, error) {
	msgs, err := a.eng.Chat.History(a.ctx, conversationID)
	if err != nil {
		return ChatView{}, err
	}
	st, err := a.eng.Chat.State(a.ctx, conversationID)
	if msgs == nil {
		msgs = []chat.Message{}
	}
	return ChatView{Messages: msgs, State: st}, err
}

// ChatSend sends a message (exactly "/critic" toggles actor–critic mode).
func (a *App) ChatSend(conversationID, text string, images []llm.Image) error {
	return a.eng.Chat.Send(a.ctx, conversationID, text, images)
}

// ChatStop ends the stream and tools within a second.
func (a *App) ChatStop(conversationID string) error { return a.eng.Chat.Stop(a.ctx, conversationID) }

// ChatResume continues an interrupted conversation (as the critic, if it was cut off).
func (a *App) ChatResume(conversationID string) error {
	return a.eng.Chat.Resume(a.ctx, conversationID)
}

// ChatClear deletes the conversation's messages; its title, mode and settings stay.
func (a *App) ChatClear(conversationID string) error { return a.eng.Chat.Clear(a.ctx, conversationID) }

// ChatSetCritic turns actor–critic mode on or off.
func (a *App) ChatSetCritic(conversationID string, on bool) (chat.State, error) {
	return a.eng.Chat.SetCriticMode(a.ctx, conversationID, on)
}

// ChatSetSettings sets the persona, skills, providers and model, iteration cap and ask-above level.
func (a *App) ChatSetSettings(conversationID string, st chat.Settings) (chat.State, error) {
	return a.eng.Chat.SetSettings(a.ctx, conversationID, st)
}

// ChatSetEditing says an edit is pending (it stops the automatic loop).
func (a *App) ChatSetEditing(conversationID string, editing bool) error {
	return a.eng.Chat.SetEditing(a.ctx, conversationID, editing)
}

// ChatAnswerApproval answers a chat tool's approval request.
func (a *App) ChatAnswerApproval(id, status, reason string) (agent.Approval, error) {
	return a.eng.Chat.AnswerApproval(a.ctx, id, agent.ApprovalStatus(status), reason)
}
