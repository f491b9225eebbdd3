package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// CriticCommand, sent as a message, toggles actor–critic mode instead.
const CriticCommand = "/critic"

// stoppedPublishTimeout bounds how long "loop_stopped" waits for slow subscribers.
const stoppedPublishTimeout = 2 * time.Second

// Causes that end a loop's context.
var (
	errStopped  = errors.New("stopped by the user")
	errCleared  = errors.New("the conversation was cleared")
	errDeleted  = errors.New("the conversation was deleted")
	errShutdown = errors.New("the app is shutting down")
)

// Options tune the service; zero values take defaults.
type Options struct {
	Logger *slog.Logger
	// Screenshot returns a small JPEG of a browser pane. For a model with vision it is
	// attached to browser tools' results, so the model sees the page (the last few only).
	Screenshot func(ctx context.Context, paneID string) ([]byte, error)
	// Approvals is the approval desk shared with the goals; nil: the service keeps its own,
	// stored in repo when repo keeps approvals too (the store does).
	Approvals *agent.Approvals
	// PaneSummary describes the workspace's panes, for the newest message of each actor turn
	// (nil: none).
	PaneSummary func(ctx context.Context, workspaceID string) string
	// Catalog resolves the personas and skills conversations name (nil: none can be named).
	Catalog Catalog
}

