package server

import (
	"context"
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

// chatID says which conversation a request is about: the {cid} of a conversation's own
// routes, or, on a workspace's routes from before it had several, its current one.
type chatID func(r *http.Request) (string, error)

func byConversation(r *http.Request) (string, error) { return r.PathValue("cid"), nil }

func (s *Server) byWorkspace(r *http.Request) (string, error) {
	return s.deps.Chat.Current(r.Context(), r.PathValue("id"))
}

// chatHandler resolves the conversation, then acts on it.
func chatHandler(id chatID, act func(w http.ResponseWriter, r *http.Request, conv string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conv, err := id(r)
		if err != nil {
			writeChatError(w, err)
			return
		}
		act(w, r, conv)
	}
}

func (s *Server) getChat(w http.ResponseWriter, r *http.Request, conv string) {
	msgs, err := s.deps.Chat.History(r.Context(), conv)
	if err != nil {
		writeChatError(w, err)
		return
	}
	state, err := s.deps.Chat.State(r.Context(), conv)
	if err != nil {
		writeChatError(w, err)
		return
	}
	if msgs == nil {
		msgs = []chat.Message{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": msgs, "state": state})
}

func (s *Server) sendChat(w http.ResponseWriter, r *http.Request, conv string) {
	var body struct {
		Text   string      `json:"text"`
		Images []llm.Image `json:"images"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Chat.Send(r.Context(), conv, body.Text, body.Images); err != nil {
		writeChatError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func chatControl(act func(ctx context.Context, conv string) error) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, r *http.Request, conv string) {
		if err := act(r.Context(), conv); err != nil {
			writeChatError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) setChatCritic(w http.ResponseWriter, r *http.Request, conv string) {
	var body struct {
		On bool `json:"on"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	st, err := s.deps.Chat.SetCriticMode(r.Context(), conv, body.On)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) setChatSettings(w http.ResponseWriter, r *http.Request, conv string) {
	var st chat.Settings
	if !decodeBody(w, r, &st) {
		return
	}
	state, err := s.deps.Chat.SetSettings(r.Context(), conv, st)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, state)
}

func (s *Server) setChatTitle(w http.ResponseWriter, r *http.Request, conv string) {
	var body struct {
		Title string `json:"title"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	state, err := s.deps.Chat.Rename(r.Context(), conv, body.Title)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, state)
}

func (s *Server) setChatEditing(w http.ResponseWriter, r *http.Request, conv string) {
	var body struct {
		Editing bool `json:"editing"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Chat.SetEditing(r.Context(), conv, body.Editing); err != nil {
		writeChatError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listChats(w http.ResponseWriter, r *http.Request) {
	list, err := s.deps.Chat.Conversations(r.Context(), r.PathValue("id"))
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
}

func (s *Server) createChat(w http.ResponseWriter, r *http.Request) {
	var in chat.NewConversation
	if !decodeBody(w, r, &in) {
		return
	}
	c, err := s.deps.Chat.Create(r.Context(), r.PathValue("id"), in)
	if err != nil {
		writeChatError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
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

// chatRoutes: a workspace's conversations (/api/workspaces/{id}/chats), each conversation's
// own routes (/api/chats/{cid}…), and the routes of a workspace's one chat from before it had
// several, which act on its current conversation (Service.Current).
func (s *Server) chatRoutes() []route {
	c := s.deps.Chat
	routes := []route{
		{"GET", "/api/workspaces/{id}/chats", false, s.listChats},
		{"POST", "/api/workspaces/{id}/chats", false, s.createChat},
		{"DELETE", "/api/chats/{cid}", false, chatHandler(byConversation, chatControl(c.Delete))},
		{"PUT", "/api/chats/{cid}/title", false, chatHandler(byConversation, s.setChatTitle)},
		{"POST", "/api/chat/approvals/{id}", false, s.answerChatApproval},
	}
	// clear is where DELETE empties the conversation: a conversation's own DELETE deletes it.
	for _, door := range []struct {
		prefix, clear string
		id            chatID
	}{
		{"/api/chats/{cid}", "/api/chats/{cid}/messages", byConversation},
		{"/api/workspaces/{id}/chat", "/api/workspaces/{id}/chat", s.byWorkspace},
	} {
		p, id := door.prefix, door.id
		routes = append(routes,
			route{"GET", p, false, chatHandler(id, s.getChat)},
			route{"DELETE", door.clear, false, chatHandler(id, chatControl(c.Clear))},
			route{"POST", p + "/messages", false, chatHandler(id, s.sendChat)},
			route{"POST", p + "/stop", false, chatHandler(id, chatControl(c.Stop))},
			route{"POST", p + "/resume", false, chatHandler(id, chatControl(c.Resume))},
			route{"PUT", p + "/critic", false, chatHandler(id, s.setChatCritic)},
			route{"PUT", p + "/settings", false, chatHandler(id, s.setChatSettings)},
			route{"PUT", p + "/editing", false, chatHandler(id, s.setChatEditing)},
		)
	}
	return routes
}
