package chat

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// DoneCommand is the critic's whole answer when the actor's work meets the criteria.
const DoneCommand = "/done"

// criticResultChars is how much of one tool result the critic reads: enough to judge what
// the actor saw, short enough that a long log does not drown the answer under review.
const criticResultChars = 2000

// IsDone reports whether a critic reply ends the loop: its visible text is exactly /done
// (surrounding whitespace aside). Reasoning is ignored; "/done." or "/done" with more text is
// feedback.
func IsDone(m llm.Message) bool { return strings.TrimSpace(m.Text()) == DoneCommand }

// ActorView is the history as the actor sees it: messages as stored, except that critic
// feedback arrives as a user message, and /done answers, empty critic replies, partial
// messages and notes are left out.
func ActorView(history []Message) []llm.Message {
	var out []llm.Message
	for _, m := range history {
		if m.Partial || m.Source == SourceNote {
			continue
		}
		if m.Source == SourceCritic {
			text := strings.TrimSpace(m.Message.Text())
			if text == "" || IsDone(m.Message) {
				continue
			}
			out = append(out, llm.UserText(text))
			continue
		}
		out = append(out, m.Message)
	}
	return out
}

// CriticView is the history flipped for the critic, who speaks for the user: the user's
// messages become its own (assistant) context, the actor's messages become the (user)
// messages it reviews, with tool calls and results written out as text, and its own earlier
// answers stay its own. Reasoning, partial messages and notes are left out; no message
// carries a tool call, so the critic can be asked with no tools at all.
func CriticView(history []Message) []llm.Message {
	var out []llm.Message
	for _, m := range history {
		if m.Partial || m.Source == SourceNote {
			continue
		}
		switch m.Source {
		case SourceUser:
			if text := userText(m.Message); text != "" {
				out = append(out, llm.AssistantText(text))
			}
		case SourceActor:
			if text := flatten(m.Message); text != "" {
				out = append(out, llm.UserText(text))
			}
		case SourceCritic:
			if text := strings.TrimSpace(m.Message.Text()); text != "" {
				out = append(out, llm.AssistantText(text))
			}
		}
	}
	return out
}

// userText is a user message as text; pictures are named, since an assistant turn cannot
// carry them.
func userText(m llm.Message) string {
	text := strings.TrimSpace(m.Text())
	if n := countImages(m); n > 0 {
		text = strings.TrimSpace(text + "\n[" + plural(n, "image") + " attached]")
	}
	return text
}

// flatten writes an actor message as text: its answer, then each tool call or result.
func flatten(m llm.Message) string {
	var lines []string
	if text := strings.TrimSpace(m.Text()); text != "" {
		lines = append(lines, text)
	}
	for _, c := range m.ToolCalls() {
		args := string(c.Args)
		if args == "" {
			args = c.RawArgs
		}
		lines = append(lines, fmt.Sprintf("[tool call %s %s]", c.Name, strings.Join(strings.Fields(args), " ")))
	}
	for _, r := range m.ToolResults() {
		kind := "tool result"
		if r.IsError {
			kind = "tool error"
		}
		line := fmt.Sprintf("[%s %s]\n%s", kind, r.Name, clip(r.Text, criticResultChars))
		if len(r.Images) > 0 {
			line += "\n[" + plural(len(r.Images), "image") + " returned]"
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func countImages(m llm.Message) int {
	n := 0
	for _, p := range m.Parts {
		if p.Kind == llm.PartImage {
			n++
		}
	}
	return n
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// NextTurn is what a resumed loop runs next: the actor, the critic, or "" when nothing is
// due. A partial message resumes as its own source's turn (a cut-off critic review continues
// as a critic turn, whatever the mode is now); a finished actor answer is due for review in
// critic mode; critic feedback is due for the actor's revision.
func NextTurn(history []Message, criticMode bool) Source {
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if m.Source == SourceNote {
			continue
		}
		if m.Partial && (m.Source == SourceActor || m.Source == SourceCritic) {
			return m.Source
		}
		switch m.Source {
		case SourceUser:
			return SourceActor
		case SourceActor:
			if m.Message.Role == llm.RoleTool || len(m.Message.ToolCalls()) > 0 {
				return SourceActor
			}
			if criticMode {
				return SourceCritic
			}
			return ""
		case SourceCritic:
			switch {
			case IsDone(m.Message):
				return ""
			case strings.TrimSpace(m.Message.Text()) == "":
				return SourceCritic // the review produced nothing usable: ask again
			}
			return SourceActor
		}
	}
	return ""
}

// danglingCalls returns the tool calls of the last actor message if no results follow it:
// the app stopped in the middle of the batch.
func danglingCalls(history []Message) []llm.ToolCall {
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if m.Source == SourceNote {
			continue
		}
		if m.Source != SourceActor || m.Partial || m.Message.Role != llm.RoleAssistant {
			return nil
		}
		return m.Message.ToolCalls()
	}
	return nil
}

// clip keeps the head and tail of a long text, saying how much was cut, on rune boundaries.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	h, t := limit*3/4, len(s)-limit/4
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return fmt.Sprintf("%s\n[… %d characters cut …]\n%s", s[:h], t-h, s[t:])
}
