// Package inbox is one list, across workspaces, of what waits for the person: approvals, blocked
// or failed fleet tasks, work ready to review or land, agent panes idle at their prompt, and long
// commands that finished in a pane nobody is looking at. It is ordered by urgency, so one key can
// walk it from the most pressing item down.
package inbox

import (
	"cmp"
	"slices"
	"time"
)

// Kind is what an item waits on.
type Kind string

const (
	KindApproval    Kind = "approval"     // a tool call above a ceiling waits for a yes or no
	KindTaskFailed  Kind = "task_failed"  // a fleet task ended without its result
	KindTaskBlocked Kind = "task_blocked" // a fleet task cannot start: a dependency failed
	KindReview      Kind = "review"       // a task's branch verified and waits to be reviewed or landed
	KindAgentAsking Kind = "agent_asking" // an agent pane asks a question or a permission
	KindAgentIdle   Kind = "agent_idle"   // an agent pane is idle at its prompt
	KindCommandDone Kind = "command_done" // a long command finished in a pane without focus
)

// Urgency ranks the kinds: a lower number comes first. An approval blocks a goal outright; a
// failed or blocked task holds up its fleet; finished work waits to be taken; an idle agent or
// a finished command only waits for the next instruction.
func (k Kind) Urgency() int {
	switch k {
	case KindApproval:
		return 0
	case KindTaskFailed, KindTaskBlocked:
		return 1
	case KindReview:
		return 2
	case KindAgentAsking:
		return 3
	case KindAgentIdle:
		return 4
	default:
		return 5
	}
}

// Item is one thing waiting for the person. ID is stable while the item waits, so the UI can
// remember which item it showed last.
type Item struct {
	ID      string `json:"id"`
	Kind    Kind   `json:"kind"`
	Urgency int    `json:"urgency"`
	Title   string `json:"title"`
	Detail  string `json:"detail,omitempty"`
	// WorkspaceID and PaneID are where the item is seen ("" when it has no pane: a chat's
	// approval names its workspace only, a task that never started names no pane).
	WorkspaceID string    `json:"workspaceId,omitempty"`
	PaneID      string    `json:"paneId,omitempty"`
	GoalID      string    `json:"goalId,omitempty"`
	FleetID     string    `json:"fleetId,omitempty"`
	TaskID      string    `json:"taskId,omitempty"`
	ApprovalID  string    `json:"approvalId,omitempty"`
	Since       time.Time `json:"since"`
}

// Sort orders items by urgency, then by how long they have waited (longest first), then by id,
// so the order is the same on every read.
func Sort(items []Item) {
	slices.SortStableFunc(items, Compare)
}

// Compare is the inbox order of two items.
func Compare(a, b Item) int {
	return cmp.Or(cmp.Compare(a.Urgency, b.Urgency), a.Since.Compare(b.Since), cmp.Compare(a.ID, b.ID))
}
