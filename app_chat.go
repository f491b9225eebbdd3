package main

import (
	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// ChatView is a workspace's conversation and its state.
type ChatView struct {
	Messages []chat.Message `json:"messages"`
	State    chat.State     `json:"state"`
}

// Chat returns the workspace's conversation and its state.
func (a *App) Chat(workspaceID string) (ChatView, error) {
	msgs, err := a.eng.Chat.History(a.ctx, workspaceID)
	if err != nil {
		return ChatView{}, err
	}
	st, err := a.eng.Chat.State(a.ctx, workspaceID)
	if msgs == nil {
		msgs = []chat.Message{}
	}
	return ChatView{Messages: msgs, State: st}, err
}

// ChatSend sends a message (exactly "/critic" toggles actor–critic mode).
func (a *App) ChatSend(workspaceID, text string, images []llm.Image) error {
	return a.eng.Chat.Send(a.ctx, workspaceID, text, images)
}

// ChatStop ends the stream and tools within a second.
func (a *App) ChatStop(workspaceID string) error { return a.eng.Chat.Stop(a.ctx, workspaceID) }

// ChatResume continues an interrupted conversation (as the critic, if it was cut off).
func (a *App) ChatResume(workspaceID string) error { return a.eng.Chat.Resume(a.ctx, workspaceID) }

// ChatClear deletes the conversation; mode and settings stay.
func (a *App) ChatClear(workspaceID string) error { return a.eng.Chat.Clear(a.ctx, workspaceID) }

// ChatSetCritic turns actor–critic mode on or off.
func (a *App) ChatSetCritic(workspaceID string, on bool) (chat.State, error) {
	return a.eng.Chat.SetCriticMode(a.ctx, workspaceID, on)
}

// ChatSetSettings sets the providers, iteration cap and ask-above level.
func (a *App) ChatSetSettings(workspaceID string, st chat.Settings) (chat.State, error) {
	return a.eng.Chat.SetSettings(a.ctx, workspaceID, st)
}

// ChatSetEditing says an edit is pending (it stops the automatic loop).
func (a *App) ChatSetEditing(workspaceID string, editing bool) {
	a.eng.Chat.SetEditing(workspaceID, editing)
}

// ChatAnswerApproval answers a chat tool's approval request.
func (a *App) ChatAnswerApproval(id, status, reason string) (agent.Approval, error) {
	return a.eng.Chat.AnswerApproval(a.ctx, id, agent.ApprovalStatus(status), reason)
}
