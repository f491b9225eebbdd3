package workspace

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Weight bounds keep every row and column visible and the numbers sane for CSS.
const (
	minWeight = 0.05
	maxWeight = 100
)

func checkGrid(rows, cols int) error {
	if rows < MinGrid || rows > MaxGrid {
		return fieldErr("rows", "must be between %d and %d, got %d", MinGrid, MaxGrid, rows)
	}
	if cols < MinGrid || cols > MaxGrid {
		return fieldErr("cols", "must be between %d and %d, got %d", MinGrid, MaxGrid, cols)
	}
	return nil
}

func checkName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fieldErr(field, "must not be empty")
	}
	if n := len([]rune(name)); n > MaxNameLen {
		return "", fieldErr(field, "is %d characters long; at most %d", n, MaxNameLen)
	}
	return name, nil
}

func checkWeights(field string, w []float64, want int) error {
	if len(w) != want {
		return fieldErr(field, "needs %d values (one per %s), got %d", want, strings.TrimSuffix(field, "Weights"), len(w))
	}
	for i, v := range w {
		if math.IsNaN(v) || v < minWeight || v > maxWeight {
			return fieldErr(field, "value %d is %v; each must be between %v and %v", i, v, minWeight, maxWeight)
		}
	}
	return nil
}

func evenWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// resizeWeights keeps the weights of rows/cols that still exist and gives new ones weight 1.
func resizeWeights(w []float64, n int) []float64 {
	out := evenWeights(n)
	copy(out, w)
	return out
}

// newPane makes a terminal pane for an empty cell, labelled by its position.
func newPane(row, col int) Pane {
	return Pane{ID: NewPaneID(), Kind: KindTerminal, Label: fmt.Sprintf("Terminal %d.%d", row+1, col+1), Row: row, Col: col}
}

// kindLabel matches the labels panes are given ("Terminal 1.2"), which name their kind.
var kindLabel = regexp.MustCompile(`^(Terminal|Browser)( \d+\.\d+)$`)

// relabel renames a pane whose label is a given one after its kind changes ("Terminal 1.2"
// becomes "Browser 1.2"); a label the user chose stays.
func relabel(label string, kind Kind) string {
	m := kindLabel.FindStringSubmatch(label)
	if m == nil {
		return label
	}
	word := "Terminal"
	if kind == KindBrowser {
		word = "Browser"
	}
	return word + m[2]
}

// fillGrid returns a rows x cols grid of fresh terminal panes in row-major order.
func fillGrid(rows, cols int) []Pane {
	panes := make([]Pane, 0, rows*cols)
	for r := range rows {
		for c := range cols {
			panes = append(panes, newPane(r, c))
		}
	}
	return panes
}

// Resize changes the grid to rows x cols. A pane whose cell still exists keeps it (and its id);
// panes outside the new grid are returned as removed; empty cells get new terminal panes.
func Resize(ws Workspace, rows, cols int) (Workspace, []Pane, error) {
	if err := checkGrid(rows, cols); err != nil {
		return ws, nil, err
	}
	byCell := make(map[[2]int]Pane, len(ws.Panes))
	for _, p := range ws.Panes {
		byCell[[2]int{p.Row, p.Col}] = p
	}
	var kept, removed []Pane
	for _, p := range ws.Panes {
		if p.Row >= rows || p.Col >= cols {
			removed = append(removed, p)
		}
	}
	for r := range rows {
		for c := range cols {
			if p, ok := byCell[[2]int{r, c}]; ok {
				kept = append(kept, p)
			} else {
				kept = append(kept, newPane(r, c))
			}
		}
	}
	ws.Rows, ws.Cols, ws.Panes = rows, cols, kept
	ws.RowWeights = resizeWeights(ws.RowWeights, rows)
	ws.ColWeights = resizeWeights(ws.ColWeights, cols)
	return ws, removed, nil
}

