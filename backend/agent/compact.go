package agent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Compaction thresholds. Compacting rewrites the cached prefix once, so it should happen
// seldom and leave room to grow: it starts when the request passes compactAt of the usable
// window and keeps the newest turns up to keepTail of it verbatim.
const (
	compactAt = 0.85
	keepTail  = 0.35
	// keepUnits is how many of the newest turns always stay verbatim (more when they fit in
	// keepTail); older large outputs among the kept turns become stubs.
	keepUnits = 2
	// stubChars is the size past which an old tool output is replaced by a stub naming its
	// step, when the owner keeps a step log (Hooks.StepOf).
	stubChars = 1200
	// maxSummaryChars bounds the summary message (~2,000 tokens).
	maxSummaryChars = 8000
	// summaryMaxTokens is the reply limit of the summarising call.
	summaryMaxTokens = 2048
	// maxTranscriptChars bounds what the summariser reads of the span (~15,000 tokens), so
	// even a small model can summarise it; each message is clipped first.
	maxTranscriptChars = 60_000
	clipToolChars      = 600
	clipTextChars      = 1500
	// maxContextRetries bounds how often one turn is compacted and sent again after the
	// provider answered "context length exceeded": it never loops.
	maxContextRetries = 3
)

// Compaction is how a conversation is sent once it outgrew the model's window: the head
// (the first user message, the goal prompt) verbatim, one summary message standing for
// messages [Head, Through), then the rest, with large tool outputs in [Through, StubThrough)
// replaced by stubs. Between compactions the view only grows at its end, so the provider's
// prompt cache keeps the whole prefix. The owner stores it with the conversation.
type Compaction struct {
	Head        int    `json:"head"`
	Through     int    `json:"through"`
	Summary     string `json:"summary"`
	StubThrough int    `json:"stubThrough,omitempty"`
	// Count is how many compactions the conversation has had.
	Count int `json:"count"`
	// Tokens is the estimated size of the request before and after the last one.
	TokensBefore int `json:"tokensBefore,omitempty"`
	TokensAfter  int `json:"tokensAfter,omitempty"`
}

// View is the conversation as sent under c (all of msgs when c is nil or does not fit msgs).
// stub, if not nil, replaces a large tool result by its stub.
func (c *Compaction) View(msgs []llm.Message, stub func(llm.ToolResult) (llm.ToolResult, bool)) []llm.Message {
	if !c.applies(len(msgs)) {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs)-c.Through+c.Head+1)
	out = append(out, msgs[:c.Head]...)
	out = append(out, llm.UserText(c.Summary))
	for i := c.Through; i < len(msgs); i++ {
		out = append(out, c.sent(i, msgs[i], stub))
	}
	return out
}

// applies reports whether c shapes a conversation of n messages (a compaction made of a
// longer one does not).
func (c *Compaction) applies(n int) bool {
	return c != nil && c.Through <= n && c.Head <= c.Through
}

// sent is message i (at or after Through) as the view sends it: stubbed if it is a tool
// result before StubThrough.
func (c *Compaction) sent(i int, m llm.Message, stub func(llm.ToolResult) (llm.ToolResult, bool)) llm.Message {
	if i < c.StubThrough && stub != nil && m.Role == llm.RoleTool {
		return stubbed(m, stub)
	}
	return m
}

func stubbed(m llm.Message, stub func(llm.ToolResult) (llm.ToolResult, bool)) llm.Message {
	out := llm.Message{Role: m.Role, Parts: slices.Clone(m.Parts)}
	for i, p := range out.Parts {
		if p.Kind == llm.PartToolResult && p.ToolResult != nil && len(p.ToolResult.Text) > stubChars {
			if r, ok := stub(*p.ToolResult); ok {
				out.Parts[i] = llm.ToolResultPart(r)
			}
		}
	}
	return out
}