// Service runs the conversations of all workspaces: one loop goroutine per busy conversation.
type Service struct {
	repo     Repo
	models   Models
	registry *tools.Registry
	events   *pubsub.Broker[Event]
	log      *slog.Logger
	shot     func(ctx context.Context, paneID string) ([]byte, error)
	// paneSummary is Options.PaneSummary.
	paneSummary func(ctx context.Context, workspaceID string) string

	approvals *agent.Approvals
	catalog   Catalog
	// compactions is repo as a CompactionRepo (nil: it keeps none, and a restart compacts anew).
	compactions CompactionRepo

	// listMu serializes changes to a workspace's list, so that two first reads of an empty
	// workspace make one conversation, not two.
	listMu sync.Mutex

	mu       sync.Mutex
	sessions map[string]*session // by conversation id
	closed   bool                // Shutdown began: no loop may start

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// CompactionRepo keeps each conversation's compaction per side (actor, critic), so a new
// process sends a long conversation as the last one did instead of paying for its summary
// again. The store implements it; a Repo without it keeps compactions in memory only.
type CompactionRepo interface {
	// ChatCompactions returns the conversation's stored compactions by side.
	ChatCompactions(ctx context.Context, id string) (map[Source]agent.Compaction, error)
	// SaveChatCompaction stores (or replaces) one side's compaction. ClearChat and
	// DeleteChatConversation drop them with the messages they summarise.
	SaveChatCompaction(ctx context.Context, id string, src Source, c agent.Compaction) error
}

// NewService returns the chat service. Nothing runs until a message is sent or a chat is
// resumed: a chat the last process left mid-turn waits for Resume.
func NewService(repo Repo, models Models, registry *tools.Registry, events *pubsub.Broker[Event], opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if registry == nil {
		registry = tools.NewRegistry()
	}
	if opts.Approvals == nil {
		ar, _ := repo.(agent.ApprovalRepo)
		opts.Approvals = agent.NewApprovals(ar, nil)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &Service{repo: repo, models: models, registry: registry, events: events, log: opts.Logger, shot: opts.Screenshot, paneSummary: opts.PaneSummary,
		approvals: opts.Approvals, catalog: opts.Catalog, sessions: map[string]*session{}, ctx: ctx, cancel: cancel}
	s.compactions, _ = repo.(CompactionRepo)
	s.closeStaleApprovals()
	return s
}

// closeStaleApprovals withdraws the chat approvals a dead process left pending: nothing
// waits for them any more (Resume answers their calls as interrupted), so no UI may offer them.
func (s *Service) closeStaleApprovals() {
	ctx := context.Background()
	stale, err := s.approvals.Stored(ctx, func(a agent.Approval) bool { return a.WorkspaceID != "" })
	if err != nil {
		s.log.Warn("chat: could not read stale approvals", "err", err)
		return
	}
	for _, a := range stale {
		s.approvals.Withdraw(ctx, a, "the app stopped while the chat waited")
	}
}

// Events is the live stream of every conversation's events.
func (s *Service) Events() *pubsub.Broker[Event] { return s.events }

// session is one conversation's live part. ops serializes the controls (Send, Resume, Stop,
// Clear, Delete, settings); mu guards what the loop goroutine shares with them.
type session struct {
	svc  *Service
	id   string // the conversation's
	wsID string
	ops  sync.Mutex

	mu sync.Mutex
	// running: the loop goroutine is alive. chain: it is working on a message (between
	// loop_started and loop_stopped); a goroutine may outlive its chain by a moment.
	running bool
	chain   bool
	changed chan struct{} // closed and replaced whenever running or chain changes
	cancel  context.CancelCauseFunc
	done    chan struct{}
	queue   []llm.Message
	editing bool
	turn    Source
	granted []string // tools the user allowed for the rest of this conversation's session
	// compacted is how the actor's and the critic's conversations are sent since they
	// outgrew their model's window; a new chain's agents start from it. restored: it holds
	// what the store kept (read, cleared or compacted since), so it is read at most once.
	compacted map[Source]*agent.Compaction
	restored  bool
}

// session returns the live part of the conversation cfg describes, made on first use.
func (s *Service) session(cfg Config) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[cfg.ConversationID]
	if !ok {
		ss = &session{svc: s, id: cfg.ConversationID, wsID: cfg.WorkspaceID, changed: make(chan struct{})}
		s.sessions[cfg.ConversationID] = ss
	}
	return ss
}

// lookup returns the conversation's session and stored config; an unknown id wraps ErrNotFound.
func (s *Service) lookup(ctx context.Context, id string) (*session, Config, error) {
	cfg, err := s.repo.ChatConfig(ctx, id)
	if err != nil {
		return nil, Config{}, err
	}
	return s.session(cfg), cfg, nil
}

// lockSession looks the conversation up and takes its ops lock, so no other operation on it
// runs until unlock.
func (s *Service) lockSession(ctx context.Context, id string) (ss *session, unlock func(), err error) {
	ss, _, err = s.lookup(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ss.ops.Lock()
	return ss, ss.ops.Unlock, nil
}

func (s *Service) publish(e Event) {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	if e.Type == EventLoopStopped {
		ctx, cancel := context.WithTimeout(context.Background(), stoppedPublishTimeout)
		defer cancel()
		s.events.PublishMust(ctx, e.Type, e) // Best effort past the timeout: a UI re-reads State.
		return
	}
	s.events.Publish(e.Type, e)
}

// History returns a conversation's stored messages, notes and partial messages included.
func (s *Service) History(ctx context.Context, id string) ([]Message, error) {
	msgs, err := s.repo.ChatMessages(ctx, id)
	if msgs == nil {
		msgs = []Message{}
	}
	return msgs, err
}

// State returns a conversation's config and what runs now.
func (s *Service) State(ctx context.Context, id string) (State, error) {
	ss, cfg, err := s.lookup(ctx, id)
	if err != nil {
		return State{}, err
	}
	ss.mu.Lock()
	st := State{Config: cfg, Running: ss.chain, Turn: ss.turn, Queued: len(ss.queue), Editing: ss.editing}
	ss.mu.Unlock()
	if !st.Running {
		history, err := s.repo.ChatMessages(ctx, id)
		if err != nil {
			return State{}, err
		}
		st.Next = NextTurn(history, cfg.CriticMode)
		if st.Next == "" && startsFromPrompt(history, cfg) {
			st.Next = SourceActor
		}
	}
	st.Approvals = s.pendingApprovals(id)
	return st, nil
}

// startsFromPrompt reports whether Resume would start an empty conversation from the
// stored critic prompt.
func startsFromPrompt(history []Message, cfg Config) bool {
	return cfg.CriticMode && strings.TrimSpace(cfg.CriticPrompt) != "" && len(ActorView(history)) == 0
}

// Send sends the user's message. In critic mode the text is also the critic's criteria.
// Exactly "/critic" toggles the mode instead. If a turn is running the message is queued:
// it is delivered when the turn ends and wins over any automatic turn. An error that
// prevented sending is a *StartError carrying the text.
func (s *Service) Send(ctx context.Context, id, text string, images []llm.Image) error {
	if strings.TrimSpace(text) == CriticCommand && len(images) == 0 {
		st, err := s.State(ctx, id)
		if err == nil {
			_, err = s.SetCriticMode(ctx, id, !st.CriticMode)
		}
		return err
	}
	fail := func(err error) error { return &StartError{Text: text, Err: err} }
	if s.ctx.Err() != nil {
		return fail(errShutdown)
	}
	ss, _, err := s.lookup(ctx, id)
	if err != nil {
		return fail(err)
	}
	ss.ops.Lock()
	defer ss.ops.Unlock()
	cfg, err := s.repo.ChatConfig(ctx, id) // again under ops: a settings change may have just landed
	if err != nil {
		return fail(err)
	}
	body := strings.TrimSpace(text)
	if body == "" && len(images) == 0 {
		history, err := s.repo.ChatMessages(ctx, id)
		if err != nil {
			return fail(err)
		}
		if !startsFromPrompt(history, cfg) {
			return fail(&FieldError{Field: "text", Msg: "the message is empty: type something or attach a picture"})
		}
		body = cfg.CriticPrompt // an empty conversation starts from the critic prompt
	}
	actor, err := s.models.Model(ctx, cfg.Settings.Provider)
	if err != nil {
		return fail(fmt.Errorf("the chat's model cannot be used: %w", err))
	}
	if _, err := s.persona(cfg.Settings); err != nil {
		return fail(err)
	}
	if len(images) > 0 && !actor.Vision {
		return fail(fmt.Errorf("%s has no vision model configured: remove the picture, or set a vision model in Settings → Providers", actor.Name))
	}
	for _, img := range images {
		if _, err := img.ContentType(); err != nil {
			return fail(err)
		}
	}
	if cfg.CriticMode {
		if _, err := s.models.Model(ctx, criticRef(cfg)); err != nil {
			return fail(fmt.Errorf("the critic's model cannot be used: %w", err))
		}
		if body != "" && body != cfg.CriticPrompt {
			cfg.CriticPrompt = body
			if err := s.repo.SaveChatConfig(ctx, cfg); err != nil {
				return fail(err)
			}
		}
	}
	if cfg.Title == "" && body != "" {
		s.nameAfter(ctx, cfg, body)
	}
	msg := llm.UserText(body, images...)
	ss.mu.Lock()
	ss.editing = false // what was being edited is this message
	if ss.running {
		ss.queue = append(ss.queue, msg)
		ss.mu.Unlock()
		s.publish(Event{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Type: EventQueued, Source: SourceUser, Text: body})
		return nil
	}
	ss.mu.Unlock()
	conv, err := ss.prepare(ctx)
	if err != nil {
		return fail(err)
	}
	stored := []Message{{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Source: SourceUser, Message: msg}}
	if err := s.repo.AppendChatMessages(ctx, id, stored); err != nil {
		return fail(err)
	}
	s.publish(Event{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Type: EventMessageFinished, Source: SourceUser, Message: &stored[0]})
	// Stored but not started only if the app is shutting down: Resume answers it later.
	return ss.start(append(conv, stored[0]), SourceActor)
}

// Resume continues a stopped or interrupted chat with whatever is due (see NextTurn): after
// a cut-off critic review, a critic turn. An empty conversation in critic mode starts from
// the critic prompt. It does nothing if the chat is running.
func (s *Service) Resume(ctx context.Context, id string) error {
	if s.ctx.Err() != nil {
		return errShutdown
	}
	ss, unlock, err := s.lockSession(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if busy, err := ss.waitSettled(ctx); busy || err != nil {
		return err
	}
	cfg, err := s.repo.ChatConfig(ctx, id)
	if err != nil {
		return err
	}
	if _, err := s.models.Model(ctx, cfg.Settings.Provider); err != nil {
		return fmt.Errorf("the chat's model cannot be used: %w", err)
	}
	if _, err := s.persona(cfg.Settings); err != nil {
		return err
	}
	conv, err := ss.prepare(ctx)
	if err != nil {
		return err
	}
	next := NextTurn(conv, cfg.CriticMode)
	if next == "" && startsFromPrompt(conv, cfg) {
		stored := []Message{{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Source: SourceUser, Message: llm.UserText(cfg.CriticPrompt)}}
		if err := s.repo.AppendChatMessages(ctx, id, stored); err != nil {
			return &StartError{Text: cfg.CriticPrompt, Err: err}
		}
		s.publish(Event{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Type: EventMessageFinished, Source: SourceUser, Message: &stored[0]})
		conv, next = append(conv, stored[0]), SourceActor
	}
	if next == "" {
		return ErrNothingToResume
	}
	return ss.start(conv, next)
}

// waitSettled waits while a loop that just stopped winds down; busy means it went on with a
// new chain (a queued message) instead of ending.
func (ss *session) waitSettled(ctx context.Context) (busy bool, err error) {
	for {
		ss.mu.Lock()
		chain, running, changed := ss.chain, ss.running, ss.changed
		ss.mu.Unlock()
		if chain || !running {
			return chain, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// notify wakes waitSettled. Called with mu held.
func (ss *session) notify() {
	close(ss.changed)
	ss.changed = make(chan struct{})
}

// prepare loads the conversation and answers tool calls a dead process left without
// results, so the history stays well formed. Called while the chat is idle.
func (ss *session) prepare(ctx context.Context) ([]Message, error) {
	ss.restoreCompacted(ctx)
	conv, err := ss.svc.repo.ChatMessages(ctx, ss.id)
	if err != nil {
		return nil, err
	}
	calls := danglingCalls(conv)
	if len(calls) == 0 {
		return conv, nil
	}
	var results []llm.ToolResult
	for _, c := range calls {
		results = append(results, llm.ToolResult{CallID: c.ID, Name: c.Name, Text: restartedResult, IsError: true})
	}
	stored := []Message{{ConversationID: ss.id, WorkspaceID: ss.wsID, Source: SourceActor, Message: llm.ToolMessage(results...)}}
	if err := ss.svc.repo.AppendChatMessages(ctx, ss.id, stored); err != nil {
		return nil, err
	}
	ss.svc.publish(Event{ConversationID: ss.id, WorkspaceID: ss.wsID, Type: EventMessageFinished, Source: SourceActor, Message: &stored[0]})
	return append(conv, stored[0]), nil
}

// start launches the loop goroutine with the conversation so far. Called under ops while idle.
func (ss *session) start(conv []Message, next Source) error {
	ss.svc.mu.Lock()
	defer ss.svc.mu.Unlock()
	if ss.svc.closed {
		return errShutdown
	}
	ctx, cancel := context.WithCancelCause(ss.svc.ctx)
	r := &run{ss: ss, svc: ss.svc, ctx: ctx, conv: conv, agents: map[Source]madeAgent{}}
	ss.mu.Lock()
	ss.running, ss.cancel, ss.done = true, cancel, make(chan struct{})
	ss.notify()
	ss.mu.Unlock()
	ss.svc.wg.Add(1)
	go ss.drive(r, cancel, next)
	return nil
}

// Stop ends the running stream or tool call and the loop; what streamed so far is kept as a
// partial message. It returns once the loop has ended (well within a second).
func (s *Service) Stop(ctx context.Context, id string) error {
	ss, unlock, err := s.lockSession(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	return ss.stop(ctx, errStopped)
}

func (ss *session) stop(ctx context.Context, cause error) error {
	ss.mu.Lock()
	running, cancel, done := ss.running, ss.cancel, ss.done
	ss.mu.Unlock()
	if !running {
		return nil
	}
	cancel(cause)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Clear stops the chat and deletes its conversation; the mode, critic prompt and settings stay.
func (s *Service) Clear(ctx context.Context, id string) error {
	ss, unlock, err := s.lockSession(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := ss.stop(ctx, errCleared); err != nil {
		return err
	}
	if err := s.repo.ClearChat(ctx, id); err != nil {
		return err
	}
	ss.mu.Lock()
	ss.granted, ss.compacted, ss.restored = nil, nil, true // ClearChat dropped the stored ones too
	ss.mu.Unlock()
	s.publish(Event{ConversationID: id, WorkspaceID: ss.wsID, Type: EventCleared})
	s.publishList(ctx, ss.wsID)
	return nil
}

// SetCriticMode turns actor–critic mode on or off for the conversation (persisted). A
// running loop follows the change at its next turn.
func (s *Service) SetCriticMode(ctx context.Context, id string, on bool) (State, error) {
	return s.updateConfig(ctx, id, func(c *Config) error {
		c.CriticMode = on
		return nil
	})
}

// SetSettings replaces the conversation's settings: send the whole Settings (as State
// returns it) with the fields changed. IterationCap 0 takes the default. A running loop
// keeps the models and persona it resolved; new ones apply from the next message or resume.
func (s *Service) SetSettings(ctx context.Context, id string, settings Settings) (State, error) {
	settings, err := s.checkSettings(ctx, settings)
	if err != nil {
		return State{}, err
	}
	return s.updateConfig(ctx, id, func(c *Config) error {
		c.Settings = settings
		return nil
	})
}

func (s *Service) updateConfig(ctx context.Context, id string, edit func(*Config) error) (State, error) {
	ss, _, err := s.lookup(ctx, id)
	if err != nil {
		return State{}, err
	}
	ss.ops.Lock()
	cfg, err := s.repo.ChatConfig(ctx, id)
	if err == nil {
		err = edit(&cfg)
	}
	if err == nil {
		err = s.repo.SaveChatConfig(ctx, cfg)
	}
	ss.ops.Unlock()
	if err != nil {
		return State{}, err
	}
	st, err := s.State(ctx, id)
	if err != nil {
		return State{}, err
	}
	s.publish(Event{ConversationID: id, WorkspaceID: cfg.WorkspaceID, Type: EventState, State: &st})
	s.publishList(ctx, cfg.WorkspaceID) // the list shows each conversation's persona and model
	return st, nil
}

// SetEditing records whether the user has an edit pending. While one is, no automatic turn
// starts: the loop stops at its next turn with reason "editing". Send clears it.
func (s *Service) SetEditing(ctx context.Context, id string, editing bool) error {
	ss, _, err := s.lookup(ctx, id)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	ss.editing = editing
	ss.mu.Unlock()
	return nil
}

// Shutdown stops every loop (what streamed is kept as partial messages, resumable after a
// restart) and waits for them.
func (s *Service) Shutdown() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel(errShutdown)
	s.wg.Wait()
}

func criticRef(cfg Config) string {
	if cfg.Settings.CriticProvider != "" {
		return cfg.Settings.CriticProvider
	}
	return cfg.Settings.Provider
}
