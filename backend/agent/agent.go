// Package agent is the one turn engine under goals, chat and fleet tasks. It builds each
// request (system prompt, tools, conversation, fitted to the model's window), streams the
// reply, takes every tool call through the loop guard, the caller's policy and the user's
// approval, runs it, and publishes what happened as typed events. It knows nothing of goals
// or chats: what differs between them is supplied through the small hooks in Hooks, and the
// loop around the turns (when to stop, what to say next) stays with the caller.
package agent

import (
	"context"
	"sync"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Model is a resolved provider ready to call.
type Model struct {
	Provider  llm.Provider
	Name      string // the provider's name, for messages
	ModelID   string
	Vision    bool
	Window    int // context window in tokens, 0 if unknown
	MaxTokens int
	Price     *llm.Price
}

// Cost is what usage u costs on this model, 0 when its price is unknown.
func (m Model) Cost(u llm.Usage) float64 {
	if m.Price == nil {
		return 0
	}
	return llm.Cost(u, *m.Price)
}

// KeptImages is how many pictures stay in a model's context: the latest show the page as it
// is now; older ones cost tokens and mislead.
const KeptImages = 3

// Agent drives one model through tools for one piece of work (a goal, a chat's actor or
// critic). One loop goroutine owns it; it is not safe for concurrent use.
type Agent struct {
	// Scope names the work in the texts the model reads: "goal" or "chat".
	Scope string
	// AskHint says how the model may ask the person for what it needs, after a denial:
	// "through your report" (a goal), "the user" (a chat).
	AskHint string
	Model   Model
	// WorkDir is what relative paths in tool arguments mean (tools.Call.Dir): the goal's
	// sandbox or work dir, the chat's home; the policy judges paths against the same.
	WorkDir string
	// Sandbox is the confined caller's sandbox dir ("" when not confined): its calls may not
	// reach out of that boundary (tools.Call.Sandbox).
	Sandbox string
	// PaneID is the caller's own pane (a goal's) and WorkspaceID its workspace (a chat's):
	// the workspace tools act on the workspace they name (tools.Call).
	PaneID, WorkspaceID string
	// Registry holds the tools; Offer picks the ones this agent may call (nil: all).
	Registry *tools.Registry
	Offer    func(name string) bool
	// ByNeed offers the tools by need (offer.go): a request sends the core tools, the groups
	// the work's situation calls for, and the tools found with find_tools or called since,
	// each added at the end of the list; the rest wait behind find_tools. false, or a
	// registry without find_tools, sends every tool the agent may call, as before.
	ByNeed bool
	// Browser and Fleet say the work needs the browser or the fleet tools from its start,
	// whatever its workspace holds: a goal whose criterion looks at a page, a fleet task's
	// goal. Only with ByNeed.
	Browser, Fleet bool
	// Instructions are added to the system prompt of every request: a persona's prompt, the
	// skills attached up front (see catalog.Persona.Apply). "" adds nothing.
	Instructions string
	// Temperature overrides the provider's configured temperature (a persona's); nil keeps it.
	Temperature *float64
	// Guard is the loop guard (nil: none).
	Guard *Guard
	// Decider decides every call the guard lets through, the model's own and the nested ones
	// alike (a policy.Decider: the owner's rules, then its policy); an Ask goes to the person.
	Decider Decider
	// Caller is the owner's part of every call it makes (tools.Call: a goal's id, say); the
	// agent adds the call itself and where it works (WorkDir, Sandbox, PaneID, WorkspaceID).
	Caller tools.Call
	// Bookkeeping names the tools that keep the owner's own books (a goal's claim and
	// checklist): the guard does not count them as work done. nil: none.
	Bookkeeping func(name string) bool
	// ApprovalPrefix begins the ids of this agent's approval requests (default "appr-").
	ApprovalPrefix string
	// Approvals is where calls wait for the person; Owner says whose they are (its GoalID
	// or WorkspaceID is copied onto every request).
	Approvals *Approvals
	Owner     Approval
	// Screenshot returns a small JPEG of a browser pane; for a model with vision it is
	// attached after browser actions (nil: never).
	Screenshot func(ctx context.Context, paneID string) ([]byte, error)
	// Tasks owns the goroutines of tools still winding down after a stop; the service that
	// owns the agent waits for it at shutdown. nil: the agent waits for each tool itself.
	Tasks *sync.WaitGroup
	// ConversationID names the conversation for the provider's prompt cache (the goal's or
	// the chat's id); "" sends no cache key and no cache breakpoints.
	ConversationID string
	// Summarizer writes the summaries of compactions (the critic's or a cheaper model);
	// nil: Model.
	Summarizer *Model
	// Compaction is how the conversation is sent since it outgrew the window (nil: whole).
	// The owner restores a stored one, and keeps each new one Hooks.Compacted reports.
	Compaction *Compaction
	Hooks      Hooks

	window Window
	// told holds the tool sources' problems already put before the person (noteProblems).
	told map[string]bool
	// offer is the tool list sent so far with ByNeed (offer.go).
	offer toolOffer
}

func (a *Agent) publish(e Event) {
	if a.Hooks.Publish != nil {
		a.Hooks.Publish(e)
	}
}

// Decider decides one call: run it, ask the person, or refuse it (policy.Decider).
type Decider interface {
	Decide(ctx context.Context, t tools.Tool, call tools.Call) policy.Verdict
}

func (a *Agent) bookkeeping(name string) bool { return a.Bookkeeping != nil && a.Bookkeeping(name) }

func (a *Agent) offered(name string) bool { return a.Offer == nil || a.Offer(name) }
