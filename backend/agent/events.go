package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// EventKind says what happened during a turn.
type EventKind string

const (
	EventDelta             EventKind = "delta"              // Text streamed; Reasoning marks thinking
	EventNotice            EventKind = "notice"             // Text: something the person should know
	EventToolStarted       EventKind = "tool_started"       // Call: about to be decided and run
	EventGuard             EventKind = "guard"              // Guard: the loop guard blocked, disabled or halted
	EventApprovalRequested EventKind = "approval_requested" // Approval: stored and answerable
	EventApprovalResolved  EventKind = "approval_resolved"  // Approval: answered, withdrawn, or (Pending) left for a restart
)

// Event is one typed event of a turn, handed to Hooks.Publish. The goal and the chat turn
// them into their own stories; the agent never stores or forwards them itself.
type Event struct {
	Kind      EventKind
	Text      string
	Reasoning bool
	Call      *CallInfo
	Guard     *GuardDecision
	Approval  *Approval
}

// CallInfo is a tool call as it is about to run.
type CallInfo struct {
	ID   string
	Name string
	Args json.RawMessage
}

// CallRecord is one call's outcome, handed to Hooks.Finish to be recorded.
type CallRecord struct {
	Call   llm.ToolCall
	Args   json.RawMessage // as run; {"raw": …} when the model's arguments did not parse
	Result llm.ToolResult
	Start  time.Time
	// Ran is true when the tool ran (not refused, blocked, denied or malformed).
	Ran bool
}

// Verdict is the caller's decision on one call: run it, ask the user, or refuse it.
type Verdict struct {
	Decision policy.Decision
	// Reason: for Deny, the full text the model reads; for Ask, why the person is asked.
	Reason string
	// Risk is the call's own risk, shown on the approval request.
	Risk tools.Risk
}

// Hooks are what a policy over the agent (a goal, a chat, a fleet task) supplies. Only Check
// is required.
type Hooks struct {
	// Grant remembers the person's "allow for this goal / this chat" for a tool.
	Grant func(tool string)
	// Finish records a call's outcome (a goal's step log, a chat's tool item) and returns the
	// result as the model will see it. nil: the result as it is.
	Finish func(rec CallRecord) llm.ToolResult
	// Publish receives the turn's typed events. nil: they are dropped.
	Publish func(Event)
	// CallContext gives the context one call (its approval wait and its run) works under,
	// and its release; a goal's pause cancels it without stopping the goal. nil: the batch's.
	CallContext func(ctx context.Context) (context.Context, func())
	// ToolContext dresses the context a tool runs with (a goal hands its tools its controls).
	ToolContext func(ctx context.Context) context.Context
	// Interrupted is the text the model reads for a call its context cut off, by cause. nil:
	// a default naming the scope.
	Interrupted func(cause error) string
	// OpenTodos lists the checklist items not done yet, which a claim of completion should
	// not leave behind (nil: there is no checklist).
	OpenTodos func() []string
	// Abandon reports that the work is being put away for a later process (the app stops):
	// the batch is left unfinished and a waiting approval stays pending, to be asked again.
	Abandon func() bool
	// Compacted reports a new compaction of the conversation, to be stored with it and shown.
	Compacted func(c Compaction)
	// Usage receives what the agent's own side calls (compaction summaries) cost, on model m.
	Usage func(m Model, u llm.Usage)
	// StepOf names the step a tool call's output was recorded as (0: none). With it, large
	// old outputs are sent as stubs the model expands with read_step_output.
	StepOf func(callID string) int
}
