package chat_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// Actor → critic feedback → actor → /done: the actor gets the feedback as a user message, the
// critic is asked with no tools and the role-flipped history, and /done (with reasoning) ends
// the loop without ever reaching the actor.
func TestActorCriticUntilDone(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Text("Steam curls from the cup"),
		llmtest.Text("Add a title and a second line."),
		llmtest.Text("Tea\nSteam curls from the cup\nwarming the winter morning"),
		{Reasoning: "It has a title and two lines now; nothing is missing.", Text: "/done"},
	}})
	r.send(chat.CriticCommand) // "/critic" toggles the mode
	if !r.state().CriticMode {
		t.Fatal("/critic did not turn critic mode on")
	}
	const prompt = "Write a two-line poem about tea, with a title."
	r.send(prompt)
	r.wantStop(1, chat.ReasonDone)

	want := []string{"user:" + prompt, "actor:Steam curls from the cup", "critic:Add a title and a second line.",
		"actor:Tea\nSteam curls from the cup\nwarming the winter morning", "critic:/done"}
	h := r.history()
	if got := sources(h); !reflect.DeepEqual(got, want) {
		t.Fatalf("history:\n got %q\nwant %q", got, want)
	}
	if h[4].Message.Reasoning() == "" {
		t.Error("the /done reply was scripted with reasoning, which was not kept")
	}
	reqs := r.requests()
	if len(reqs) != 4 || reqs[0].critic() || !reqs[1].critic() || reqs[2].critic() || !reqs[3].critic() {
		t.Fatalf("want actor, critic, actor, critic; got %d requests", len(reqs))
	}
	// The actor: tools offered (no goal tools); the feedback arrives as a user message.
	actor2 := reqs[2]
	if len(actor2.Tools) == 0 || slices.Contains(actor2.Tools, "claim_complete") || slices.Contains(actor2.Tools, "write_todos") {
		t.Errorf("actor tools: %v", actor2.Tools)
	}
	wantActor := []shape{{"user", prompt}, {"assistant", "Steam curls from the cup"}, {"user", "Add a title and a second line."}}
	if !reflect.DeepEqual(actor2.Msgs, wantActor) {
		t.Errorf("actor's second request:\n got %q\nwant %q", actor2.Msgs, wantActor)
	}
	// The critic: no tools; roles flipped; system = base prompt + actor's instructions + criteria.
	for _, c := range []sent{reqs[1], reqs[3]} {
		if len(c.Tools) != 0 {
			t.Errorf("the critic was offered tools: %v", c.Tools)
		}
		if !strings.Contains(c.System, actorMark) || !strings.HasSuffix(c.System, "THE USER'S CRITERIA:\n"+prompt) {
			t.Errorf("critic system prompt: %q", c.System)
		}
	}
	flipped := reqs[3].Msgs[1:] // after the opening line
	wantFlipped := []shape{{"assistant", prompt}, {"user", "Steam curls from the cup"}, {"assistant", "Add a title and a second line."},
		{"user", "Tea\nSteam curls from the cup\nwarming the winter morning"}}
	if reqs[3].Msgs[0].Role != "user" || !reflect.DeepEqual(flipped, wantFlipped) {
		t.Errorf("critic's second request:\n got %q\nwant opening + %q", reqs[3].Msgs, wantFlipped)
	}
	verdicts := r.events.matching(isType(chat.EventCriticVerdict))
	if len(verdicts) != 2 || verdicts[0].Verdict.Done || !verdicts[1].Verdict.Done || verdicts[1].Verdict.Iteration != 2 || verdicts[1].Verdict.Cap != chat.DefaultIterationCap {
		t.Errorf("verdicts: %+v", verdicts)
	}
	// The next message starts a new round; the actor never sees the /done.
	r.srv.Push(llmtest.Text("Shorter: Tea. Steam."), llmtest.Text("/done"))
	r.send("Make it shorter.")
	r.wantStop(2, chat.ReasonDone)
	for _, m := range r.requests()[4].Msgs {
		if strings.Contains(m.Text, "/done") {
			t.Errorf("the actor was sent the critic's /done: %q", r.requests()[4].Msgs)
		}
	}
}

// A user message sent while the actor streams wins over the automatic critic turn.
func TestQueuedUserMessageBeatsCriticTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		{Text: "A slow first draft of the answer", Chunks: 8, ChunkDelayMs: 60},
		llmtest.Text("Answer to the follow-up"),
		llmtest.Text("/done"),
	}})
	r.criticMode(true)
	r.send("First question")
	r.events.waitN(t, 1, deltaFrom(chat.SourceActor))
	r.send("Actually, answer this instead")
	if st := r.state(); !st.Running || st.Queued != 1 {
		t.Fatalf("state while streaming: %+v", st)
	}
	r.wantStop(1, chat.ReasonUserMessage)
	r.wantStop(2, chat.ReasonDone)
	reqs := r.requests()
	if len(reqs) != 3 || reqs[1].critic() || !reqs[2].critic() {
		t.Fatalf("want actor, actor, critic; got %d requests (second is critic: %v)", len(reqs), len(reqs) > 1 && reqs[1].critic())
	}
	if last := reqs[1].Msgs[len(reqs[1].Msgs)-1]; last != (shape{"user", "Actually, answer this instead"}) {
		t.Errorf("the actor's second request ends with %q", last)
	}
	if !strings.HasSuffix(reqs[2].System, "Actually, answer this instead") {
		t.Errorf("the critic's criteria are not the latest message: %q", reqs[2].System)
	}
	want := []string{"user:First question", "actor:A slow first draft of the answer", "user:Actually, answer this instead",
		"actor:Answer to the follow-up", "critic:/done"}
	if got := sources(r.history()); !reflect.DeepEqual(got, want) {
		t.Fatalf("history:\n got %q\nwant %q", got, want)
	}
}

