package llm

import "slices"

// imageRemovedNote stands in the request for a picture that is no longer among the latest.
const imageRemovedNote = "[an earlier screenshot was removed]"

// KeepLastImages returns msgs with every image but the last n replaced by a short note. The
// stored conversation keeps them all; only the request is thinned.
func KeepLastImages(msgs []Message, n int) []Message {
	out := make([]Message, len(msgs))
	seen := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		out[i], seen = keepImages(msgs[i], seen, n)
	}
	return out
}

// pictures counts the pictures of m as KeepLastImages does: image parts and the images of
// tool results.
func pictures(m Message) int {
	n := 0
	for _, p := range m.Parts {
		switch {
		case p.Kind == PartImage:
			n++
		case p.ToolResult != nil:
			n += len(p.ToolResult.Images)
		}
	}
	return n
}

// keepImages thins one message that has seen pictures after it, keeping only what is still
// among the last n, and returns it with the count of pictures from it on. A message that
// loses nothing is returned as it is (its parts shared, not copied).
func keepImages(m Message, seen, n int) (Message, int) {
	count := pictures(m)
	if seen+count <= n {
		return m, seen + count
	}
	parts := slices.Clone(m.Parts)
	for j := len(parts) - 1; j >= 0; j-- {
		p := parts[j]
		switch {
		case p.Kind == PartImage:
			if seen++; seen > n {
				parts[j] = Text(imageRemovedNote)
			}
		case p.ToolResult != nil && len(p.ToolResult.Images) > 0:
			tr := *p.ToolResult
			keep := max(0, min(len(tr.Images), n-seen))
			seen += len(tr.Images)
			if keep == len(tr.Images) {
				continue
			}
			tr.Images = nil
			if keep > 0 {
				tr.Images = slices.Clone(p.ToolResult.Images[len(p.ToolResult.Images)-keep:])
			}
			parts[j] = ToolResultPart(tr)
		}
	}
	m.Parts = parts
	return m, seen
}

// LatestImages is KeepLastImages kept up to date for a conversation that only grows at its
// end, as an agent's does from turn to turn: an append costs the new messages, plus, when
// they bring pictures, the few messages (at most N) whose pictures were still sent — not a
// pass over the whole conversation. The zero value keeps none; set N before the first Append.
type LatestImages struct {
	N int
	// out is the thinned conversation; a message in it changes only when pictures appended
	// after it push its own out of the last N.
	out []Message
	// live lists the messages of out that hold pictures not all dropped yet, oldest first;
	// every picture before the first of them is dropped for good.
	live []pictured
}

type pictured struct {
	at    int     // its index in out
	orig  Message // as appended, before thinning
	count int     // its pictures
	after int     // the pictures after it when it was last thinned (-1: not yet)
}

// Append adds msgs and thins the pictures that fall out of the last N. It returns the
// indices of the earlier messages it rewrote (none when the new messages hold no picture).
func (l *LatestImages) Append(msgs ...Message) (rewritten []int) {
	before, fresh := len(l.out), false
	for _, m := range msgs {
		if c := pictures(m); c > 0 {
			l.live = append(l.live, pictured{at: len(l.out), orig: m, count: c, after: -1})
			fresh = true
		}
		l.out = append(l.out, m)
	}
	// Room for one more, so a caller that adds its per-turn message to Messages() does not
	// copy the conversation to do it.
	l.out = slices.Grow(l.out, 1)
	if !fresh {
		return nil // pictures only fall out of the last N when new ones come in
	}
	seen := 0
	for j := len(l.live) - 1; j >= 0; j-- {
		p := &l.live[j]
		if seen >= l.N {
			// This message and every earlier one lose all their pictures: write them once
			// more, thinned for good, and stop tracking them.
			for _, q := range l.live[:j+1] {
				l.out[q.at], _ = keepImages(q.orig, seen, l.N)
				if q.at < before {
					rewritten = append(rewritten, q.at)
				}
			}
			l.live = append(l.live[:0], l.live[j+1:]...)
			break
		}
		if p.after != seen {
			l.out[p.at], _ = keepImages(p.orig, seen, l.N)
			if p.at < before {
				rewritten = append(rewritten, p.at)
			}
			p.after = seen
		}
		seen += p.count
	}
	return rewritten
}

// Messages is the conversation with all but the last N pictures dropped. It is the
// LatestImages' own: valid until the next Append, which may rewrite it.
func (l *LatestImages) Messages() []Message { return l.out }
