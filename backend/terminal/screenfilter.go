package terminal

// oscFilter removes OSC strings (ESC ] … BEL or ESC \) from the output fed to the screen's
// emulator. charmbracelet/x/vt v0.1.0 prints the rest of an OSC string as text once it holds
// a non-ASCII character, and Claude Code sets its window title to "✳ Claude Code" and a
// spinner: its title would be drawn over its screen. What OSC strings carry (title, working
// dir, hyperlink targets, clipboard, palette) is not screen text; the tab reads the title
// itself (titleScanner). The filter keeps its state between writes, as a string may be split.
type oscFilter struct {
	state oscState
}

type oscState uint8

const (
	oscNone  oscState = iota // outside
	oscEsc                   // after an ESC outside a string
	oscIn                    // inside an OSC string
	oscInEsc                 // after an ESC inside one: ST, or a new sequence
)

// filter appends data without its OSC strings to dst.
func (f *oscFilter) filter(dst, data []byte) []byte {
	for _, b := range data {
		switch f.state {
		case oscNone:
			if b == 0x1b {
				f.state = oscEsc
				continue
			}
			dst = append(dst, b)
		case oscEsc:
			switch b {
			case ']':
				f.state = oscIn
			case 0x1b:
				dst = append(dst, 0x1b) // the first ESC stands alone; the second may start one
			default:
				dst = append(dst, 0x1b, b)
				f.state = oscNone
			}
		case oscIn:
			switch b {
			case 0x07:
				f.state = oscNone
			case 0x1b:
				f.state = oscInEsc
			case 0x18, 0x1a: // CAN, SUB: the string is cancelled
				f.state = oscNone
			}
		case oscInEsc:
			switch b {
			case '\\':
				f.state = oscNone
			case ']':
				f.state = oscIn // a new OSC string right after an unterminated one
			case 0x1b:
				f.state = oscEsc
			default:
				dst = append(dst, 0x1b, b) // an unterminated string ended by a new sequence
				f.state = oscNone
			}
		}
	}
	return dst
}