// Stop during a critic turn keeps the partial review; Resume continues as a critic turn whose
// request holds no partial text.
func TestStopDuringCriticThenResumeContinuesAsCritic(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Text("The capital of Australia is Sydney."),
		llmtest.Stalled("Wrong: the capital is Canberra, not Sydney.", 3),
		llmtest.Text("Wrong: the capital is Canberra."),
		llmtest.Text("The capital of Australia is Canberra."),
		llmtest.Text("/done"),
	}})
	r.criticMode(true)
	r.send("What is the capital of Australia?")
	r.events.waitN(t, 1, deltaFrom(chat.SourceCritic))
	r.stopWithinASecond("stop")
	r.wantStop(1, chat.ReasonStopped)
	h := r.history()
	last := h[len(h)-1]
	if last.Source != chat.SourceCritic || !last.Partial || !strings.HasPrefix("Wrong: the capital is Canberra, not Sydney.", last.Message.Text()) || last.Message.Text() == "" {
		t.Fatalf("last stored message: %+v", last)
	}
	if st := r.state(); st.Running || st.Next != chat.SourceCritic {
		t.Fatalf("state after stop: %+v", st)
	}
	// The stop event says the same, so a UI need not read the conversation again.
	if st := r.events.waitN(t, 1, isType(chat.EventLoopStopped)).State; st == nil || st.Running || st.Next != chat.SourceCritic {
		t.Fatalf("state on the stop event: %+v", st)
	}
	r.resume()
	r.wantStop(2, chat.ReasonDone)
	reqs := r.requests()
	if len(reqs) != 5 || !reqs[2].critic() || reqs[3].critic() || !reqs[4].critic() {
		t.Fatalf("want actor, critic (stopped), critic (resumed), actor, critic; got %d", len(reqs))
	}
	for _, m := range append(reqs[2].Msgs, reqs[3].Msgs...) {
		if strings.Contains(m.Text, "not Sydney") {
			t.Errorf("the partial critic message was sent: %q", m.Text)
		}
	}
	if got := reqs[3].Msgs[len(reqs[3].Msgs)-1]; got != (shape{"user", "Wrong: the capital is Canberra."}) {
		t.Errorf("the actor's revision request ends with %q", got)
	}
}

// The critic never says /done: the loop stops at the iteration cap with a visible note.
func TestIterationCapStopsWithNote(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Roles: []llmtest.Role{
		criticRole("Needs more detail."),
		actorRole(llmtest.Text("Here is more detail.")),
	}})
	r.mods.set("reviewer", r.model("reviewer-model"))
	st := r.state()
	st.Settings.IterationCap = 2
	st.Settings.CriticProvider = "reviewer"
	r.setSettings(st.Settings)
	r.criticMode(true)
	r.send("Explain TCP slow start.")
	r.wantStop(1, chat.ReasonIterationCap)
	want := []string{"user:Explain TCP slow start.", "actor:Here is more detail.", "critic:Needs more detail.",
		"actor:Here is more detail.", "critic:Needs more detail."}
	h := r.history()
	got := sources(h)
	if len(got) != 6 || !reflect.DeepEqual(got[:5], want) || h[5].Source != chat.SourceNote || !strings.Contains(h[5].Message.Text(), "iteration cap") {
		t.Fatalf("history: %q", got)
	}
	var modelsAsked []string
	for _, req := range r.srv.ChatRequests() {
		modelsAsked = append(modelsAsked, req.Model)
	}
	if want := []string{"scripted", "reviewer-model", "scripted", "reviewer-model"}; !reflect.DeepEqual(modelsAsked, want) {
		t.Fatalf("models asked %q, want %q (the critic's own provider)", modelsAsked, want)
	}
	stop := r.events.matching(isType(chat.EventLoopStopped))[0]
	if !strings.Contains(stop.Text, "reviewed 2 times") {
		t.Errorf("stop text: %q", stop.Text)
	}
}

// An edit pending stops the loop before the automatic critic turn.
func TestPendingEditStopsAutomaticTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{{Text: "Some answer being written", Chunks: 6, ChunkDelayMs: 40}}})
	r.criticMode(true)
	r.send("Question")
	r.events.waitN(t, 1, deltaFrom(chat.SourceActor))
	r.svc.SetEditing(context.Background(), r.conv, true)
	r.wantStop(1, chat.ReasonEditing)
	if n := len(r.srv.ChatRequests()); n != 1 {
		t.Fatalf("%d requests: the critic ran during an edit", n)
	}
	if st := r.state(); !st.Editing || st.Next != chat.SourceCritic {
		t.Fatalf("state: %+v", st)
	}
}

