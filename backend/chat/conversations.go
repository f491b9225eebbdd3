package chat

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Limits of a conversation's names.
const (
	// maxTitleRunes keeps a title one line in the list.
	maxTitleRunes = 80
	// autoTitleRunes is how much of the first message names an untitled conversation.
	autoTitleRunes = 48
	// maxModelChars bounds a typed model id (real ids are well under 100 characters).
	maxModelChars = 200
)

// NewConversation is what a started conversation may set up front; nil Settings takes
// DefaultSettings.
type NewConversation struct {
	Title    string    `json:"title"`
	Settings *Settings `json:"settings,omitempty"`
}

// Conversations lists a workspace's conversations, the most recently updated first. A
// workspace without any gets a first, empty one, so a panel always has one to show.
func (s *Service) Conversations(ctx context.Context, wsID string) ([]Conversation, error) {
	s.listMu.Lock()
	list, err := s.repo.ChatConversations(ctx, wsID)
	if err == nil && len(list) == 0 {
		c := Conversation{Config: Config{ConversationID: agent.NewID("chat-"), WorkspaceID: wsID, Settings: DefaultSettings()}}
		if err = s.repo.CreateChatConversation(ctx, &c); err == nil {
			list = []Conversation{c}
		}
	}
	s.listMu.Unlock()
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Running = s.running(list[i].ConversationID)
	}
	return list, nil
}

// Current is the conversation the workspace's own routes (/api/workspaces/{id}/chat…) act
// on, from before a workspace had several: its most recently updated one.
func (s *Service) Current(ctx context.Context, wsID string) (string, error) {
	list, err := s.Conversations(ctx, wsID)
	if err != nil {
		return "", err
	}
	return list[0].ConversationID, nil
}

// Create starts a new, empty conversation in the workspace.
func (s *Service) Create(ctx context.Context, wsID string, in NewConversation) (Conversation, error) {
	title, err := cleanTitle(in.Title)
	if err != nil {
		return Conversation{}, err
	}
	settings := DefaultSettings()
	if in.Settings != nil {
		if settings, err = s.checkSettings(ctx, *in.Settings); err != nil {
			return Conversation{}, err
		}
	}
	c := Conversation{Config: Config{ConversationID: agent.NewID("chat-"), WorkspaceID: wsID, Title: title, Settings: settings}}
	s.listMu.Lock()
	err = s.repo.CreateChatConversation(ctx, &c)
	s.listMu.Unlock()
	if err != nil {
		return Conversation{}, err
	}
	s.publishList(ctx, wsID)
	return c, nil
}

// Rename sets a conversation's title.
func (s *Service) Rename(ctx context.Context, id, title string) (State, error) {
	title, err := cleanTitle(title)
	if err != nil {
		return State{}, err
	}
	if title == "" {
		return State{}, &FieldError{"title", "the title is empty: type a name for the conversation"}
	}
	return s.updateConfig(ctx, id, func(c *Config) error {
		c.Title = title
		return nil
	})
}

// Delete stops the conversation if it runs (what streamed is kept no longer: its messages go
// with it) and deletes it. The workspace's other conversations are untouched.
func (s *Service) Delete(ctx context.Context, id string) error {
	ss, cfg, err := s.lookup(ctx, id)
	if err != nil {
		return err
	}
	ss.ops.Lock()
	defer ss.ops.Unlock()
	if err := ss.stop(ctx, errDeleted); err != nil {
		return err
	}
	s.listMu.Lock()
	err = s.repo.DeleteChatConversation(ctx, id)
	s.listMu.Unlock()
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
	s.publish(Event{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Type: EventCleared})
	s.publishList(ctx, cfg.WorkspaceID)
	return nil
}

// running reports whether the conversation's loop is working on a message.
func (s *Service) running(id string) bool {
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		return false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.chain
}

// publishList announces a workspace's conversations after a change. Best effort: a list that
// cannot be read now is read by the UI on its next load.
func (s *Service) publishList(ctx context.Context, wsID string) {
	list, err := s.repo.ChatConversations(context.WithoutCancel(ctx), wsID)
	if err != nil {
		s.log.Warn("chat: could not read the conversations", "workspace", wsID, "err", err)
		return
	}
	for i := range list {
		list[i].Running = s.running(list[i].ConversationID)
	}
	if list == nil {
		list = []Conversation{}
	}
	s.publish(Event{WorkspaceID: wsID, Type: EventConversations, Conversations: list})
}

