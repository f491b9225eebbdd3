package chat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The chat's actor has the goals' loop guard: the fourth identical call with an unchanged
// result is blocked (the model is told why, the panel sees a guard event), and an actor
// that keeps repeating itself is halted with a note, not left to burn its turn cap.
func TestLoopGuardInChat(t *testing.T) {
	t.Parallel()
	// Each batch repeats one read and makes one new one, so no batch fails as a whole: the
	// guard, not the failing-batches rule, is what must stop it.
	var replies []llmtest.Reply
	for i := range 10 {
		replies = append(replies, llmtest.Calls(
			llmtest.Call("read_file", map[string]string{"path": "same.txt"}),
			llmtest.Call("read_file", map[string]string{"path": fmt.Sprintf("new-%d.txt", i)})))
	}
	r := newRig(t, llmtest.Script{Replies: replies})
	os.WriteFile(filepath.Join(r.dir, "same.txt"), []byte("unchanged"), 0o644)
	for i := range 10 {
		os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("new-%d.txt", i)), []byte(fmt.Sprintf("fresh %d", i)), 0o644)
	}
	r.send("Keep reading same.txt until it changes")
	r.wantStop(1, chat.ReasonGuard)

	guards := r.events.matching(isType(chat.EventGuard))
	var actions []string
	for _, g := range guards {
		actions = append(actions, string(g.Guard.Action))
	}
	// Calls 1–3 of same.txt run; 4–7 are blocked; the 8th block halts (five blocks in all).
	if got := strings.Join(actions, ","); got != "block,block,block,block,halt" {
		t.Fatalf("guard decisions %q, want four blocks then a halt", got)
	}
	if last := guards[len(guards)-1].Guard; last.Action != agent.GuardHalt || !strings.Contains(last.Message, "halted after 5 blocked calls") {
		t.Errorf("last guard event: %+v", last)
	}
	if g := guards[0].Guard; g.Rule != "repeat" || g.Tool != "read_file" || !strings.Contains(g.Message, "GUARD: blocked read_file") {
		t.Errorf("first guard event: %+v", g)
	}
	if n := len(r.srv.ChatRequests()); n != 8 {
		t.Errorf("%d model requests, want 8 (one per batch until the halt)", n)
	}
	// The model read the block as its tool result on the next turn.
	if reqs := r.requests(); !strings.Contains(fmt.Sprint(reqs[4].Msgs), "GUARD: blocked read_file") {
		t.Errorf("the fifth request does not carry the block: %v", reqs[4].Msgs)
	}
	h := r.history()
	if last := h[len(h)-1]; last.Source != chat.SourceNote || !strings.Contains(last.Message.Text(), "loop guard halted") {
		t.Fatalf("last message: %q", sources(h))
	}
	// The halted batch's second call did not run.
	runs := finished(r)["read_file"]
	if n := len(runs); n != 8*2-1 {
		t.Errorf("%d read_file items finished, want 15 (the halting batch's second call is not run)", n)
	}

	// A new message is news: the guard starts afresh and the same read runs again.
	r.srv.Push(call("read_file", map[string]string{"path": "same.txt"}), llmtest.Text("Still unchanged."))
	r.send("It may have changed now; read it once more")
	r.wantStop(2, chat.ReasonDone)
	if runs := finished(r)["read_file"]; runs[len(runs)-1].IsError {
		t.Errorf("the read after a new message was refused: %+v", runs[len(runs)-1])
	}
}

// The guard's nudges reach the chat too: four different reads with one answer are news to
// no one; the model reads the note with the fourth result and the panel shows it. Words that
// claim a run no tool made are shown to the person.
func TestGuardNudgesInChat(t *testing.T) {
	t.Parallel()
	var reads []llmtest.ToolCall
	for i := range 4 {
		reads = append(reads, llmtest.Call("read_file", map[string]string{"path": fmt.Sprintf("copy-%d.txt", i)}))
	}
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Calls(reads...),
		llmtest.Text("They are all the same."),
		llmtest.Text("I ran the tests and all tests pass."),
	}})
	for i := range 4 {
		os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("copy-%d.txt", i)), []byte("the same text"), 0o644)
	}
	r.send("Compare the copies")
	r.wantStop(1, chat.ReasonDone)
	r.send("Now run the tests")
	r.wantStop(2, chat.ReasonDone)
	var rules []string
	for _, g := range r.events.matching(isType(chat.EventGuard)) {
		rules = append(rules, string(g.Guard.Action)+"/"+g.Guard.Rule)
	}
	if got := strings.Join(rules, ","); got != "nudge/same_result,nudge/narrative" {
		t.Fatalf("guard events %q", got)
	}
	if reqs := r.requests(); !strings.Contains(fmt.Sprint(reqs[1].Msgs), "all returned the same result") {
		t.Errorf("the model did not read the same-result note: %v", reqs[1].Msgs)
	}
}
