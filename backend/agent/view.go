package agent

import (
	"github.com/clusterspace/clusterspace/backend/llm"
)

// view is the conversation as the agent last sent it — compacted (Compaction.View), with the
// latest pictures only (llm.KeepLastImages) — and the token estimate of each message. It is
// kept from turn to turn and extended by what was appended since, so building a request and
// fitting it to the window cost what changed, not a pass over a conversation that grows with
// every step of a long goal. Anything else (a new compaction, a conversation that is not the
// last one plus new messages) builds it anew, exactly as a single pass would.
//
// Telling the two apart must not read the whole conversation either. Owners keep to what a
// conversation is: a message once sent is never edited, and a conversation grows at its end
// (goals and chats append; a rewind or a filtered view moves or replaces messages). So the
// view checks the length and, by identity, the first message and the last one it took in:
// the conversation is an extension when both are still where they were.
type view struct {
	built bool
	// seen is how many messages of the conversation the view holds (taken in or folded
	// into the summary); first and last are the first and the last of them.
	seen        int
	first, last llm.Message
	// compacted says a compaction applied, and comp is the one (what of it the view uses).
	compacted bool
	comp      Compaction
	thin      llm.LatestImages
	// tokens holds llm.EstimateTokens of each message of thin.Messages(); total their sum.
	tokens []int
	total  int
}

// messages brings the view up to date with msgs under c and returns it. The slice is the
// view's own, with room after it for the request's per-turn message: it is valid until the
// next call, which may write there.
func (v *view) messages(msgs []llm.Message, c *Compaction, stub func(llm.ToolResult) (llm.ToolResult, bool)) []llm.Message {
	applies := c.applies(len(msgs))
	if !v.extends(msgs, c, applies) {
		*v = view{built: true, compacted: applies, thin: llm.LatestImages{N: KeptImages}}
		if applies {
			v.comp = Compaction{Head: c.Head, Through: c.Through, Summary: c.Summary, StubThrough: c.StubThrough}
			v.take(msgs, c.Through)
			v.add(append(append([]llm.Message(nil), msgs[:c.Head]...), llm.UserText(c.Summary)))
		}
	}
	tail := msgs[v.seen:]
	if len(tail) == 0 {
		return v.thin.Messages()
	}
	from := v.seen
	v.take(msgs, len(msgs))
	if v.compacted {
		sent := make([]llm.Message, len(tail))
		for i, m := range tail {
			sent[i] = v.comp.sent(from+i, m, stub)
		}
		tail = sent
	}
	v.add(tail)
	return v.thin.Messages()
}

// take notes that the view now holds msgs[:n].
func (v *view) take(msgs []llm.Message, n int) {
	if n == 0 {
		return
	}
	if v.seen == 0 {
		v.first = msgs[0]
	}
	v.seen, v.last = n, msgs[n-1]
}

// add appends msgs to the view, thinning pictures, and keeps the token counts.
func (v *view) add(msgs []llm.Message) {
	rewritten := v.thin.Append(msgs...)
	out := v.thin.Messages()
	for _, i := range rewritten {
		n := llm.EstimateTokens(out[i])
		v.total += n - v.tokens[i]
		v.tokens[i] = n
	}
	for _, m := range out[len(v.tokens):] {
		n := llm.EstimateTokens(m)
		v.tokens = append(v.tokens, n)
		v.total += n
	}
}

// extends reports whether msgs is the conversation the view was built from plus messages
// appended since, under the same compaction (see view for why two messages tell).
func (v *view) extends(msgs []llm.Message, c *Compaction, applies bool) bool {
	if !v.built || applies != v.compacted || len(msgs) < v.seen {
		return false
	}
	if applies && (c.Head != v.comp.Head || c.Through != v.comp.Through || c.Summary != v.comp.Summary || c.StubThrough != v.comp.StubThrough) {
		return false
	}
	return v.seen == 0 || sameMessage(v.first, msgs[0]) && sameMessage(v.last, msgs[v.seen-1])
}

// sameMessage reports whether a and b are the same message value: the same role and the
// very same parts, not merely equal ones.
func sameMessage(a, b llm.Message) bool {
	return a.Role == b.Role && len(a.Parts) == len(b.Parts) && (len(a.Parts) == 0 || &a.Parts[0] == &b.Parts[0])
}

// estimate is the sum of llm.EstimateTokens over msgs, from the running total when msgs
// begins with the view as it is now (a request built on it), else counted.
func (v *view) estimate(msgs []llm.Message) int {
	out := v.thin.Messages()
	if len(out) == 0 || len(msgs) < len(out) || &msgs[0] != &out[0] {
		n := 0
		for _, m := range msgs {
			n += llm.EstimateTokens(m)
		}
		return n
	}
	n := v.total
	for _, m := range msgs[len(out):] {
		n += llm.EstimateTokens(m)
	}
	return n
}
