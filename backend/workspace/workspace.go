// Package workspace owns workspaces: a named grid of rows x cols cells, each holding one pane
// (a terminal or a browser). It holds the rules (grid bounds, swaps, resizes that keep what
// still fits, import and export); the store persists what it decides.
package workspace

import (
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/randid"
)

// Grid bounds: more than 6 x 6 panes would leave each too small to read on a laptop screen.
const (
	MinGrid = 1
	MaxGrid = 6
)

// MaxNameLen bounds workspace names and pane labels so a tab or header stays readable.
const MaxNameLen = 80

// Kind is what a pane shows.
type Kind string

const (
	KindTerminal Kind = "terminal"
	KindBrowser  Kind = "browser"
)

// Valid reports whether k is a known pane kind.
func (k Kind) Valid() bool { return k == KindTerminal || k == KindBrowser }

// Pane is one cell of a workspace grid. Its ID stays the same when it moves (swaps, resizes),
// so whatever runs in it (a shell, a browser tab, a goal) stays attached.
type Pane struct {
	ID    string `json:"id"`
	Kind  Kind   `json:"kind"`
	Label string `json:"label"`
	Row   int    `json:"row"`
	Col   int    `json:"col"`
	// Launch is what a terminal pane runs instead of a plain shell (nil: the shell).
	Launch *Launch `json:"launch,omitempty"`
}

// Workspace is a named grid of panes. Weights are relative sizes (CSS fr units), one per row
// and one per column.
type Workspace struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Position   int       `json:"position"`
	Rows       int       `json:"rows"`
	Cols       int       `json:"cols"`
	RowWeights []float64 `json:"rowWeights"`
	ColWeights []float64 `json:"colWeights"`
	Panes      []Pane    `json:"panes"`
	// FocusedPaneID is the pane keyboard input goes to ("" before any was focused);
	// MaximizedPaneID the pane shown alone, filling the grid ("" for none). The UI and the agent
	// change them alike, so both see the same workspace.
	FocusedPaneID   string    `json:"focusedPaneId"`
	MaximizedPaneID string    `json:"maximizedPaneId"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// List is every workspace in tab order plus the one the user has open.
type List struct {
	Workspaces []Workspace `json:"workspaces"`
	ActiveID   string      `json:"activeId"`
}

// FieldError is bad input, named by the field so the UI can show it next to that field.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// NewPaneID returns a fresh pane id, short enough to name a tmux session after.
func NewPaneID() string { return randid.New("pane-") }

// NewWorkspaceID returns a fresh workspace id.
func NewWorkspaceID() string { return randid.New("ws-") }
