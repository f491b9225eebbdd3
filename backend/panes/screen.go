package panes

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// screenCursor is the colour of the cursor block on a rendered terminal screen.
var screenCursor = color.RGBA{0x8a, 0xb4, 0xf8, 0xff}

// screenFontPx is the size the screen's text is drawn at: a terminal's usual size.
const screenFontPx = 14

// screenFonts are tried in order for each character: DejaVu Sans Mono (installed by
// scripts/setup.sh) covers box drawing and most symbols agent CLIs draw, DejaVu Sans the
// dingbats it lacks (Claude Code's ❯), and Go Mono, built in, draws text when neither is
// installed.
var screenFonts = []string{
	"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
	"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}

// glyphs is a font with a face drawn from it, to tell which characters it has.
type glyphs struct {
	font *sfnt.Font
	face font.Face
	buf  sfnt.Buffer
}

var (
	loadFonts sync.Once
	fonts     []*glyphs
	fontsMu   sync.Mutex // faces and sfnt buffers are not safe for concurrent use
)

func loadScreenFonts() {
	var files [][]byte
	for _, path := range screenFonts {
		if b, err := os.ReadFile(path); err == nil {
			files = append(files, b)
		}
	}
	files = append(files, gomono.TTF)
	for _, b := range files {
		f, err := opentype.Parse(b)
		if err != nil {
			continue
		}
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: screenFontPx, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			continue
		}
		fonts = append(fonts, &glyphs{font: f, face: face})
	}
}

// faceFor is the first font that has r (the first font when none has).
func faceFor(r rune) font.Face {
	for _, g := range fonts {
		if i, err := g.font.GlyphIndex(&g.buf, r); err == nil && i != 0 {
			return g.face
		}
	}
	return fonts[0].face
}

// renderScreen draws a terminal screen as a PNG: each cell with its colours, bold and
// underline, wide characters over two cells, and the cursor as a block, so a vision model
// sees a terminal pane as the person does.
func renderScreen(sc terminal.Screen) ([]byte, error) {
	loadFonts.Do(loadScreenFonts)
	fontsMu.Lock()
	defer fontsMu.Unlock()
	m := fonts[0].face.Metrics()
	adv, _ := fonts[0].face.GlyphAdvance('M')
	cw, ch := adv.Ceil(), (m.Ascent + m.Descent).Ceil()
	const pad = 4
	cols, rows := max(sc.Cols, 1), max(sc.Rows, 1)
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*pad, rows*ch+2*pad))
	draw.Draw(img, img.Bounds(), &image.Uniform{terminal.DefaultBG}, image.Point{}, draw.Src)
	for y, row := range sc.Cells {
		for x, c := range row {
			fg, bg := c.FG, c.BG
			if sc.CursorShow && y == sc.CursorY && x == sc.CursorX {
				fg, bg = bg, screenCursor
			}
			w := 1
			if r, _ := utf8.DecodeRuneInString(c.Text); c.Text != "" && x+1 < len(row) && row[x+1].Text == "" && r >= 0x1100 {
				w = 2 // a wide character: its second cell has no text of its own
			}
			cell := image.Rect(pad+x*cw, pad+y*ch, pad+(x+w)*cw, pad+(y+1)*ch)
			if bg != terminal.DefaultBG {
				draw.Draw(img, cell, &image.Uniform{bg}, image.Point{}, draw.Src)
			}
			if c.Text == "" || c.Text == " " {
				continue
			}
			r, _ := utf8.DecodeRuneInString(c.Text)
			d := &font.Drawer{Dst: img, Src: &image.Uniform{fg}, Face: faceFor(r)}
			base := pad + y*ch + m.Ascent.Ceil()
			d.Dot = fixed.P(cell.Min.X, base)
			d.DrawString(c.Text)
			if c.Bold { // drawn again a pixel on: bold without a second font
				d.Dot = fixed.P(cell.Min.X+1, base)
				d.DrawString(c.Text)
			}
			if c.Under {
				draw.Draw(img, image.Rect(cell.Min.X, base+1, cell.Max.X, base+2), &image.Uniform{fg}, image.Point{}, draw.Src)
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
