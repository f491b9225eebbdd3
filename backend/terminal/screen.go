package terminal

import (
	"bytes"
	"image/color"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// screenScrollbackLines bounds the text lines kept after they scroll off a tab's screen:
// read_terminal_output returns at most maxReadLines (500) lines, and the emulator's scrollback
// moves every kept line when one is added, so more would cost time on every scroll.
const screenScrollbackLines = 500

// Bounds on bringing a screen up to date. The emulator is cheap on output that redraws in
// place (an agent CLI prints about 1 KB a second) and dear on output that scrolls, since each
// scrolled line moves the whole screen (about 3 MB/s at 120 x 40). Output that scrolls past
// faster than it is read (a flood) is skipped: the screen is cleared and replays the last
// screenful of lines, which is what a flood leaves on a screen. A flood is more than
// floodBytes since the last read, or what is still unfed when catchUpBudget runs out (a
// program redrawing in place gets 20-30 KB through in it). An agent CLI's screen is patient:
// it is drawn once and then redrawn in parts relative to what is there, so a skip would spoil
// it until the CLI redraws it all; it gets more of both.
const (
	floodBytes        = 256 << 10
	catchUpBudget     = 3 * time.Millisecond
	patientFloodBytes = 4 << 20
	patientCatchUp    = 250 * time.Millisecond
	catchUpPiece      = 4 << 10 // fed between looks at the clock
)

// floodHold is how long a flood is taken to go on after a read skipped it: a read within it
// that finds more new lines than the screen has rows skips them too, instead of spending its
// budget scrolling lines that would scroll off before the screen is read again (several
// readers look at a busy screen one after another: a poll's state, then its last lines).
const floodHold = 200 * time.Millisecond

// screen is a tab's terminal screen: a VT emulator (github.com/charmbracelet/x/vt; see
// docs/measurements.md for why this one) fed the tab's output. It is brought up to date when
// read rather than in the PTY reader, so a busy terminal nobody reads costs nothing more than
// before: the raw output is in the tab's scrollback until the screen catches up.
type screen struct {
	mu      sync.Mutex // held while feeding or reading; taken before the tab's mutex, never after
	emu     *vt.Emulator
	fed     int64 // the tab's output offset the emulator has seen up to
	drained chan struct{}
	osc     oscFilter
	buf     []byte // reused for the filtered output
	// cols and rows size the emulator when it is made: on the first read, so a terminal
	// nobody reads holds none (two screens of cells).
	cols, rows int
	patient    bool      // an agent CLI's screen (see patientFloodBytes)
	floodUntil time.Time // the end of floodHold after the last skip
}

func newScreen(cols, rows int) *screen { return &screen{cols: cols, rows: rows} }

// ensure makes the emulator if there is none yet. Called with s.mu held.
func (s *screen) ensure() {
	if s.emu == nil {
		s.reset(s.cols, s.rows)
	}
}

// parserDataBytes bounds the emulator's buffer for the data of DCS, APC, PM and SOS strings
// (OSC strings never reach it, see oscFilter): vt.NewEmulator gives every emulator 4 MiB,
// which would be most of a terminal's memory; sixel images and the like need no screen text.
const parserDataBytes = 64 << 10

// shrinkParser gives the emulator's parser a parserDataBytes buffer. The parser is not
// exported by vt v0.1.0 (pinned in go.mod); TestShrinkParser fails if a new version moves it.
func shrinkParser(e *vt.Emulator) bool {
	f := reflect.ValueOf(e).Elem().FieldByName("parser")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*ansi.Parser]() {
		return false
	}
	p := *(**ansi.Parser)(unsafe.Pointer(f.UnsafeAddr()))
	if p == nil {
		return false
	}
	p.SetDataSize(parserDataBytes)
	return true
}

