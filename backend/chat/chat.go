// Package chat is the interactive chat of a workspace: one persisted conversation per
// workspace, driven by a loop in the backend (streamed answers, tool calls through the
// policy, Stop), and its actor–critic mode, in which a critic model reviews every finished
// actor turn until it answers exactly /done.
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
	// DefaultAskAbove: tools that only read or write locally run without asking.
	DefaultAskAbove = tools.WriteLocal
)

// ErrNotFound means no such workspace, or no approval waiting under that id.
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

// Message is one stored message of a workspace's conversation.
type Message struct {
	WorkspaceID string      `json:"workspaceId"`
	Seq         int64       `json:"seq"`
	Source      Source      `json:"source"`
	Message     llm.Message `json:"message"`
	// Partial marks a message whose stream was cut off (Stop, a failure, shutdown). It is
	// shown, never sent to a model, and never completed in place.
	Partial   bool      `json:"partial,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Settings are a workspace's chat knobs.
type Settings struct {
	Provider       string `json:"provider"`       // provider id or name; "" = the default provider
	CriticProvider string `json:"criticProvider"` // "" = the same model as the actor
	IterationCap   int    `json:"iterationCap"`   // critic reviews per user message
	// AskAbove: tools riskier than this ask the user first (chat has no goal ceiling).
	AskAbove tools.Risk `json:"askAbove"`
}

// Config is what a workspace's chat keeps in the store besides its messages.
type Config struct {
	WorkspaceID string `json:"workspaceId"`
	CriticMode  bool   `json:"criticMode"`
	// CriticPrompt is the user's criteria for the critic: the last message sent in critic mode.
	CriticPrompt string   `json:"criticPrompt"`
	Settings     Settings `json:"settings"`
}

// DefaultConfig is the config of a workspace that never changed its chat settings.
func DefaultConfig(wsID string) Config {
	return Config{WorkspaceID: wsID, Settings: Settings{IterationCap: DefaultIterationCap, AskAbove: DefaultAskAbove}}
}

// State is a workspace's chat as the UI shows it: the stored config and what runs now.
type State struct {
	Config
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
)

// Event is one change of a workspace's chat.
type Event struct {
	WorkspaceID string               `json:"workspaceId"`
	Type        string               `json:"type"`
	At          time.Time            `json:"at"`
	Source      Source               `json:"source,omitempty"`
	Turn        string               `json:"turn,omitempty"` // ties one streamed message's started, deltas and finished
	Text        string               `json:"text,omitempty"`
	Reasoning   bool                 `json:"reasoning,omitempty"` // a delta of reasoning, not answer text
	Message     *Message             `json:"message,omitempty"`
	Tool        *ToolRun             `json:"tool,omitempty"`
	Verdict     *Verdict             `json:"verdict,omitempty"`
	Reason      StopReason           `json:"reason,omitempty"`
	Approval    *agent.Approval      `json:"approval,omitempty"`
	Guard       *agent.GuardDecision `json:"guard,omitempty"`
	State       *State               `json:"state,omitempty"`
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

// Repo is the persistence the chat needs; the store implements it.
type Repo interface {
	// ChatMessages returns a workspace's conversation in order.
	ChatMessages(ctx context.Context, wsID string) ([]Message, error)
	// AppendChatMessages stores msgs after the last one, setting their Seq and CreatedAt.
	// An unknown workspace is an error wrapping ErrNotFound.
	AppendChatMessages(ctx context.Context, wsID string, msgs []Message) error
	// ClearChat deletes a workspace's messages (its config stays).
	ClearChat(ctx context.Context, wsID string) error
	// ChatConfig returns the stored config, or DefaultConfig(wsID) if none was saved.
	ChatConfig(ctx context.Context, wsID string) (Config, error)
	SaveChatConfig(ctx context.Context, c Config) error
}

// Models resolves provider references ("" = the default, or a provider id or name) to
// callable models. It has the shape of goal.Models, so one resolver serves both.
type Models interface {
	Model(ctx context.Context, ref string) (agent.Model, error)
}
