// Package goal is the Goal Runner: given a goal and a success criterion, it drives a model in a
// server-side loop until the criterion verifies, the clock or the step cap trips, the user
// aborts, or the model gives up with a report. The model cannot stop on its own.
package goal

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// FieldError names the field of a request that is wrong.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Status is where a goal is in its life.
type Status string

const (
	StatusPending          Status = "pending" // queued behind the concurrency limit or its dependencies
	StatusRunning          Status = "running"
	StatusPaused           Status = "paused"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusBudgetExceeded   Status = "budget_exceeded" // paused until the user raises the budget or stops it
	StatusInterrupted      Status = "interrupted"     // the app died while it ran; resumable
	StatusCompleted        Status = "completed"
	StatusFailed           Status = "failed"
	StatusAborted          Status = "aborted"
)

// Finished reports whether the goal has ended for good (it may still be re-opened).
func (s Status) Finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusAborted
}

// Defaults from the product description.
const (
	DefaultCriticInterval = 5
	DefaultWallClock      = time.Hour
	DefaultMaxSteps       = 300
	DefaultBounceBudget   = 5
)

// Duration is a time.Duration that reads and writes JSON as "90s" / "1h0m0s" (and accepts a
// number of seconds), so stored goals and API bodies are readable.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err == nil {
		*d = Duration(time.Duration(secs * float64(time.Second)))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"90s\" or \"1h\", or a number of seconds")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: use a form such as \"90s\", \"15m\" or \"1h\"", s)
	}
	*d = Duration(v)
	return nil
}

// Settings are a goal's runtime knobs; zero values take the defaults.
type Settings struct {
	Provider       string   `json:"provider,omitempty"`       // provider id or name; "" = the default provider
	CriticProvider string   `json:"criticProvider,omitempty"` // "" = the critic default, else the goal's provider
	CriticInterval *int     `json:"criticIntervalSteps,omitempty"`
	WallClock      Duration `json:"wallClock,omitempty"`
	MaxSteps       int      `json:"maxSteps,omitempty"`
	BounceBudget   int      `json:"bounceBudget,omitempty"`
	BudgetUSD      float64  `json:"budgetUsd,omitempty"`    // 0 = no cap
	BudgetTokens   int      `json:"budgetTokens,omitempty"` // 0 = no cap
	FinalizeCritic bool     `json:"finalizeCritic,omitempty"`
	// WorkDir is where shell criteria run when there is no sandbox (absolute).
	WorkDir string `json:"workDir,omitempty"`
	// Env is what the goal's shell and its criterion's commands get on top of the inherited
	// environment, NAME=value (a fleet task's PORT and scratch dirs).
	Env []string `json:"env,omitempty"`
	// ScratchDir is the goal's own dir for temporary files and caches, where Env's TMPDIR
	// points (a fleet task's, next to its worktree): a confined shell may write there. "": a
	// confined goal gets one under the user's cache dir.
	ScratchDir string `json:"scratchDir,omitempty"`
	// Guard tunes the loop guard's thresholds (zero fields: the defaults).
	Guard agent.GuardSettings `json:"guard,omitzero"`
	// ContextWindow overrides the model's context window in tokens (0: the provider's
	// setting, else the known model's; a "context length exceeded" answer teaches the rest).
	ContextWindow int `json:"contextWindow,omitempty"`
}

// criticInterval is the effective interval (0 = off).
func (s Settings) criticInterval() int {
	if s.CriticInterval == nil {
		return DefaultCriticInterval
	}
	return *s.CriticInterval
}

func (s Settings) withDefaults() Settings {
	if s.WallClock <= 0 {
		s.WallClock = Duration(DefaultWallClock)
	}
	if s.MaxSteps <= 0 {
		s.MaxSteps = DefaultMaxSteps
	}
	if s.BounceBudget <= 0 {
		s.BounceBudget = DefaultBounceBudget
	}
	return s
}

// Spec is everything a goal is started with.
type Spec struct {
	PaneID    string         `json:"paneId"`
	Goal      string         `json:"goal"`
	Criterion criterion.Spec `json:"criterion"`
	Policy    policy.Policy  `json:"policy"`
	Settings  Settings       `json:"settings"`
	DependsOn []string       `json:"dependsOn,omitempty"`
	// Priority orders the queue: a higher one starts first, then the oldest (see schedule.go).
	Priority int `json:"priority,omitempty"`
	// Group is the set of goals this one is scheduled with, a fleet's id ("" none): at most
	// GroupLimit of them run at once (0: only the service's limit), each waits for its pane to
	// be free, and none starts until the group's owner opens it (Service.OpenGroup).
	Group      string `json:"group,omitempty"`
	GroupLimit int    `json:"groupLimit,omitempty"`
	// Handoff is what the goal starts knowing besides its goal: the reports of the fleet tasks
	// it depends on, context other agents shared. It goes into the first prompt only.
	Handoff string `json:"handoff,omitempty"`
	// Persona is the id of the persona the agent works as ("" none): its prompt joins the
	// system prompt, its temperature and max_tokens reach every request, its tools list
	// narrows the offer. Skills are attached up front besides the persona's own. Both are
	// looked up again on resume, so an edited file counts.
	Persona string   `json:"persona,omitempty"`
	Skills  []string `json:"skills,omitempty"`
	// Worktree is the goal's own git worktree and branch (`goal run --worktree`), nil
	// without: it works there, and its branch is reviewed and landed like a fleet task's.
	// Start makes it for a spec that has one, of any content (a goal run again keeps asking
	// for one; its dirs are found in the person's checkout again): see worktree.go.
	Worktree *worktree.Worktree `json:"worktree,omitempty"`
}