// Swap exchanges the cells of two panes; ids, kinds and labels travel with the panes.
func Swap(ws Workspace, paneA, paneB string) (Workspace, error) {
	if paneA == paneB {
		return ws, fieldErr("paneB", "is the same pane as paneA; pick two different panes")
	}
	ia, ib := -1, -1
	for i, p := range ws.Panes {
		switch p.ID {
		case paneA:
			ia = i
		case paneB:
			ib = i
		}
	}
	if ia < 0 {
		return ws, fieldErr("paneA", "no pane %q in workspace %q", paneA, ws.Name)
	}
	if ib < 0 {
		return ws, fieldErr("paneB", "no pane %q in workspace %q", paneB, ws.Name)
	}
	panes := append([]Pane(nil), ws.Panes...)
	a, b := panes[ia], panes[ib]
	a.Row, a.Col, b.Row, b.Col = b.Row, b.Col, a.Row, a.Col
	panes[ia], panes[ib] = a, b
	ws.Panes = sortPanes(panes)
	return ws, nil
}

// sortPanes orders panes row-major, the order the store and the UI list them in.
func sortPanes(panes []Pane) []Pane {
	out := slices.Clone(panes)
	slices.SortFunc(out, func(a, b Pane) int { return cmp.Or(cmp.Compare(a.Row, b.Row), cmp.Compare(a.Col, b.Col)) })
	return out
}

// Validate checks a whole workspace: grid bounds, weights, and exactly one pane per cell with
// unique ids. Import uses it on untrusted files; the service uses it before every save.
func Validate(ws Workspace) error {
	if _, err := checkName("name", ws.Name); err != nil {
		return err
	}
	if err := checkGrid(ws.Rows, ws.Cols); err != nil {
		return err
	}
	if err := checkWeights("rowWeights", ws.RowWeights, ws.Rows); err != nil {
		return err
	}
	if err := checkWeights("colWeights", ws.ColWeights, ws.Cols); err != nil {
		return err
	}
	if len(ws.Panes) != ws.Rows*ws.Cols {
		return fieldErr("panes", "a %dx%d grid needs %d panes, got %d", ws.Rows, ws.Cols, ws.Rows*ws.Cols, len(ws.Panes))
	}
	seenCell := map[[2]int]bool{}
	seenID := map[string]bool{}
	for i, p := range ws.Panes {
		field := fmt.Sprintf("panes[%d]", i)
		if p.ID == "" {
			return fieldErr(field+".id", "must not be empty")
		}
		if seenID[p.ID] {
			return fieldErr(field+".id", "%q appears twice", p.ID)
		}
		if !p.Kind.Valid() {
			return fieldErr(field+".kind", "is %q; must be %q or %q", p.Kind, KindTerminal, KindBrowser)
		}
		if _, err := checkName(field+".label", p.Label); err != nil {
			return err
		}
		if p.Row < 0 || p.Row >= ws.Rows || p.Col < 0 || p.Col >= ws.Cols {
			return fieldErr(field, "cell (%d,%d) is outside the %dx%d grid", p.Row, p.Col, ws.Rows, ws.Cols)
		}
		cell := [2]int{p.Row, p.Col}
		if seenCell[cell] {
			return fieldErr(field, "cell (%d,%d) holds two panes", p.Row, p.Col)
		}
		if p.Launch != nil {
			if p.Kind != KindTerminal {
				return fieldErr(field+".launch", "only a terminal pane has launch settings")
			}
			if err := ValidateLaunch(*p.Launch); err != nil {
				return fieldErr(field+".launch", "%v", err)
			}
		}
		seenID[p.ID], seenCell[cell] = true, true
	}
	for _, f := range []struct{ name, id string }{{"focusedPaneId", ws.FocusedPaneID}, {"maximizedPaneId", ws.MaximizedPaneID}} {
		if f.id != "" && !seenID[f.id] {
			return fieldErr(f.name, "%q is not a pane of this workspace", f.id)
		}
	}
	return nil
}
