package terminal

import "bytes"

// DefaultScrollbackLines is how many lines of output a tab keeps for replay and for the model.
const DefaultScrollbackLines = 5000

// DefaultScrollbackBytes caps the bytes a tab keeps whatever its line count: 5,000 lines of a
// wide, coloured terminal (200 columns, SGR codes around most words) come to about 4 MiB, and
// the cap also bounds output that never ends a line (progress bars, binary dumps).
const DefaultScrollbackBytes = 4 << 20

// scrollbackBlock is the unit the ring allocates and frees: small enough that an idle terminal
// costs little, large enough that a 50 MB burst is a few thousand block switches.
const scrollbackBlock = 16 << 10

// lineSnap is how far past the byte cap the ring looks for a line boundary to cut at, so a
// replay starts at the beginning of a line rather than inside an escape sequence.
const lineSnap = 4 << 10

// scrollback is the output of one tab: a ring bounded by lines and bytes, addressed by
// absolute byte offsets that only grow (the cursor the model pages with). Not safe for
// concurrent use; the tab's mutex guards it.
type scrollback struct {
	maxLines, maxBytes int

	blocks      [][]byte // every block but the last is full (scrollbackBlock bytes)
	blocksStart int64    // absolute offset of blocks[0][0]
	spare       []byte   // a freed block kept for reuse

	start int64 // absolute offset of the oldest byte kept
	end   int64 // absolute offset after the newest byte: every byte ever written

	nl offsetRing // absolute offsets of the '\n' bytes at or after start, oldest first
}

func newScrollback(maxLines, maxBytes int) scrollback {
	if maxLines <= 0 {
		maxLines = DefaultScrollbackLines
	}
	if maxBytes <= 0 {
		maxBytes = DefaultScrollbackBytes
	}
	return scrollback{maxLines: maxLines, maxBytes: maxBytes}
}

// write appends p and drops the oldest output beyond the limits.
func (s *scrollback) write(p []byte) {
	base := s.end
	for rest, at := p, int64(0); ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		s.nl.push(base + at + int64(i))
		if s.nl.len() > s.maxLines {
			s.start = max(s.start, s.nl.pop()+1)
		}
		at += int64(i) + 1
		rest = rest[i+1:]
	}
	for len(p) > 0 {
		if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1]) == scrollbackBlock {
			b := s.spare
			s.spare = nil
			if b == nil {
				b = make([]byte, 0, scrollbackBlock)
			}
			s.blocks = append(s.blocks, b[:0])
		}
		last := &s.blocks[len(s.blocks)-1]
		n := copy((*last)[len(*last):scrollbackBlock], p)
		*last = (*last)[:len(*last)+n]
		p = p[n:]
		s.end += int64(n)
	}
	if s.end-s.start > int64(s.maxBytes) {
		cut := s.end - int64(s.maxBytes)
		for s.nl.len() > 0 && s.nl.front() < cut {
			s.nl.pop()
		}
		if s.nl.len() > 0 && s.nl.front() < cut+lineSnap && s.nl.front()+1 < s.end {
			cut = s.nl.pop() + 1
		}
		s.start = max(s.start, cut)
	}
	for s.nl.len() > 0 && s.nl.front() < s.start {
		s.nl.pop()
	}
	for len(s.blocks) > 1 && s.blocksStart+scrollbackBlock <= s.start {
		s.spare = s.blocks[0]
		s.blocks[0] = nil
		s.blocks = s.blocks[1:]
		s.blocksStart += scrollbackBlock
	}
}

// read copies the kept bytes in [from, to) into a new slice.
func (s *scrollback) read(from, to int64) []byte {
	from, to = max(from, s.start), min(to, s.end)
	if from >= to {
		return nil
	}
	out := make([]byte, 0, to-from)
	for off := from; off < to; {
		rel := off - s.blocksStart
		b := s.blocks[rel/scrollbackBlock]
		i := rel % scrollbackBlock
		n := min(int64(len(b))-i, to-off)
		out = append(out, b[i:i+n]...)
		off += n
	}
	return out
}

// snapshot is every byte kept, for a replay.
func (s *scrollback) snapshot() []byte { return s.read(s.start, s.end) }

// size is the number of bytes kept.
func (s *scrollback) size() int64 { return s.end - s.start }

// lastNewline is the offset of the newest '\n' kept, or -1.
func (s *scrollback) lastNewline() int64 {
	if s.nl.len() == 0 {
		return -1
	}
	return s.nl.at(s.nl.len() - 1)
}

// tailStart is the offset where the last n lines begin; a final line without '\n' counts.
func (s *scrollback) tailStart(n int) int64 {
	c := s.nl.len()
	j := c - n // the newline just before the first wanted line
	if c > 0 && s.nl.at(c-1) == s.end-1 {
		j-- // the output ends with '\n': the last line is complete
	}
	if j < 0 {
		return s.start
	}
	return s.nl.at(j) + 1
}

// linesFrom is the offset after the n-th newline at or after from, or end if there are fewer.
func (s *scrollback) linesFrom(from int64, n int) int64 {
	lo, hi := 0, s.nl.len()
	for lo < hi { // first newline >= from
		mid := (lo + hi) / 2
		if s.nl.at(mid) < from {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if k := lo + n - 1; n > 0 && k < s.nl.len() {
		return s.nl.at(k) + 1
	}
	return s.end
}

// offsetRing is a growable FIFO of offsets.
type offsetRing struct {
	buf        []int64
	head, size int
}

func (r *offsetRing) len() int       { return r.size }
func (r *offsetRing) front() int64   { return r.buf[r.head] }
func (r *offsetRing) at(i int) int64 { return r.buf[(r.head+i)%len(r.buf)] }

func (r *offsetRing) push(v int64) {
	if r.size == len(r.buf) {
		grown := make([]int64, max(64, 2*len(r.buf)))
		for i := range r.size {
			grown[i] = r.at(i)
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *offsetRing) pop() int64 {
	v := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}
