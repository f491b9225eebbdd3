// Package chat is the interactive chat of a workspace: any number of persisted
// conversations per workspace, each with its own settings (persona, skills, provider and
// model, critic mode), each driven by its own loop in the backend (streamed answers, tool
// calls through the policy, Stop), and its actor–critic mode, in which a critic model
// reviews every finished actor turn until it answers exactly /done.
//
// Saved history is only ever appended to. What each model sees is built at request time by
// pure functions: ActorView (the actor's history: no /done, no partial messages, critic
// feedback as user messages) and CriticView (the role-flipped history the critic reviews).
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Defaults of a workspace's chat settings.
const (
	// DefaultIterationCap bounds actor–critic rounds per user message, so two models that
	// never agree cannot spend without end.
	DefaultIterationCap = 10
	// MaxIterationCap keeps a typo (1000) from turning into a night of spending.
	MaxIterationCap = 100
	// DefaultAskAbove: a new conversation runs only tools that read without asking; the first
	// command typed into a pane, a file written or a page fetched waits for the person's yes
	// (as Claude Code and Codex ask before their first command). "Allow for this chat" on the
	// request lets that tool run for the rest of the conversation; Settings raise the level.
	// Stored conversations keep the level stored with them.
	DefaultAskAbove = tools.ReadOnly
)

// ErrNotFound means no such workspace or conversation, or no approval waiting under that id.
var ErrNotFound = errors.New("not found")

// ErrNothingToResume means the conversation ended where nothing is due: send a message.
var ErrNothingToResume = errors.New("nothing to resume: the conversation is finished; send a message to continue")

// FieldError names the settings field that is wrong.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// StartError is returned when a message could not be sent; Text is the user's text, for the
// UI to put back in the input.
type StartError struct {
	Text string
	Err  error
}