// stub replaces a large tool result by a line naming its step, if the owner keeps a step log.
func (a *Agent) stub(r llm.ToolResult) (llm.ToolResult, bool) {
	if a.Hooks.StepOf == nil {
		return r, false
	}
	step := a.Hooks.StepOf(r.CallID)
	if step <= 0 {
		return r, false
	}
	r.Text = fmt.Sprintf("[The output of step %d (%s, %d characters) was moved to the step log to keep the context small. Call read_step_output with {\"step\": %d} if you need it again.]",
		step, r.Name, len(r.Text), step)
	r.Images = nil
	return r, true
}

// Window tracks how the model counts tokens, what window it has, and the conversation as it
// was last sent and counted.
type Window struct {
	// ratio is the provider's count of the last request over our estimate of it (0: none yet).
	ratio float64
	// learned is a window learned from a "context length exceeded" answer (0: none).
	learned int
	// sent is the conversation as last sent, kept so the next turn's request and its estimate
	// cost only what was appended (view.go).
	sent view
}

// size is the model's usable context window: the configured one, else the known model's,
// and never more than what a refusal taught.
func (a *Agent) size() int {
	w := a.Model.Window
	if w <= 0 {
		w = llm.KnownWindow(a.Model.ModelID)
	}
	if l := a.window.learned; l > 0 && (w <= 0 || l < w) {
		w = l
	}
	return w
}

// estimate is a request's input tokens, our estimate scaled by how the provider counted.
func (a *Agent) estimate(req llm.Request) int {
	n := a.tokens(req)
	if a.window.ratio > 0 {
		n = int(float64(n) * a.window.ratio)
	}
	return n
}

// tokens is llm.EstimateRequest(req), its conversation counted once per message as it was
// first sent (see view) rather than anew each turn.
func (a *Agent) tokens(req llm.Request) int {
	return llm.EstimateRequest(llm.Request{System: req.System, Tools: req.Tools}) + a.window.sent.estimate(req.Messages)
}

func (a *Agent) observe(req llm.Request, u llm.Usage) {
	if est := a.tokens(req); est > 0 && u.InputTokens > 0 {
		a.window.ratio = min(4, max(0.5, float64(u.InputTokens)/float64(est)))
	}
}

// limit is the input budget of a request: the window less the reply's reserve (0: unknown).
func (a *Agent) limit(req llm.Request) int {
	w := a.size()
	if w <= 0 {
		return 0
	}
	return w - llm.ReserveFor(req, w)
}

// fit compacts the conversation when its request nears the window. It reports whether the
// view changed.
func (a *Agent) fit(ctx context.Context, t Turn) bool {
	if a.size() <= 0 {
		return false // no window known: nothing to fit, so no request to build for it
	}
	req := a.Request(t)
	limit := a.limit(req)
	if limit <= 0 {
		return false
	}
	size := a.estimate(req)
	if float64(size) <= compactAt*float64(limit) {
		return false
	}
	changed := a.compact(ctx, t, req, size, limit, false)
	if req := a.Request(t); a.estimate(req) > limit {
		// The newest turns alone overflow: fold all but the newest one.
		changed = a.compact(ctx, t, req, a.estimate(req), limit, true) || changed
	}
	return changed
}

// recover learns from a "context length exceeded" answer to req and compacts the
// conversation: the first time as usual, then down to its newest turn. It reports whether
// the view changed; if not, sending again would only be refused again.
func (a *Agent) recover(ctx context.Context, t Turn, req llm.Request, err error, attempt int) bool {
	size := a.estimate(req)
	learned := windowIn(err.Error())
	if learned <= 0 || learned >= size {
		// The refusal names no usable size: the request was too big, so the window is less.
		learned = size * 9 / 10
	}
	if a.window.learned == 0 || learned < a.window.learned {
		a.window.learned = learned
	}
	a.publish(Event{Kind: EventNotice, Text: fmt.Sprintf("the %s model refused a request of about %d tokens as too long for its context: compacting the conversation and sending the turn again", a.Model.Name, size)})
	changed := a.compact(ctx, t, req, size, a.limit(req), attempt > 0)
	if req := a.Request(t); !changed || a.estimate(req) > a.limit(req) {
		changed = a.compact(ctx, t, req, a.estimate(req), a.limit(req), true) || changed
	}
	return changed
}