// reset starts a fresh emulator. Its replies to queries (cursor position, device attributes)
// go to a pipe that must be read or the emulator blocks: the person's terminal view answers
// those queries, so the replies are dropped by a goroutine that ends when the emulator is
// closed (by the next reset or the tab's close).
func (s *screen) reset(cols, rows int) {
	if s.emu != nil {
		s.closeEmulator()
	}
	s.osc = oscFilter{}
	e := vt.NewEmulator(cols, rows)
	shrinkParser(e)
	e.SetScrollbackSize(screenScrollbackLines)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.Discard, e) // Best effort: replies nobody needs; ends at Close.
	}()
	s.emu, s.drained = e, drained
}

// clear empties the screen and its scrollback and resets its modes, keeping the emulator (a
// new one costs two screens' cells): CAN ends a sequence cut off by the skip, the main screen
// comes back, and RIS resets the rest.
func (s *screen) clear(cols, rows int) {
	s.osc = oscFilter{}
	_, _ = s.emu.Write([]byte("\x18\x1b[?1049l\x1bc"))
	s.emu.ClearScrollback()
	if s.emu.Width() != cols || s.emu.Height() != rows {
		s.emu.Resize(cols, rows)
	}
}

// closeEmulator ends the goroutine draining the emulator's replies by closing the writing
// end of its reply pipe: Emulator.Close would set a flag its Read checks unguarded.
func (s *screen) closeEmulator() {
	if pw, ok := s.emu.InputPipe().(*io.PipeWriter); ok {
		_ = pw.CloseWithError(io.EOF) // never fails
	} else {
		_ = s.emu.Close() // Best effort: closing an emulator only ends its reply pipe.
	}
	<-s.drained
}

// close stops the screen's goroutine. Called once, when the tab closes.
func (s *screen) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.emu != nil {
		s.closeEmulator()
	}
}

// catchUp feeds the emulator the tab's output it has not seen. Called with s.mu held and the
// tab's mutex not held.
func (s *screen) catchUp(t *tab) {
	t.mu.Lock()
	start, end := t.sb.start, t.sb.end
	if s.fed >= end && s.emu != nil {
		t.mu.Unlock()
		return
	}
	flood, budget := int64(floodBytes), catchUpBudget
	if s.patient {
		flood, budget = patientFloodBytes, patientCatchUp
	}
	from := max(s.fed, start)
	skipped := from > s.fed // the scrollback no longer holds what the screen missed
	if end-from > flood {
		from, skipped = end-flood, true
	}
	data := t.sb.read(from, end)
	cols, rows := t.cols, t.rows
	t.mu.Unlock()
	if s.emu == nil { // the first read: the screen is made now
		s.cols, s.rows = cols, rows
		s.ensure()
	}
	began := time.Now()
	if !skipped && !s.patient && began.Before(s.floodUntil) && bytes.Count(data, []byte{'\n'}) > rows {
		skipped = true // the flood the last read skipped goes on
	}
	if skipped {
		s.clear(cols, rows)
		data = lastLinesOf(data, rows)
		s.floodUntil = began.Add(floodHold)
	}
	for len(data) > 0 {
		piece := data[:min(len(data), catchUpPiece)]
		s.feed(piece)
		data = data[len(piece):]
		if len(data) > 0 && time.Since(began) > budget {
			s.clear(cols, rows) // scrolling faster than it can be followed: a flood
			s.feed(lastLinesOf(data, rows))
			s.floodUntil = time.Now().Add(floodHold)
			break
		}
	}
	s.fed = end
}

// feed writes output to the emulator. Called with s.mu held.
func (s *screen) feed(data []byte) {
	s.ensure()
	s.buf = s.osc.filter(s.buf[:0], data)
	_, _ = s.emu.Write(s.buf) // never fails while open
	if cap(s.buf) > 4*readBufferSize {
		s.buf = nil // a catch-up after a flood grew it; do not keep that much per tab
	}
}

// lastLinesOf is the end of data from the start of its last n lines (a line start, not inside
// an escape sequence); all of data from its first line start when it has fewer.
func lastLinesOf(data []byte, n int) []byte {
	end := len(data)
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' && i < len(data)-1 {
			if n--; n < 0 {
				return data[i+1 : end]
			}
		}
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data)-1 {
		return data[i+1:]
	}
	return data
}