// A restart (a new service on the same store) keeps history and mode; a critic turn cut off
// by the shutdown resumes as a critic turn.
func TestRestartKeepsHistoryAndMode(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Text("Draft"),
		llmtest.Stalled("Almost there, but the draft", 3),
		llmtest.Text("/done"),
	}})
	r.criticMode(true)
	st := r.state()
	st.Settings.IterationCap = 4
	r.setSettings(st.Settings)
	r.send("Write a draft")
	r.events.waitN(t, 1, deltaFrom(chat.SourceCritic))
	before := r.history()
	r.svc.Shutdown()
	r.stopped(1)
	r.start()
	after := r.history()
	if len(after) != 3 || after[2].Source != chat.SourceCritic || !after[2].Partial {
		t.Fatalf("history after restart: %q", sources(after))
	}
	if !reflect.DeepEqual(sources(before), sources(after[:len(before)])) {
		t.Fatalf("history changed: %q → %q", sources(before), sources(after))
	}
	st = r.state()
	if !st.CriticMode || st.CriticPrompt != "Write a draft" || st.Settings.IterationCap != 4 || st.Next != chat.SourceCritic || st.Running {
		t.Fatalf("state after restart: %+v", st)
	}
	r.resume()
	r.wantStop(2, chat.ReasonDone)
	if reqs := r.requests(); len(reqs) != 3 || !reqs[2].critic() {
		t.Fatalf("the resumed turn was not the critic's")
	}
	if err := r.svc.Resume(context.Background(), r.conv); !errors.Is(err, chat.ErrNothingToResume) {
		t.Fatalf("resume after /done: %v", err)
	}
}

// With an empty history the critic prompt becomes the user message and the actor goes
// first; if starting fails the error carries the user's text.
func TestEmptyHistoryStartsFromCriticPrompt(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Text("Answer one"), llmtest.Text("/done"),
		llmtest.Text("Answer two"), llmtest.Text("/done"),
	}})
	r.criticMode(true)
	r.send("List three prime numbers.")
	r.stopped(1)
	if err := r.svc.Clear(context.Background(), r.conv); err != nil {
		t.Fatal(err)
	}
	if h := r.history(); len(h) != 0 {
		t.Fatalf("history after clear: %q", sources(h))
	}
	if st := r.state(); st.Next != chat.SourceActor || st.CriticPrompt != "List three prime numbers." {
		t.Fatalf("state after clear: %+v", st)
	}
	r.resume()
	r.stopped(2)
	want := []string{"user:List three prime numbers.", "actor:Answer two", "critic:/done"}
	if got := sources(r.history()); !reflect.DeepEqual(got, want) {
		t.Fatalf("history: %q", got)
	}
	if reqs := r.requests(); reqs[2].critic() || reqs[2].Msgs[0] != (shape{"user", "List three prime numbers."}) {
		t.Fatalf("the actor did not go first with the critic prompt: %+v", reqs[2])
	}

	r.mods.mu.Lock()
	r.mods.broken = true
	r.mods.mu.Unlock()
	err := r.svc.Send(context.Background(), r.conv, "Now five primes", nil)
	var se *chat.StartError
	if !errors.As(err, &se) || se.Text != "Now five primes" || !strings.Contains(err.Error(), "Settings → Providers") {
		t.Fatalf("send with no model: %v", err)
	}
	if len(r.history()) != 3 {
		t.Fatal("a message that could not start was stored")
	}
}

// The same round over the Anthropic protocol, where the flipped history must open with a
// user turn and consecutive user turns are merged.
func TestActorCriticOverAnthropic(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("read_file", map[string]string{"path": "nope.txt"}),
		llmtest.Text("The file does not exist."),
		llmtest.Text("Say which path you tried."),
		llmtest.Text("nope.txt does not exist."),
		{Reasoning: "fine now", Text: "/done"},
	}})
	r.mods.set("", r.modelOf(llm.KindAnthropic, "claude"))
	r.criticMode(true)
	r.send("Read nope.txt")
	r.wantStop(1, chat.ReasonDone)
	want := []string{"user:Read nope.txt", "actor:", "actor:tool", "actor:The file does not exist.", "critic:Say which path you tried.",
		"actor:nope.txt does not exist.", "critic:/done"}
	if got := sources(r.history()); !reflect.DeepEqual(got, want) {
		t.Fatalf("history:\n got %q\nwant %q", got, want)
	}
	for i, req := range r.srv.ChatRequests() {
		if req.Protocol != "anthropic" {
			t.Fatalf("request %d went over %s", i, req.Protocol)
		}
		if strings.Contains(req.System, criticMark) && strings.Contains(string(req.Body), `"tools"`) {
			t.Errorf("critic request %d offered tools", i)
		}
	}
}