// nameAfter titles an untitled conversation after its first message. Best effort: an
// untitled conversation still works, and the person can rename it.
func (s *Service) nameAfter(ctx context.Context, cfg Config, text string) {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) > autoTitleRunes {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:autoTitleRunes])) + "…"
	}
	cfg.Title = line
	if err := s.repo.SaveChatConfig(ctx, cfg); err != nil {
		s.log.Warn("chat: could not title the conversation", "conversation", cfg.ConversationID, "err", err)
		return
	}
	s.publishList(ctx, cfg.WorkspaceID)
}

func cleanTitle(t string) (string, error) {
	t = strings.Join(strings.Fields(t), " ")
	if utf8.RuneCountInString(t) > maxTitleRunes {
		return "", &FieldError{"title", fmt.Sprintf("the title is %d characters long: keep it to %d", utf8.RuneCountInString(t), maxTitleRunes)}
	}
	return t, nil
}

// checkSettings validates settings and fills their defaults; a bad field is a *FieldError.
func (s *Service) checkSettings(ctx context.Context, settings Settings) (Settings, error) {
	if settings.IterationCap == 0 {
		settings.IterationCap = DefaultIterationCap
	}
	settings.Model = strings.TrimSpace(settings.Model)
	settings.Persona = strings.TrimSpace(settings.Persona)
	skills := []string{}
	for _, id := range settings.Skills {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(skills, id) {
			skills = append(skills, id)
		}
	}
	settings.Skills = skills
	switch {
	case settings.IterationCap < 1 || settings.IterationCap > MaxIterationCap:
		return settings, &FieldError{"iterationCap", fmt.Sprintf("%d is outside 1–%d critic reviews per message", settings.IterationCap, MaxIterationCap)}
	case settings.AskAbove < tools.ReadOnly || settings.AskAbove > tools.SpendsMoney:
		return settings, &FieldError{"askAbove", fmt.Sprintf("%v is not on the risk ladder", settings.AskAbove)}
	case len(settings.Model) > maxModelChars || strings.ContainsAny(settings.Model, " \t\n"):
		return settings, &FieldError{"model", fmt.Sprintf("%q is not a model id: pick one the provider lists, or leave it empty for the provider's own", clipRunes(settings.Model, 40))}
	}
	if _, err := s.models.Model(ctx, settings.Provider); err != nil {
		return settings, &FieldError{"provider", err.Error()}
	}
	if settings.CriticProvider != "" {
		if _, err := s.models.Model(ctx, settings.CriticProvider); err != nil {
			return settings, &FieldError{"criticProvider", err.Error()}
		}
	}
	if _, err := s.persona(settings); err != nil {
		return settings, err
	}
	return settings, nil
}

// shaping is what a conversation's persona and skills make of its actor.
type shaping struct {
	persona catalog.Persona
	skills  []catalog.Skill
}

// apply shapes the actor; with neither a persona nor skills it leaves a as it is.
func (sh *shaping) apply(a *agent.Agent) {
	if sh != nil {
		sh.persona.Apply(a, sh.skills...)
	}
}

// persona resolves the settings' persona and skills from the catalog: nil when they name
// none; a *FieldError naming "persona" or "skills" when one is unknown.
func (s *Service) persona(settings Settings) (*shaping, error) {
	if settings.Persona == "" && len(settings.Skills) == 0 {
		return nil, nil
	}
	if s.catalog == nil {
		field := "persona"
		if settings.Persona == "" {
			field = "skills"
		}
		return nil, &FieldError{field, "no personas or skills are loaded in this app: clear the conversation's persona and skills"}
	}
	sh := &shaping{}
	var attach []string
	if settings.Persona != "" {
		p, ok := s.catalog.Persona(settings.Persona)
		if !ok {
			return nil, &FieldError{"persona", fmt.Sprintf("there is no persona %q in the config dir or the built-ins: pick another in the conversation's settings", settings.Persona)}
		}
		sh.persona = p
		attach = append(attach, p.Skills...)
	}
	for _, id := range settings.Skills {
		if !slices.Contains(attach, id) {
			attach = append(attach, id)
		}
	}
	for _, id := range attach {
		sk, ok := s.catalog.Skill(id)
		if !ok {
			return nil, &FieldError{"skills", fmt.Sprintf("there is no skill %q in the config dir or the built-ins: detach it in the conversation's settings", id)}
		}
		sh.skills = append(sh.skills, sk)
	}
	return sh, nil
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