// windowSizes find the window in the providers' refusals: OpenAI "maximum context length is
// 8192 tokens", Anthropic "prompt is too long: 210000 tokens > 200000 maximum", llama.cpp
// "exceeds the available context size (4096 tokens)", vLLM "maximum context length is …".
var windowSizes = []*regexp.Regexp{
	regexp.MustCompile(`maximum context length is (\d+)`),
	regexp.MustCompile(`> ?(\d+) maximum`),
	regexp.MustCompile(`context size \((\d+)`),
	regexp.MustCompile(`n_ctx[^0-9]{0,8}(\d+)`),
}

func windowIn(msg string) int {
	for _, re := range windowSizes {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// compact summarises the oldest span of the conversation into one message, keeping the head
// and the newest turns verbatim, and stubs large old outputs. It reports whether anything
// changed: when nothing can be compacted further, the caller stops retrying.
func (a *Agent) compact(ctx context.Context, t Turn, req llm.Request, size, limit int, minimal bool) bool {
	msgs := t.Messages
	c := Compaction{}
	if a.Compaction != nil {
		c = *a.Compaction
	} else {
		c.Head = 1 + slices.IndexFunc(msgs, func(m llm.Message) bool { return m.Role == llm.RoleUser })
		c.Through = c.Head
	}
	units := turnUnits(msgs, c.Through)
	if len(units) == 0 {
		return false
	}
	// Keep the newest turns up to keepTail of the window verbatim (always the last
	// keepUnits, unless even they overflow it: then all but the newest).
	costs := make([]int, len(msgs))
	scale := float64(size) / float64(max(1, a.tokens(req)))
	for i := c.Through; i < len(msgs); i++ {
		costs[i] = int(float64(llm.EstimateTokens(msgs[i])) * scale)
	}
	budget := int(keepTail * float64(limit))
	if minimal {
		budget = 0
	}
	through, tail := units[len(units)-1].start, 0
	for i := len(units) - 1; i >= 0; i-- {
		u := units[i]
		cost := 0
		for j := u.start; j < u.end; j++ {
			cost += costs[j]
		}
		kept := len(units) - 1 - i
		if kept >= 1 && tail+cost > budget && (minimal || kept >= keepUnits || tail+cost > limit/2) {
			break
		}
		tail += cost
		through = u.start
	}
	stubThrough := through
	if n, keep := len(units), keepUnits; n > 1 {
		if minimal {
			keep = 1
		}
		stubThrough = max(through, units[max(0, n-keep)].start)
	}
	if through <= c.Through && stubThrough <= c.StubThrough {
		return false // nothing left to fold away
	}
	if through > c.Through {
		// The summary takes at most an eighth of the window (in characters, ~4 a token).
		limitChars := min(maxSummaryChars, max(400, limit/2))
		summary, u, m := a.summarise(ctx, c.Summary, msgs[c.Through:through], limitChars)
		c.Summary = summaryMessage(summary, a.Hooks.StepOf != nil)
		if a.Hooks.Usage != nil && (u.InputTokens > 0 || u.OutputTokens > 0) {
			a.Hooks.Usage(m, u)
		}
	}
	c.Through, c.StubThrough = through, stubThrough
	c.Count++
	c.TokensBefore = size
	a.Compaction = &c
	c.TokensAfter = a.estimate(a.Request(t))
	if a.Hooks.Compacted != nil {
		a.Hooks.Compacted(c)
	}
	return true
}

// turnUnits groups msgs[from:] so that tool results stay with the call before them.
func turnUnits(msgs []llm.Message, from int) []unit {
	var units []unit
	for i := from; i < len(msgs); i++ {
		if msgs[i].Role == llm.RoleTool && len(units) > 0 {
			units[len(units)-1].end = i + 1
			continue
		}
		units = append(units, unit{start: i, end: i + 1})
	}
	return units
}

type unit struct{ start, end int }

const summarySystemPrompt = "You compact the history of an AI agent's working session so it can continue within its context window. Write a faithful, dense summary of the transcript you are given (and of the earlier summary, if any): what was done, what was found (paths, names, numbers, errors), what worked and what failed, decisions taken and open problems. Plain text, at most %d words. Do not invent anything and do not give advice."

// summaryMessage frames the summary as the conversation reads it.
func summaryMessage(summary string, steps bool) string {
	where := ""
	if steps {
		where = " Every step's full output is still in the step log: call read_step_output with its step number to read it."
	}
	return "[Earlier in this session (compacted to fit the model's context window; the task above still stands)." + where + "]\n" + summary
}

// summarise writes the summary of span after prev, with the summariser model (the critic's
// or a cheaper one) or the agent's own. If the model cannot be asked, a plain digest of the
// span stands in: compaction must never fail the work.
func (a *Agent) summarise(ctx context.Context, prev string, span []llm.Message, limitChars int) (string, llm.Usage, Model) {
	m := a.Model
	if a.Summarizer != nil && a.Summarizer.Provider != nil {
		m = *a.Summarizer
	}
	transcript := Transcript(span)
	var b strings.Builder
	if prev != "" {
		fmt.Fprintf(&b, "EARLIER SUMMARY:\n%s\n\n", prev)
	}
	fmt.Fprintf(&b, "TRANSCRIPT TO SUMMARISE:\n%s", transcript)
	req := llm.Request{System: fmt.Sprintf(summarySystemPrompt, max(50, limitChars/8)), Messages: []llm.Message{llm.UserText(b.String())}, MaxTokens: summaryMaxTokens}
	if a.ConversationID != "" {
		req.CacheKey = a.ConversationID + "/compact"
	}
	if m.Provider != nil {
		reply, err := m.Provider.Complete(ctx, req)
		if text := strings.TrimSpace(reply.Message.Text()); err == nil && text != "" {
			return clipHead(text, limitChars), reply.Usage, m
		} else if err != nil {
			a.publish(Event{Kind: EventNotice, Text: "the summary for compacting the conversation could not be written by the model (" + err.Error() + "); a plain digest stands in"})
		}
	}
	digest := transcript
	if prev != "" {
		digest = prev + "\n" + digest
	}
	return clipTail(digest, limitChars), llm.Usage{}, m
}

// Transcript writes messages out as plain text for a summariser, each clipped.
func Transcript(msgs []llm.Message) string {
	var lines []string
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			if t := strings.TrimSpace(m.Text()); t != "" {
				lines = append(lines, "USER: "+Truncate(oneLine(t), clipTextChars))
			}
		case llm.RoleAssistant:
			if t := strings.TrimSpace(m.Text()); t != "" {
				lines = append(lines, "ASSISTANT: "+Truncate(oneLine(t), clipTextChars))
			}
			for _, c := range m.ToolCalls() {
				args := string(c.Args)
				if c.RawArgs != "" {
					args = c.RawArgs
				}
				lines = append(lines, fmt.Sprintf("CALL %s(%s)", c.Name, Truncate(oneLine(args), 300)))
			}
		case llm.RoleTool:
			for _, r := range m.ToolResults() {
				outcome := "→"
				if r.IsError {
					outcome = "→ error:"
				}
				lines = append(lines, fmt.Sprintf("RESULT %s %s %s", r.Name, outcome, Truncate(oneLine(r.Text), clipToolChars)))
			}
		}
	}
	return clipMiddle(strings.Join(lines, "\n"), maxTranscriptChars)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clipHead keeps the first n bytes of s; clipTail the last; clipMiddle both ends.
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + " …"
}

func clipTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "… " + strings.ToValidUTF8(s[len(s)-n:], "")
}

func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := n / 3
	return strings.ToValidUTF8(s[:head], "") + "\n[…]\n" + strings.ToValidUTF8(s[len(s)-(n-head):], "")
}
