package server

import (
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// writeChatError maps the chat service's errors. A message that could not be sent comes back
// with its text, so the UI can put it back in the input.
func writeChatError(w http.ResponseWriter, err error) {
	var fe *chat.FieldError
	var se *chat.StartError
	switch {
	case errors.As(err, &se):
		// The person's mistakes (an empty message, no provider yet) are 4xx; only a model or
		// store that failed is a bad gateway.
		status, field := http.StatusBadGateway, ""
		switch {
		case errors.As(se.Err, &fe):
			status, field = http.StatusBadRequest, fe.Field
		case errors.Is(err, config.ErrNoProvider):
			status, field = http.StatusConflict, "provider"
		case errors.Is(err, config.ErrNotFound):
			status, field = http.StatusNotFound, "provider"
		}
		writeJSON(w, status, map[string]string{"error": err.Error(), "field": field, "text": se.Text})
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, err.Error(), fe.Field)
	case errors.Is(err, chat.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "")
	case errors.Is(err, chat.ErrNothingToResume):
		writeError(w, http.StatusConflict, err.Error(), "")
	default:
		writeServiceError(w, err)
	}
}

func (s *Server) getChat(w http.ResponseWriter, r *http.Request) {
	ws := r.PathValue("id")
	msgs, err := s.deps.Chat.History(r.Context(), ws)
	if err != nil {
		writeChatError(w, err)
		return
	}
	state, err := s.deps.Chat.State(r.Context(), ws)
	if err != nil {
		writeChatError(w, err)
		return
	}
	if msgs == nil {
		msgs = []chat.Message{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": msgs, "state": state})
}

func (s *Server) sendChat(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text   string      `json:"text"`
		Images []llm.Image `json:"images"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Chat.Send(r.Context(), r.PathValue("id"), body.Text, body.Images); err != nil {
		writeChatError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) chatControl(act func(*http.Request, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := act(r, r.PathValue("id")); err != nil {
			writeChatError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) setChatCritic(w http.ResponseWriter, r *http.Request) {
	var body struct {
		On bool `json:"on"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	st, err := s.deps.Chat.SetCriticMode(r.Context(), r.PathValue("id"), body.On)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) setChatSettings(w http.ResponseWriter, r *http.Request) {
	var st chat.Settings
	if !decodeBody(w, r, &st) {
		return
	}
	state, err := s.deps.Chat.SetSettings(r.Context(), r.PathValue("id"), st)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, state)
}

func (s *Server) setChatEditing(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Editing bool `json:"editing"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	s.deps.Chat.SetEditing(r.PathValue("id"), body.Editing)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) answerChatApproval(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Status agent.ApprovalStatus `json:"status"`
		Reason string               `json:"reason"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	a, err := s.deps.Chat.AnswerApproval(r.Context(), r.PathValue("id"), body.Status, body.Reason)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) chatRoutes() []route {
	return []route{
		{"GET", "/api/workspaces/{id}/chat", false, s.getChat},
		{"DELETE", "/api/workspaces/{id}/chat", false, s.chatControl(func(r *http.Request, id string) error { return s.deps.Chat.Clear(r.Context(), id) })},
		{"POST", "/api/workspaces/{id}/chat/messages", false, s.sendChat},
		{"POST", "/api/workspaces/{id}/chat/stop", false, s.chatControl(func(r *http.Request, id string) error { return s.deps.Chat.Stop(r.Context(), id) })},
		{"POST", "/api/workspaces/{id}/chat/resume", false, s.chatControl(func(r *http.Request, id string) error { return s.deps.Chat.Resume(r.Context(), id) })},
		{"PUT", "/api/workspaces/{id}/chat/critic", false, s.setChatCritic},
		{"PUT", "/api/workspaces/{id}/chat/settings", false, s.setChatSettings},
		{"PUT", "/api/workspaces/{id}/chat/editing", false, s.setChatEditing},
		{"POST", "/api/chat/approvals/{id}", false, s.answerChatApproval},
	}
}
