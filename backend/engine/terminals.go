package engine

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// wakingTerminals is the driver of the agent's terminal tools: a workspace's terminal pane
// that no window has opened yet gets its shell on first use, as opening it would start one.
type wakingTerminals struct {
	*terminal.Manager
	panes *panes.Service
}

var _ tools.TerminalDriver = wakingTerminals{}

func (w wakingTerminals) Status(paneID, tabID string) (terminal.Status, error) {
	w.panes.Wake(context.Background(), paneID)
	return w.Manager.Status(paneID, tabID)
}