// resize brings the screen up to date and gives it the tab's new size.
func (s *screen) resize(t *tab, cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.emu == nil {
		s.cols, s.rows = cols, rows // made at this size when first read
		return
	}
	s.catchUp(t)
	s.emu.Resize(cols, rows)
}

// Screen is what a terminal tab shows: its rows of cells, the cursor, and the text lines that
// scrolled off the top.
type Screen struct {
	Cols, Rows int
	Cells      [][]Cell // Rows rows of Cols cells
	CursorX    int      // 0-based column
	CursorY    int      // 0-based row
	CursorShow bool
	AltScreen  bool     // a full-screen program (an editor, a pager) has the screen
	Scrolled   []string // text lines that scrolled off the top, oldest first (bounded)
	Offset     int64    // the output offset the screen shows up to
	// scrolledFull says which Scrolled lines filled the width: the text goes on in the next
	// line (the emulator does not keep soft wraps, so a full line is taken for one).
	scrolledFull []bool
}

// Cell is one character cell, its colours resolved (reverse video applied).
type Cell struct {
	Text  string // "" for the second cell of a wide character
	FG    color.RGBA
	BG    color.RGBA
	Bold  bool
	Under bool
}

// Default colours of a screen, as the app's dark theme draws them.
var (
	DefaultFG = color.RGBA{0xd6, 0xd8, 0xdc, 0xff}
	DefaultBG = color.RGBA{0x1a, 0x1b, 0x1e, 0xff}
)

// Row is the text of row y, trailing blanks removed.
func (s *Screen) Row(y int) string {
	if y < 0 || y >= len(s.Cells) {
		return ""
	}
	var b strings.Builder
	for _, c := range s.Cells[y] {
		b.WriteString(c.Text)
	}
	return strings.TrimRight(b.String(), " ")
}

// Lines is the text of the scrolled-off lines and the screen's rows, blank rows below the
// cursor removed (a row the cursor is on counts as written), a line that filled the width joined
// with the next as the one line it was printed as.
func (s *Screen) Lines() []string {
	last := -1
	for y := range s.Cells {
		if s.Row(y) != "" || y == s.CursorY {
			last = y
		}
	}
	var out []string
	joining := false
	add := func(text string, full bool) {
		if joining && len(out) > 0 {
			out[len(out)-1] += text
		} else {
			out = append(out, text)
		}
		joining = full
	}
	for i, l := range s.Scrolled {
		add(l, i < len(s.scrolledFull) && s.scrolledFull[i])
	}
	for y := 0; y <= last; y++ {
		if y > s.CursorY && s.Row(y) == "" {
			continue // the gap between the cursor and a status line at the bottom (tmux)
		}
		add(s.Row(y), s.rowFull(y))
	}
	return out
}

// isRule reports whether a line is one box-drawing character repeated (a horizontal rule).
func isRule(l uv.Line) bool {
	if len(l) == 0 || !boxDrawing(l[0].Content) {
		return false
	}
	for i := range l {
		if l[i].Content != l[0].Content {
			return false
		}
	}
	return true
}

// boxDrawing reports whether s is one character of the box-drawing and block elements blocks.
func boxDrawing(s string) bool {
	r := []rune(s)
	return len(r) == 1 && r[0] >= 0x2500 && r[0] <= 0x259f
}

// rowFull reports whether row y reaches the last column, so that its text most likely goes
// on in the next row; a rule (one box-drawing character repeated across, as Claude Code draws
// around its prompt) does not.
func (s *Screen) rowFull(y int) bool {
	row := s.Cells[y]
	if len(row) == 0 || row[len(row)-1].Text == " " {
		return false
	}
	if !boxDrawing(row[0].Text) {
		return true
	}
	for _, c := range row {
		if c.Text != row[0].Text {
			return true
		}
	}
	return false
}

