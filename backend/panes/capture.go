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
	// A terminal: its screen's rows as text (blank rows at the bottom left out) and where the
	// cursor is, 1-based, counted from the top of the screen.
	Text                 string
	CursorRow, CursorCol int
	// A browser: its page as a PNG; a terminal: its screen drawn as a PNG, in its colours,
	// cursor included.
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
	sc, err := s.terms.Screen(paneID, "")
	if err != nil {
		return out, err
	}
	out.Text = strings.Join(sc.ScreenRows(), "\n")
	out.CursorRow, out.CursorCol = sc.CursorY+1, sc.CursorX+1
	out.PNG, err = renderScreen(sc)
	return out, err
}
