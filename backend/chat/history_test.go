package chat

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
)

func TestIsDone(t *testing.T) {
	t.Parallel()
	reasoned := func(reasoning, text string) llm.Message {
		return llm.AssistantMessage(llm.ReasoningPart(reasoning, "sig"), llm.Text(text))
	}
	cases := []struct {
		name string
		msg  llm.Message
		want bool
	}{
		{"exactly /done", llm.AssistantText("/done"), true},
		{"surrounding whitespace", llm.AssistantText("  /done\n"), true},
		{"reasoning then /done", reasoned("The haiku has 5-7-5 syllables and a title; nothing left to fix.", "/done"), true},
		{"/done split across parts", llm.AssistantMessage(llm.Text("/do"), llm.Text("ne")), true},
		{"/done. is feedback", llm.AssistantText("/done."), false},
		{"/done and more text is feedback", llm.AssistantText("/done Looks good, but add a title."), false},
		{"/done and a second line is feedback", llm.AssistantText("/done\nOne more thing: the title."), false},
		{"text before /done is feedback", llm.AssistantText("Great. /done"), false},
		{"another case is feedback", llm.AssistantText("/DONE"), false},
		{"/done only in reasoning is not done", reasoned("/done", "Add a title."), false},
		{"/done only in reasoning, no text", reasoned("/done", ""), false},
		{"empty", llm.AssistantText(""), false},
	}
	for _, c := range cases {
		if got := IsDone(c.msg); got != c.want {
			t.Errorf("%s: IsDone = %v, want %v", c.name, got, c.want)
		}
	}
}

// conversation builds stored messages; seq follows the order.
func conversation(msgs ...Message) []Message {
	for i := range msgs {
		msgs[i].Seq = int64(i + 1)
	}
	return msgs
}

func user(text string) Message { return Message{Source: SourceUser, Message: llm.UserText(text)} }
func actor(text string) Message {
	return Message{Source: SourceActor, Message: llm.AssistantMessage(llm.ReasoningPart("thinking about "+text, ""), llm.Text(text))}
}
func critic(text string) Message {
	return Message{Source: SourceCritic, Message: llm.AssistantText(text)}
}
func note(text string) Message  { return Message{Source: SourceNote, Message: llm.AssistantText(text)} }
func partial(m Message) Message { m.Partial = true; return m }

func actorCalls(text string, calls ...llm.ToolCall) Message {
	parts := []llm.Part{llm.Text(text)}
	for _, c := range calls {
		parts = append(parts, llm.ToolCallPart(c))
	}
	return Message{Source: SourceActor, Message: llm.AssistantMessage(parts...)}
}

func results(rs ...llm.ToolResult) Message {
	return Message{Source: SourceActor, Message: llm.ToolMessage(rs...)}
}