// Todo is one item of the model's checklist.
type Todo struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
	Note string `json:"note,omitempty"`
}

// DeclaredStep is the step the model said it is about to take (declare_step).
type DeclaredStep struct {
	Number          int    `json:"number"`
	Title           string `json:"title"`
	Action          string `json:"action"`
	SuccessCriteria string `json:"successCriteria"`
}

// State is what the runner keeps between iterations, persisted so a resume loses nothing.
type State struct {
	Steps            int           `json:"steps"`
	Bounces          int           `json:"bounces"`
	ModelTurns       int           `json:"modelTurns"`
	Usage            llm.Usage     `json:"usage"`
	CostUSD          float64       `json:"costUsd"`
	ElapsedMS        int64         `json:"elapsedMs"` // wall clock used by earlier runs of this goal
	Todos            []Todo        `json:"todos,omitempty"`
	ActiveTodo       int           `json:"activeTodo"`
	Declared         *DeclaredStep `json:"declared,omitempty"`
	StepsSinceCritic int           `json:"stepsSinceCritic"`
	Granted          []string      `json:"granted,omitempty"` // tools the user allowed for this goal
	GuardBlocks      int           `json:"guardBlocks"`
	LastCritic       string        `json:"lastCritic,omitempty"`
	// Verifying holds a claim whose verification a pause cut off: it is verified again when
	// the goal goes on (after a restart too), never counted as a failed check.
	Verifying *string `json:"verifying,omitempty"`
	// Compaction is how the conversation is sent since it outgrew the model's window.
	Compaction *agent.Compaction `json:"compaction,omitempty"`
}

// Goal is a goal as stored and shown.
type Goal struct {
	ID        string     `json:"id"`
	Spec      Spec       `json:"spec"`
	Status    Status     `json:"status"`
	Report    string     `json:"report"`
	State     State      `json:"state"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
}

// Step is one tool call the runner made, with its result.
type Step struct {
	GoalID     string          `json:"goalId"`
	Index      int             `json:"index"`
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Result     string          `json:"result"`
	IsError    bool            `json:"isError"`
	StartedAt  time.Time       `json:"startedAt"`
	DurationMS int64           `json:"durationMs"`
	// Images counts the pictures the result carried (screenshots); Service.StepImage serves them.
	Images int `json:"images"`
	// Pictures are those pictures, on their way to the store (never sent with the step).
	Pictures []llm.Image `json:"-"`
	// Usage is the tokens of the model turn that asked for this step, cached and uncached
	// input apart; only the first step of a turn's batch carries it.
	Usage *llm.Usage `json:"usage,omitempty"`
}

// Summary is the one-line form the critic and judges read: "[i] tool(args…) → ok|err: preview".
func (s Step) Summary() string {
	outcome := "ok"
	if s.IsError {
		outcome = "err"
	}
	return fmt.Sprintf("[%d] %s(%s) → %s: %s", s.Index, s.Tool, agent.Truncate(oneLine(string(s.Args)), 120), outcome, agent.Truncate(oneLine(s.Result), 160))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Event types, persisted and published live.
const (
	EventStarted            = "started"
	EventStep               = "step"
	EventCritic             = "critic"
	EventGuard              = "guard"
	EventVerificationFailed = "verification_failed"
	EventVerificationPassed = "verification_passed"
	EventApprovalRequested  = "approval_requested"
	EventApprovalResolved   = "approval_resolved"
	EventPaused             = "paused"
	EventResumed            = "resumed"
	EventSteered            = "steered"
	EventEnded              = "ended"
	EventStatus             = "status"     // any other status change (queued, interrupted, budget)
	EventNotice             = "notice"     // something the user should know that is not an error (no OS confinement, …)
	EventCompaction         = "compaction" // the conversation was compacted to fit the model's window
	EventDelta              = "delta"      // streamed model text; live only, never stored
)

// Event is one entry of a goal's story.
type Event struct {
	GoalID string          `json:"goalId"`
	Seq    int64           `json:"seq"`
	Type   string          `json:"type"`
	Data   json.RawMessage `json:"data"`
	At     time.Time       `json:"at"`
}