func (e *StartError) Error() string { return "the message was not sent: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Source says who wrote a stored message.
type Source string

const (
	SourceUser   Source = "user"
	SourceActor  Source = "actor"  // the chat's model: answers and tool calls (tool results too)
	SourceCritic Source = "critic" // the reviewer in actor–critic mode
	// SourceNote is a line for the person (why the loop stopped); no model ever sees it.
	SourceNote Source = "note"
)

// Message is one stored message of a conversation.
type Message struct {
	ConversationID string      `json:"conversationId"`
	WorkspaceID    string      `json:"workspaceId"`
	Seq            int64       `json:"seq"`
	Source         Source      `json:"source"`
	Message        llm.Message `json:"message"`
	// Partial marks a message whose stream was cut off (Stop, a failure, shutdown). It is
	// shown, never sent to a model, and never completed in place.
	Partial   bool      `json:"partial,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Settings are a conversation's knobs.
type Settings struct {
	Provider string `json:"provider"` // provider id or name; "" = the default provider
	// Model overrides the provider's configured model for this conversation (llm.Request.Model);
	// "" keeps it. The critic uses it too when it shares the actor's provider.
	Model string `json:"model"`
	// Persona is a catalog persona id ("" = none): its prompt, temperature, max_tokens and
	// tool allow list shape the actor.
	Persona string `json:"persona"`
	// Skills are catalog skill ids whose texts join the actor's instructions up front (after
	// the persona's own).
	Skills         []string `json:"skills"`
	CriticProvider string   `json:"criticProvider"` // "" = the same model as the actor
	IterationCap   int      `json:"iterationCap"`   // critic reviews per user message
	// AskAbove: tools riskier than this ask the user first (chat has no goal ceiling).
	AskAbove tools.Risk `json:"askAbove"`
}

// DefaultSettings are a new conversation's settings.
func DefaultSettings() Settings {
	return Settings{IterationCap: DefaultIterationCap, AskAbove: DefaultAskAbove, Skills: []string{}}
}

// Config is what a conversation keeps in the store besides its messages.
type Config struct {
	ConversationID string `json:"conversationId"`
	WorkspaceID    string `json:"workspaceId"`
	// Title names the conversation in the list; "" until the first message names it.
	Title      string `json:"title"`
	CriticMode bool   `json:"criticMode"`
	// CriticPrompt is the user's criteria for the critic: the last message sent in critic mode.
	CriticPrompt string   `json:"criticPrompt"`
	Settings     Settings `json:"settings"`
}

// Conversation is one of a workspace's chats as the list shows it.
type Conversation struct {
	Config    `tstype:",extends"` // the generated TypeScript extends Config, as the JSON flattens it
	CreatedAt time.Time           `json:"createdAt"`
	UpdatedAt time.Time           `json:"updatedAt"` // the last message stored (or the creation)
	Messages  int                 `json:"messages"`  // how many are stored: deleting asks first when any are
	Running   bool                `json:"running"`
}

// State is a conversation as the UI shows it: the stored config and what runs now.
type State struct {
	Config  `tstype:",extends"`
	Running bool   `json:"running"`
	Turn    Source `json:"turn,omitempty"` // actor or critic while one streams
	Queued  int    `json:"queued"`         // user messages waiting for the current turn to end
	Editing bool   `json:"editing"`
	// Next is what Resume would start when idle: "actor", "critic", or "" (nothing due).
	Next      Source           `json:"next,omitempty"`
	Approvals []agent.Approval `json:"approvals"` // tool calls waiting for the user
}

// StopReason says why a loop stopped.
type StopReason string

const (
	ReasonDone         StopReason = "done"          // the actor answered (critic mode: the critic said /done)
	ReasonUserMessage  StopReason = "user_message"  // a queued user message won over the automatic turn
	ReasonEditing      StopReason = "editing"       // an edit is pending (SetEditing)
	ReasonStopped      StopReason = "stopped"       // Stop, Clear, or the app shutting down
	ReasonStreamFailed StopReason = "stream_failed" // the model call failed (or the reply could not be saved)
	ReasonIterationCap StopReason = "iteration_cap" // the critic gave feedback IterationCap times
	ReasonToolFailures StopReason = "tool_failures" // maxFailingBatches failing tool batches in a row
	ReasonTurnCap      StopReason = "turn_cap"      // maxToolTurns automatic tool turns
	ReasonGuard        StopReason = "guard"         // the loop guard halted the actor for repeating itself
)

// Event types. Every event describing a stored change is published after the store has it.
const (
	EventLoopStarted       = "loop_started"       // Source: the first turn
	EventMessageStarted    = "message_started"    // Source, Turn: a model message starts streaming
	EventMessageDelta      = "message_delta"      // Source, Turn, Text, Reasoning: live only, never stored
	EventMessageFinished   = "message_finished"   // Source, Message (stored); Turn for streamed ones, Message nil if nothing arrived
	EventToolStarted       = "tool_started"       // Tool: call id, name, args
	EventToolFinished      = "tool_finished"      // Tool: with result, isError, images, durationMs
	EventCriticVerdict     = "critic_verdict"     // Verdict
	EventLoopStopped       = "loop_stopped"       // Reason, Text (explanation, may be empty), State after the stop
	EventApprovalRequested = "approval_requested" // Approval
	EventApprovalResolved  = "approval_resolved"  // Approval
	EventQueued            = "queued"             // Text: a user message waits for the current turn
	EventState             = "state"              // State: mode or settings changed
	EventCleared           = "cleared"            // the conversation was deleted
	EventNotice            = "notice"             // Text: e.g. history trimmed to the model's window; live only
	EventGuard             = "guard"              // Guard: the loop guard blocked, disabled or halted a tool call; live only
	// EventConversations: a workspace's list changed (started, renamed, deleted, re-set);
	// Conversations is the whole list after the change.
	EventConversations = "conversations_changed"
)

// Event is one change of a conversation (or, for conversations_changed, of a workspace's list).
type Event struct {
	ConversationID string               `json:"conversationId,omitempty"`
	WorkspaceID    string               `json:"workspaceId"`
	Type           string               `json:"type"`
	At             time.Time            `json:"at"`
	Source         Source               `json:"source,omitempty"`
	Turn           string               `json:"turn,omitempty"` // ties one streamed message's started, deltas and finished
	Text           string               `json:"text,omitempty"`
	Reasoning      bool                 `json:"reasoning,omitempty"` // a delta of reasoning, not answer text
	Message        *Message             `json:"message,omitempty"`
	Tool           *ToolRun             `json:"tool,omitempty"`
	Verdict        *Verdict             `json:"verdict,omitempty"`
	Reason         StopReason           `json:"reason,omitempty"`
	Approval       *agent.Approval      `json:"approval,omitempty"`
	Guard          *agent.GuardDecision `json:"guard,omitempty"`
	State          *State               `json:"state,omitempty"`
	// Conversations is the workspace's list after a conversations_changed event.
	Conversations []Conversation `json:"conversations,omitempty"`
}

// ToolRun is one tool call as the chat shows it (collapsed: name, then args and result).
type ToolRun struct {
	CallID     string          `json:"callId"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args"`
	Result     string          `json:"result,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Images     int             `json:"images,omitempty"` // the pictures are in the stored tool message
	DurationMS int64           `json:"durationMs,omitempty"`
}

// Verdict is the critic's answer to one actor turn.
type Verdict struct {
	Done      bool  `json:"done"` // exactly /done; otherwise the message is feedback
	Seq       int64 `json:"seq"`  // the stored critic message
	Iteration int   `json:"iteration"`
	Cap       int   `json:"cap"`
}

// Repo is the persistence the chat needs; the store implements it. Every conversation id
// that names no stored conversation is an error wrapping ErrNotFound.
type Repo interface {
	// ChatConversations lists a workspace's conversations, the most recently updated first.
	ChatConversations(ctx context.Context, wsID string) ([]Conversation, error)
	// CreateChatConversation stores a new conversation (c.ConversationID set by the caller),
	// setting its CreatedAt and UpdatedAt. An unknown workspace wraps ErrNotFound.
	CreateChatConversation(ctx context.Context, c *Conversation) error
	// DeleteChatConversation deletes a conversation and its messages.
	DeleteChatConversation(ctx context.Context, id string) error
	// ChatMessages returns a conversation's messages in order.
	ChatMessages(ctx context.Context, id string) ([]Message, error)
	// AppendChatMessages stores msgs after the last one, setting their Seq and CreatedAt.
	AppendChatMessages(ctx context.Context, id string, msgs []Message) error
	// ClearChat deletes a conversation's messages (its config stays).
	ClearChat(ctx context.Context, id string) error
	// ChatConfig returns a conversation's stored config.
	ChatConfig(ctx context.Context, id string) (Config, error)
	// SaveChatConfig replaces a stored conversation's config (title and settings).
	SaveChatConfig(ctx context.Context, c Config) error
}

// Catalog is where personas and skills come from (*catalog.Catalog: the config dir's files
// over the built-in defaults); nil in Options means the chat has none, and a conversation
// that names one is refused.
type Catalog interface {
	Persona(id string) (catalog.Persona, bool)
	Skill(id string) (catalog.Skill, bool)
}

// Models resolves provider references ("" = the default, or a provider id or name) to
// callable models. It has the shape of goal.Models, so one resolver serves both.
type Models interface {
	Model(ctx context.Context, ref string) (agent.Model, error)
}