var readCall = llm.ToolCall{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path": "notes.txt"}`)}

// shape is a message reduced to what the tests compare: role and visible text.
type shape struct{ Role, Text string }

func shapes(msgs []llm.Message) []shape {
	var out []shape
	for _, m := range msgs {
		text := m.Text()
		for _, r := range m.ToolResults() {
			text += "<result " + r.Name + ": " + r.Text + ">"
		}
		for _, c := range m.ToolCalls() {
			text += "<call " + c.Name + ">"
		}
		out = append(out, shape{string(m.Role), text})
	}
	return out
}

func TestActorViewFiltersDoneAndPartialCriticMessages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   []Message
		want []shape
	}{
		{"critic feedback reaches the actor as a user message; /done never does",
			conversation(user("Write a haiku"), actor("Draft 1"), critic("Add a title."), actor("Draft 2"), critic("/done")),
			[]shape{{"user", "Write a haiku"}, {"assistant", "Draft 1"}, {"user", "Add a title."}, {"assistant", "Draft 2"}}},
		{"a /done with surrounding whitespace is still left out",
			conversation(user("Q"), actor("A"), critic(" /done\n"), user("Next")),
			[]shape{{"user", "Q"}, {"assistant", "A"}, {"user", "Next"}}},
		{"/done. is feedback and reaches the actor",
			conversation(user("Q"), actor("A"), critic("/done.")),
			[]shape{{"user", "Q"}, {"assistant", "A"}, {"user", "/done."}}},
		{"a partial critic message never reaches the actor",
			conversation(user("Q"), actor("A"), partial(critic("The answer lac")), critic("Cite a source.")),
			[]shape{{"user", "Q"}, {"assistant", "A"}, {"user", "Cite a source."}}},
		{"a partial actor message and notes are left out too",
			conversation(user("Q"), partial(actor("Half an ans")), note("Stopped."), user("Go on")),
			[]shape{{"user", "Q"}, {"user", "Go on"}}},
		{"an empty critic reply is left out",
			conversation(user("Q"), actor("A"), critic("  ")),
			[]shape{{"user", "Q"}, {"assistant", "A"}}},
		{"tool calls and results stay as they are",
			conversation(user("Read it"), actorCalls("Reading.", readCall), results(llm.ToolResult{CallID: "c1", Name: "read_file", Text: "hello"}), actor("It says hello.")),
			[]shape{{"user", "Read it"}, {"assistant", "Reading.<call read_file>"}, {"tool", "<result read_file: hello>"}, {"assistant", "It says hello."}}},
	}
	for _, c := range cases {
		if got := shapes(ActorView(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
	// The actor's own messages keep their reasoning (providers need it sent back).
	view := ActorView(conversation(user("Q"), actor("A")))
	if view[1].Reasoning() != "thinking about A" {
		t.Errorf("the actor's reasoning was lost: %+v", view[1])
	}
}

func TestCriticViewFlipsRoles(t *testing.T) {
	t.Parallel()
	withImage := Message{Source: SourceUser, Message: llm.UserText("What is on this screen?", llm.Image{MediaType: "image/png", Data: []byte{1}})}
	cases := []struct {
		name string
		in   []Message
		want []shape
	}{
		{"user → its own (assistant) context, actor → user, its own feedback stays assistant",
			conversation(user("Write a haiku"), actor("Draft 1"), critic("Add a title."), actor("Draft 2")),
			[]shape{{"assistant", "Write a haiku"}, {"user", "Draft 1"}, {"assistant", "Add a title."}, {"user", "Draft 2"}}},
		{"its earlier /done stays its own",
			conversation(user("Q"), actor("A"), critic("/done"), user("Shorter"), actor("A'")),
			[]shape{{"assistant", "Q"}, {"user", "A"}, {"assistant", "/done"}, {"assistant", "Shorter"}, {"user", "A'"}}},
		{"tool calls and results are flattened to text",
			conversation(user("Read it"), actorCalls("Reading.", readCall), results(llm.ToolResult{CallID: "c1", Name: "read_file", Text: "hello"}), actor("It says hello.")),
			[]shape{{"assistant", "Read it"}, {"user", "Reading.\n[tool call read_file {\"path\": \"notes.txt\"}]"},
				{"user", "[tool result read_file]\nhello"}, {"user", "It says hello."}}},
		{"a failed tool call is marked as an error",
			conversation(user("Read it"), actorCalls("", readCall), results(llm.ToolResult{CallID: "c1", Name: "read_file", Text: "no such file", IsError: true})),
			[]shape{{"assistant", "Read it"}, {"user", "[tool call read_file {\"path\": \"notes.txt\"}]"}, {"user", "[tool error read_file]\nno such file"}}},
		{"partial messages and notes are left out",
			conversation(user("Q"), actor("A"), partial(critic("Hmm, the")), note("Stopped.")),
			[]shape{{"assistant", "Q"}, {"user", "A"}}},
		{"pictures the user attached are named",
			conversation(withImage, actor("A terminal.")),
			[]shape{{"assistant", "What is on this screen?\n[1 image attached]"}, {"user", "A terminal."}}},
	}
	for _, c := range cases {
		got := CriticView(c.in)
		if s := shapes(got); !reflect.DeepEqual(s, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, s, c.want)
		}
		for _, m := range got {
			for _, p := range m.Parts {
				if p.Kind != llm.PartText {
					t.Errorf("%s: the critic would be sent a %s part: %+v", c.name, p.Kind, m)
				}
			}
			if strings.Contains(m.Text(), "thinking about") {
				t.Errorf("%s: the actor's reasoning reached the critic: %q", c.name, m.Text())
			}
		}
	}
}

func TestNextTurn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		in         []Message
		criticMode bool
		want       Source
	}{
		{"empty", nil, true, ""},
		{"a user message waits for the actor", conversation(user("Q")), false, SourceActor},
		{"an answer is finished", conversation(user("Q"), actor("A")), false, ""},
		{"in critic mode an answer is due for review", conversation(user("Q"), actor("A")), true, SourceCritic},
		{"feedback is due for revision", conversation(user("Q"), actor("A"), critic("Shorter.")), true, SourceActor},
		{"/done ends it", conversation(user("Q"), actor("A"), critic("/done")), true, ""},
		{"a partial critic message resumes as a critic turn", conversation(user("Q"), actor("A"), partial(critic("The ans"))), true, SourceCritic},
		{"even with critic mode off since", conversation(user("Q"), actor("A"), partial(critic("The ans"))), false, SourceCritic},
		{"a partial actor message resumes as an actor turn", conversation(user("Q"), partial(actor("Half"))), true, SourceActor},
		{"notes are skipped", conversation(user("Q"), partial(critic("The")), note("Stopped by the user")), true, SourceCritic},
		{"tool results wait for the actor", conversation(user("Q"), actorCalls("", readCall), results(llm.ToolResult{CallID: "c1", Name: "read_file"})), false, SourceActor},
		{"an empty review is asked again", conversation(user("Q"), actor("A"), critic("")), true, SourceCritic},
	}
	for _, c := range cases {
		if got := NextTurn(c.in, c.criticMode); got != c.want {
			t.Errorf("%s: NextTurn = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDanglingCalls(t *testing.T) {
	t.Parallel()
	if got := danglingCalls(conversation(user("Q"), actorCalls("", readCall), note("x"))); len(got) != 1 || got[0].ID != "c1" {
		t.Errorf("calls without results: got %+v", got)
	}
	if got := danglingCalls(conversation(user("Q"), actorCalls("", readCall), results(llm.ToolResult{CallID: "c1"}))); got != nil {
		t.Errorf("answered calls reported as dangling: %+v", got)
	}
}

func TestClipKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", 5000) + "END"
	got := clip(s, 1000)
	if !strings.HasSuffix(got, "END") || !strings.Contains(got, "characters cut") || len(got) > 1100 {
		t.Fatalf("clip: %d bytes, tail %q", len(got), got[len(got)-10:])
	}
	if !json.Valid([]byte(`"` + strings.ReplaceAll(got, "\n", `\n`) + `"`)) {
		t.Fatal("clip cut inside a UTF-8 character")
	}
	if clip("short", 1000) != "short" {
		t.Fatal("short text was changed")
	}
}
