package llm

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// Piece is a run of content that is either answer text or reasoning.
type Piece struct {
	Text      string
	Reasoning bool
}

// ThinkSplitter separates <think>…</think> reasoning from answer text in a model's content,
// even when a tag is split across deltas ("<thi" then "nk>"). Feed it each delta in order and
// Flush at the end. The zero value is ready to use.
type ThinkSplitter struct {
	thinking bool
	// held is a tail of the last delta that might be the start of a tag.
	held string
}

// Feed takes the next delta and returns the pieces it completes, in order.
func (s *ThinkSplitter) Feed(delta string) []Piece {
	buf := s.held + delta
	s.held = ""
	var out []Piece
	for buf != "" {
		tag := thinkOpen
		if s.thinking {
			tag = thinkClose
		}
		if i := strings.Index(buf, tag); i >= 0 {
			out = s.add(out, buf[:i])
			buf = buf[i+len(tag):]
			s.thinking = !s.thinking
			continue
		}
		// Hold back a tail that could still grow into the tag.
		keep := partialSuffix(buf, tag)
		out = s.add(out, buf[:len(buf)-keep])
		s.held = buf[len(buf)-keep:]
		break
	}
	return out
}

// Flush returns what is still held back at the end of the content. An unclosed <think>
// stays reasoning: the model ran out before closing it.
func (s *ThinkSplitter) Flush() []Piece {
	held := s.held
	s.held = ""
	return s.add(nil, held)
}

func (s *ThinkSplitter) add(out []Piece, text string) []Piece {
	if text == "" {
		return out
	}
	return append(out, Piece{Text: text, Reasoning: s.thinking})
}

// partialSuffix is the length of the longest tail of s that is a proper prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