// ScreenRows is the text of the screen's rows only (no scrollback, no joining), trailing
// blank rows removed.
func (s *Screen) ScreenRows() []string {
	var out []string
	for y := range s.Cells {
		out = append(out, s.Row(y))
	}
	for len(out) > 0 && out[len(out)-1] == "" && len(out)-1 > s.CursorY {
		out = out[:len(out)-1]
	}
	return out
}

// BeforeCursor is the text of the cursor's line up to the cursor (with the spaces before it;
// rows above it that it wrapped from included): what a shell prompt with the cursor after it
// looks like.
func (s *Screen) BeforeCursor() string {
	if s.CursorY < 0 || s.CursorY >= len(s.Cells) {
		return ""
	}
	var b strings.Builder
	top := s.CursorY
	for top > 0 && s.rowFull(top-1) {
		top--
	}
	for y := top; y < s.CursorY; y++ {
		for _, c := range s.Cells[y] {
			b.WriteString(c.Text)
		}
	}
	for x, c := range s.Cells[s.CursorY] {
		if x >= s.CursorX {
			break
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// snapshot brings the screen up to date and copies it; cells only when withCells.
func (s *screen) snapshot(t *tab, withCells bool) Screen {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.catchUp(t)
	return s.read(withCells)
}

// read copies the screen as the emulator has it. Called with s.mu held.
func (s *screen) read(withCells bool) Screen {
	s.ensure()
	e := s.emu
	out := Screen{Cols: e.Width(), Rows: e.Height(), CursorShow: !e.CursorHidden(), AltScreen: e.IsAltScreen(), Offset: s.fed}
	pos := e.CursorPosition()
	out.CursorX, out.CursorY = pos.X, pos.Y
	if sb := e.Scrollback(); sb != nil && !out.AltScreen {
		for _, l := range sb.Lines() {
			out.Scrolled = append(out.Scrolled, strings.TrimRight(l.String(), " "))
			out.scrolledFull = append(out.scrolledFull, len(l) >= out.Cols && !isRule(l))
		}
	}
	out.Cells = make([][]Cell, out.Rows)
	for y := range out.Rows {
		row := make([]Cell, out.Cols)
		wide := 0 // cells still covered by the last wide character
		for x := range out.Cols {
			c := e.CellAt(x, y)
			switch {
			case wide > 0:
				wide-- // the tail of a wide character: no text of its own
			case c == nil || c.Content == "":
				row[x].Text = " "
			default:
				row[x].Text, wide = c.Content, max(c.Width-1, 0)
			}
			if c == nil {
				row[x].FG, row[x].BG = DefaultFG, DefaultBG
				continue
			}
			if withCells {
				s.colour(&row[x], c)
			}
		}
		out.Cells[y] = row
	}
	return out
}

// colour resolves a cell's style to the colours it is drawn in.
func (s *screen) colour(dst *Cell, c *uv.Cell) {
	st := c.Style
	fg, bg := resolve(s.emu, st.Fg, DefaultFG), resolve(s.emu, st.Bg, DefaultBG)
	if st.Attrs&uv.AttrReverse != 0 {
		fg, bg = bg, fg
	}
	if st.Attrs&uv.AttrFaint != 0 {
		fg = color.RGBA{uint8((int(fg.R) + int(bg.R)) / 2), uint8((int(fg.G) + int(bg.G)) / 2), uint8((int(fg.B) + int(bg.B)) / 2), 0xff}
	}
	dst.FG, dst.BG = fg, bg
	dst.Bold = st.Attrs&uv.AttrBold != 0
	dst.Under = st.Underline != uv.UnderlineStyleNone
}

// resolve turns a cell colour (nil: the default; an indexed colour: the emulator's palette)
// into RGBA.
func resolve(e *vt.Emulator, c color.Color, def color.RGBA) color.RGBA {
	switch v := c.(type) {
	case nil:
		return def
	case ansi.BasicColor:
		c = e.IndexedColor(int(v))
	case ansi.IndexedColor:
		c = e.IndexedColor(int(v))
	}
	r, g, b, _ := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
}
