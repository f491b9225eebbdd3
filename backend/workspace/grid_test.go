package workspace

import (
	"errors"
	"strings"
	"testing"
)

func grid(rows, cols int) Workspace {
	return Workspace{ID: "ws-1", Name: "W", Rows: rows, Cols: cols,
		RowWeights: evenWeights(rows), ColWeights: evenWeights(cols), Panes: fillGrid(rows, cols)}
}

func TestResizeKeepsPanesThatStillFit(t *testing.T) {
	t.Parallel()
	ws := grid(2, 2)
	ws.RowWeights = []float64{2, 1}
	before := map[[2]int]string{}
	for _, p := range ws.Panes {
		before[[2]int{p.Row, p.Col}] = p.ID
	}

	grown, removed, err := Resize(ws, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 || len(grown.Panes) != 6 {
		t.Fatalf("3x2: %d panes, %d removed", len(grown.Panes), len(removed))
	}
	for _, p := range grown.Panes {
		if id, ok := before[[2]int{p.Row, p.Col}]; ok && id != p.ID {
			t.Fatalf("cell (%d,%d) changed pane %s -> %s", p.Row, p.Col, id, p.ID)
		}
	}
	if got := grown.RowWeights; len(got) != 3 || got[0] != 2 || got[2] != 1 {
		t.Fatalf("row weights %v, want [2 1 1]", got)
	}
	if err := Validate(grown); err != nil {
		t.Fatal(err)
	}

	shrunk, removed, err := Resize(grown, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(shrunk.Panes) != 1 || shrunk.Panes[0].ID != before[[2]int{0, 0}] || len(removed) != 5 {
		t.Fatalf("1x1 kept %v, removed %d", shrunk.Panes, len(removed))
	}
}

func TestResizeRefusesOutOfRange(t *testing.T) {
	t.Parallel()
	for _, rc := range [][2]int{{0, 2}, {7, 1}, {2, 0}, {1, 9}} {
		_, _, err := Resize(grid(2, 2), rc[0], rc[1])
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "between 1 and 6") {
			t.Fatalf("%v: got %v, want a field error naming the bounds", rc, err)
		}
	}
}

func TestSwapMovesPanesWithTheirIDs(t *testing.T) {
	t.Parallel()
	ws := grid(2, 2)
	a, d := ws.Panes[0], ws.Panes[3]
	got, err := Swap(ws, a.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Panes[0].ID != d.ID || got.Panes[0].Row != 0 || got.Panes[3].ID != a.ID || got.Panes[3].Col != 1 {
		t.Fatalf("after swap: %+v", got.Panes)
	}
	if got.Panes[0].Label != d.Label {
		t.Fatal("label did not travel with its pane")
	}
	if _, err := Swap(ws, a.ID, "pane-nope"); err == nil || !strings.Contains(err.Error(), "paneB") {
		t.Fatalf("unknown pane: %v", err)
	}
	if _, err := Swap(ws, a.ID, a.ID); err == nil {
		t.Fatal("swapping a pane with itself was accepted")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		edit  func(*Workspace)
		field string
	}{
		"ok":             {func(*Workspace) {}, ""},
		"empty name":     {func(w *Workspace) { w.Name = " " }, "name"},
		"rows":           {func(w *Workspace) { w.Rows = 7 }, "rows"},
		"weights length": {func(w *Workspace) { w.ColWeights = []float64{1} }, "colWeights"},
		"zero weight":    {func(w *Workspace) { w.RowWeights[0] = 0 }, "rowWeights"},
		"missing pane":   {func(w *Workspace) { w.Panes = w.Panes[:3] }, "panes"},
		"dup id":         {func(w *Workspace) { w.Panes[1].ID = w.Panes[0].ID }, "panes[1].id"},
		"bad kind":       {func(w *Workspace) { w.Panes[2].Kind = "editor" }, "panes[2].kind"},
		"outside": {func(w *Workspace) {
			w.Panes[3].Row = 5
		}, "panes[3]"},
		"same cell": {func(w *Workspace) {
			w.Panes[3].Row, w.Panes[3].Col = 0, 0
		}, "panes[3]"},
	}
	for name, tc := range cases {
		ws := grid(2, 2)
		tc.edit(&ws)
		err := Validate(ws)
		var fe *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: unexpected %v", name, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: got %v, want an error on %q", name, err, tc.field)
		}
	}
}
