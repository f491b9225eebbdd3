package panes

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// A terminal's screen drawn as a picture: its size follows the cells, text keeps its colours
// (red stays red), and the cursor is a block in its cell.
func TestRenderScreenDrawsColoursAndCursor(t *testing.T) {
	m := terminal.NewManager(terminal.Options{})
	t.Cleanup(m.Shutdown)
	const pane = "pane-5c2ee0000001"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Dir: t.TempDir(), Cols: 40, Rows: 5,
		Command: []string{"sh", "-c", `printf '\033[1;31mRED\033[0m plain\r\n\033[42m  \033[0m> '; exec sleep 30`}}); err != nil {
		t.Fatal(err)
	}
	var sc terminal.Screen
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if sc, err = m.Screen(pane, ""); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(sc.BeforeCursor(), "> ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed the prompt: %q", sc.ScreenRows())
		}
	}
	data, err := renderScreen(sc)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	cw, ch := (b.Dx()-8)/40, (b.Dy()-8)/5
	if cw < 6 || ch < 10 || (b.Dx()-8)%40 != 0 || (b.Dy()-8)%5 != 0 {
		t.Fatalf("size %v is not 40x5 cells", b)
	}
	cell := func(x, y int) image.Rectangle { return image.Rect(4+x*cw, 4+y*ch, 4+(x+1)*cw, 4+(y+1)*ch) }
	count := func(r image.Rectangle, match func(c color.RGBA) bool) int {
		n := 0
		for x := r.Min.X; x < r.Max.X; x++ {
			for y := r.Min.Y; y < r.Max.Y; y++ {
				if match(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)) {
					n++
				}
			}
		}
		return n
	}
	red := func(c color.RGBA) bool { return c.R > 120 && int(c.R) > int(c.G)+60 && int(c.R) > int(c.B)+60 }
	if n := count(image.Rect(4, 4, 4+3*cw, 4+ch), red); n < 20 {
		t.Errorf("the red text has %d red pixels", n)
	}
	if n := count(image.Rect(4+4*cw, 4, 4+9*cw, 4+ch), red); n > 0 {
		t.Errorf("the plain text has %d red pixels", n)
	}
	green := func(c color.RGBA) bool { return c.G > 100 && int(c.G) > int(c.R)+40 }
	if n := count(cell(0, 1), green); n < cw*ch/2 {
		t.Errorf("the green background cell has %d green pixels of %d", n, cw*ch)
	}
	cursor := func(c color.RGBA) bool { return c == screenCursor }
	if n := count(cell(sc.CursorX, sc.CursorY), cursor); n < cw*ch/2 {
		t.Errorf("the cursor cell (%d,%d) has %d cursor pixels", sc.CursorX, sc.CursorY, n)
	}
}
