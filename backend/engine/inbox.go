package engine

import (
	"context"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// newInbox is the inbox over the engine's approval desk, goals, fleets, workspaces and
// terminals. It follows them only in a door that lives on (the window, `serve`): a CLI
// command reads it when asked and exits.
func (e *Engine) newInbox(approvals *agent.Approvals, o options) error {
	src := inbox.Sources{
		Approvals:  func(ctx context.Context) ([]agent.Approval, error) { return approvals.Stored(ctx, nil) },
		Goal:       e.Goals.Get,
		Fleets:     e.Fleets.List,
		Workspaces: e.Workspaces.List,
		GoalIn:     func(paneID string) bool { _, ok := e.Goals.WorkingIn(paneID); return ok },
	}
	var err error
	e.Inbox, err = inbox.NewService(src, e.inboxEvents, inbox.Options{Probe: inbox.TerminalProbe(e.Terminals), Logger: o.logger,
		Wakers: []pubsub.Source{pubsub.From(e.goalEvents, "goals"), pubsub.From(e.fleetEvents, "fleets"),
			pubsub.From(e.chatEvents, "chat"), pubsub.From(e.wsEvents, "workspaces")}})
	if err != nil {
		return fmt.Errorf("start the inbox: %w", err)
	}
	if resumesFleets[o.command] {
		e.Inbox.Start()
	}
	return nil
}
