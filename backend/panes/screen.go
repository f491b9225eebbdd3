package panes

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Colours of a rendered terminal screen: the app's dark theme, a light cursor block.
var (
	screenBG     = color.RGBA{0x1a, 0x1b, 0x1e, 0xff}
	screenFG     = color.RGBA{0xd6, 0xd8, 0xdc, 0xff}
	screenCursor = color.RGBA{0x8a, 0xb4, 0xf8, 0xff}
)

// renderScreen draws a terminal screen's text as a PNG (monospace, cols x rows cells) with the
// cursor as a block at row, col (1-based), so a vision model sees a terminal pane as it sees a
// browser pane. It needs no window: the text is what the pane shows.
func renderScreen(text string, cols, rows, cursorRow, cursorCol int) ([]byte, error) {
	face := basicfont.Face7x13
	cw, ch := face.Advance, face.Height
	const pad = 4
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*pad, rows*ch+2*pad))
	draw.Draw(img, img.Bounds(), &image.Uniform{screenBG}, image.Point{}, draw.Src)
	if cursorRow >= 1 && cursorRow <= rows && cursorCol >= 1 && cursorCol <= cols {
		x, y := pad+(cursorCol-1)*cw, pad+(cursorRow-1)*ch
		draw.Draw(img, image.Rect(x, y, x+cw, y+ch), &image.Uniform{screenCursor}, image.Point{}, draw.Src)
	}
	d := &font.Drawer{Dst: img, Src: &image.Uniform{screenFG}, Face: face}
	for i, line := range strings.Split(text, "\n") {
		if i >= rows {
			break
		}
		if r := []rune(line); len(r) > cols {
			line = string(r[:cols])
		}
		d.Dot = fixed.P(pad, pad+i*ch+face.Ascent)
		d.DrawString(line)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
