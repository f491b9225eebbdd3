package panes

import (
	"context"
	"strings"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Capture is what capture_screenshot sees of a pane.
type Capture struct {
	PaneID string
	Kind   workspace.Kind
	// A terminal: the last screenful of output as text (rows lines) and where the cursor is,
	// 1-based, counted from the top of that text.
	Text                 string
	CursorRow, CursorCol int
	// A browser: its page as a PNG; a terminal: its screen text drawn as a PNG, cursor included.
	PNG []byte
}

// Capture takes a picture of a pane of the caller's workspace ("" is the caller's own pane).
func (s *Service) Capture(ctx context.Context, c Caller, paneID string) (Capture, error) {
	if paneID == "" {
		paneID = c.PaneID
	}
	_, p, err := s.pane(ctx, c, paneID)
	if err != nil {
		return Capture{}, err
	}
	out := Capture{PaneID: paneID, Kind: p.Kind}
	if p.Kind == workspace.KindBrowser {
		out.PNG, err = s.browsers.Screenshot(ctx, paneID, false)
		return out, err
	}
	st, err := s.terms.Status(paneID, "")
	if err != nil {
		return out, err
	}
	rows := max(st.Tab.Rows, 1)
	text, err := s.terms.Tail(paneID, "", rows)
	if err != nil {
		return out, err
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > rows {
		lines = lines[len(lines)-rows:]
	}
	out.Text = strings.Join(lines, "\n")
	out.CursorRow, out.CursorCol = len(lines), len([]rune(lines[len(lines)-1]))+1
	out.PNG, err = renderScreen(out.Text, max(st.Tab.Cols, 1), rows, out.CursorRow, out.CursorCol)
	return out, err
}
