package inbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// maxTitle bounds the text of a goal or task shown as an item's title, so one long goal does
// not fill the panel.
const maxTitle = 120

// Sources are the services the inbox reads. Approvals and Workspaces are required; a nil
// Fleets or Goal leaves their items out (a door without fleets).
type Sources struct {
	// Approvals lists every pending approval, goals' and chats' alike.
	Approvals func(ctx context.Context) ([]agent.Approval, error)
	// Goal reads a goal, for the pane an approval's goal works in.
	Goal func(ctx context.Context, id string) (goal.Goal, error)
	// Fleets lists the fleets with their tasks.
	Fleets func(ctx context.Context) ([]fleet.Fleet, error)
	// Workspaces is the window's layout: which workspace holds a pane, and what has focus.
	Workspaces func(ctx context.Context) (workspace.List, error)
	// GoalIn says whether a goal works in a pane: a pane a goal drives does not wait for the
	// person, however idle it looks.
	GoalIn func(paneID string) bool
}

// layout is what the inbox needs of the workspaces, indexed by pane.
type layout struct {
	workspaceOf map[string]string
	pane        map[string]workspace.Pane
	// front is the pane the person looks at: the focused pane of the open workspace.
	front string
	order []string // terminal panes in tab order, for a stable walk
}

func newLayout(list workspace.List) layout {
	l := layout{workspaceOf: map[string]string{}, pane: map[string]workspace.Pane{}}
	for _, ws := range list.Workspaces {
		for _, p := range ws.Panes {
			l.workspaceOf[p.ID] = ws.ID
			l.pane[p.ID] = p
			if p.Kind == workspace.KindTerminal {
				l.order = append(l.order, p.ID)
			}
		}
		if ws.ID == list.ActiveID {
			l.front = ws.FocusedPaneID
		}
	}
	return l
}

// stored lists the items kept by the services (approvals and fleet tasks): they change only
// with those services' events.
func storedItems(ctx context.Context, src Sources, l layout) ([]Item, error) {
	approvals, err := src.Approvals(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the pending approvals: %w", err)
	}
	items := make([]Item, 0, len(approvals))
	for _, a := range approvals {
		items = append(items, approvalItem(ctx, src, l, a))
	}
	if src.Fleets == nil {
		return items, nil
	}
	fleets, err := src.Fleets(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the fleets: %w", err)
	}
	for _, f := range fleets {
		for _, t := range f.Tasks {
			if it, ok := taskItem(f, t, l); ok {
				items = append(items, it)
			}
		}
	}
	return items, nil
}

func approvalItem(ctx context.Context, src Sources, l layout, a agent.Approval) Item {
	it := Item{ID: "approval:" + a.ID, Kind: KindApproval, ApprovalID: a.ID, GoalID: a.GoalID,
		WorkspaceID: a.WorkspaceID, Since: a.CreatedAt, Detail: a.Reason}
	it.Title = "Approve " + a.Tool
	if a.Risk != "" {
		it.Title += " (" + a.Risk + ")"
	}
	if a.GoalID != "" && src.Goal != nil {
		if g, err := src.Goal(ctx, a.GoalID); err == nil {
			it.PaneID = g.Spec.PaneID
			it.Title += " for goal: " + clip(g.Spec.Goal)
		}
		// A goal that cannot be read still has its approval listed, without its pane.
	} else if a.ConversationID != "" {
		it.Title += " in the chat"
	}
	if it.WorkspaceID == "" {
		it.WorkspaceID = l.workspaceOf[it.PaneID]
	}
	return it
}

func taskItem(f fleet.Fleet, t fleet.Task, l layout) (Item, bool) {
	it := Item{FleetID: f.ID, TaskID: t.ID, GoalID: t.GoalID, PaneID: t.Pane, WorkspaceID: l.workspaceOf[t.Pane],
		Since: since(t), Detail: t.Reason}
	if _, ok := l.pane[t.Pane]; !ok {
		it.PaneID = "" // a pane the fleet never made: the item opens the fleet instead
	}
	name := f.Name + " / " + t.ID
	switch {
	case t.Status == fleet.TaskFailed:
		it.Kind, it.Title = KindTaskFailed, "Task failed: "+name
		if it.Detail == "" {
			it.Detail = clip(lastLine(t.Report))
		}
	case t.Status == fleet.TaskBlocked:
		it.Kind, it.Title = KindTaskBlocked, "Task blocked: "+name
	case t.Status == fleet.TaskCompleted && t.Worktree != nil && (t.Review == nil || t.Review.Land != fleet.LandLanded):
		it.Kind, it.Title = KindReview, "Ready to review and land: "+name
		it.Detail = "branch " + t.Worktree.Branch
		if t.Review != nil && t.Review.Land == fleet.LandRefused {
			it.Detail += ": the last landing was refused"
		}
	default:
		return Item{}, false
	}
	it.ID = string(it.Kind) + ":" + f.ID + "/" + t.ID
	it.Urgency = it.Kind.Urgency()
	return it, true
}

// since is when a task started to wait: when it ended, else when it was made (a blocked task
// never started).
func since(t fleet.Task) time.Time {
	if t.EndedAt != nil {
		return *t.EndedAt
	}
	return t.CreatedAt
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxTitle {
		return string(r[:maxTitle-1]) + "…"
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
