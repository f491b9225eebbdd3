package chat_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func call(name string, args any) llmtest.Reply { return llmtest.Calls(llmtest.Call(name, args)) }

// answer waits for the n-th approval request and answers it.
func (r *rig) answer(n int, status agent.ApprovalStatus) agent.Approval {
	r.t.Helper()
	req := r.events.waitN(r.t, n, isType(chat.EventApprovalRequested)).Approval
	if st := r.state(); len(st.Approvals) != 1 || st.Approvals[0].ID != req.ID {
		r.t.Fatalf("pending approvals in state: %+v", st.Approvals)
	}
	if _, err := r.svc.AnswerApproval(context.Background(), req.ID, status, ""); err != nil {
		r.t.Fatal(err)
	}
	return *req
}

func finished(r *rig) map[string][]chat.ToolRun {
	out := map[string][]chat.ToolRun{}
	for _, e := range r.events.matching(isType(chat.EventToolFinished)) {
		out[e.Tool.Name] = append(out[e.Tool.Name], *e.Tool)
	}
	return out
}

// Tools above the conversation's ask-above level ask the user; calls a tool flags itself (a
// payment page) always ask; "allow_goal" covers the tool for the rest of the session.
func TestToolCallsGoThroughThePolicy(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("read_file", map[string]string{"path": "notes.txt"}),
		call("http_post", map[string]string{"url": "https://example.com/hook"}),
		call("page_click", map[string]string{"url": "https://shop.example/checkout"}),
		llmtest.Text("Read, posted, and left the checkout alone."),
	}})
	if err := os.WriteFile(filepath.Join(r.dir, "notes.txt"), []byte("hello from the notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.send("Read notes.txt, post it, then buy it")
	posted := r.answer(1, agent.ApprovalAllowScope)
	if posted.Tool != "http_post" || posted.Risk != "network_write" || !strings.Contains(posted.Reason, "above this conversation's ask-above level read_only") {
		t.Fatalf("approval for http_post: %+v", posted)
	}
	click := r.answer(2, agent.ApprovalDeny)
	if click.Tool != "page_click" || click.Risk != "spends_money" || !strings.Contains(click.Reason, "spends money") {
		t.Fatalf("approval for page_click: %+v", click)
	}
	r.wantStop(1, chat.ReasonDone)
	runs := finished(r)
	if rf := runs["read_file"]; len(rf) != 1 || rf[0].IsError || rf[0].Result != "hello from the notes" || string(rf[0].Args) != `{"path":"notes.txt"}` {
		t.Errorf("read_file: %+v", rf)
	}
	if hp := runs["http_post"]; len(hp) != 1 || hp[0].IsError || hp[0].Result != "posted to https://example.com/hook" {
		t.Errorf("http_post: %+v", hp)
	}
	if pc := runs["page_click"]; len(pc) != 1 || !pc[0].IsError || !strings.Contains(pc[0].Result, "denied") {
		t.Errorf("page_click: %+v", pc)
	}
	if n := len(r.events.matching(isType(chat.EventApprovalResolved))); n != 2 {
		t.Errorf("%d approvals resolved, want 2", n)
	}
	var toolMessages int
	for _, m := range r.history() {
		if m.Message.Role == llm.RoleTool {
			toolMessages++
		}
	}
	if toolMessages != 3 {
		t.Errorf("%d tool messages stored, want 3", toolMessages)
	}

	// Asking only above spends_money: the granted tool runs, the payment page still asks.
	st := r.state()
	st.Settings.AskAbove = tools.SpendsMoney
	r.setSettings(st.Settings)
	r.srv.Push(call("http_post", map[string]string{"url": "https://example.com/again"}),
		call("page_click", map[string]string{"url": "https://shop.example/checkout"}), llmtest.Text("Bought."))
	r.send("Post again and buy it")
	r.answer(3, agent.ApprovalAllowOnce)
	r.wantStop(2, chat.ReasonDone)
	if n := r.asked(); n != 3 {
		t.Errorf("%d approvals asked, want 3", n)
	}
	if pc := finished(r)["page_click"]; len(pc) != 2 || pc[1].IsError || pc[1].Result != "clicked" {
		t.Errorf("page_click after allow_once: %+v", pc)
	}
}

// Three failing tool batches in a row stop the loop, with a note.
func TestThreeFailingToolBatchesStop(t *testing.T) {
	t.Parallel()
	failing := call("run_check", map[string]any{})
	failing.Repeat = 3
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{failing}})
	r.send("Is the service healthy?")
	r.wantStop(1, chat.ReasonToolFailures)
	if n := len(r.srv.ChatRequests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	h := r.history()
	if last := h[len(h)-1]; last.Source != chat.SourceNote || !strings.Contains(last.Message.Text(), "3 tool batches in a row failed") {
		t.Fatalf("last message: %q", sources(h))
	}
}

// At most 20 automatic tool turns follow one message.
func TestToolTurnCap(t *testing.T) {
	t.Parallel()
	// Each turn reads another file: repeating one call would be the loop guard's business.
	replies := []llmtest.Reply{llmtest.Text("ok")}
	for i := range 21 {
		replies = append(replies, call("read_file", map[string]string{"path": fmt.Sprintf("file-%d.txt", i)}))
	}
	r := newRig(t, llmtest.Script{Replies: replies})
	for i := range 21 {
		os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("file-%d.txt", i)), []byte("x"), 0o644)
	}
	r.send("hi")
	r.stopped(1)
	r.send("Read the file over and over")
	r.wantStop(2, chat.ReasonTurnCap)
	if n := len(r.srv.ChatRequests()); n != 1+21 {
		t.Fatalf("%d requests, want 1 + 21 (the answer to the message and 20 automatic tool turns)", n)
	}
}

// Stop ends a stream and a running tool within a second; the partial answer is kept and the
// interrupted call is reported to the model when the chat resumes.
func TestStopEndsStreamAndToolsWithinASecond(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Stalled("Let me think about this carefully before", 3),
		call("sleep", map[string]int{"ms": 60_000}),
		llmtest.Text("The sleep was interrupted; I will not retry it."),
	}})
	r.send("Tell me a long story")
	r.events.waitN(t, 1, deltaFrom(chat.SourceActor))
	r.stopWithinASecond("stopping the stream")
	r.wantStop(1, chat.ReasonStopped)
	h := r.history()
	if last := h[len(h)-1]; last.Source != chat.SourceActor || !last.Partial || last.Message.Text() == "" {
		t.Fatalf("history after stop: %q", sources(h))
	}

	r.send("Sleep instead")
	r.events.waitN(t, 1, func(e chat.Event) bool { return e.Type == chat.EventToolStarted && e.Tool.Name == "sleep" })
	time.Sleep(50 * time.Millisecond) // the tool is running now
	r.stopWithinASecond("stopping the tool")
	r.stopped(2)
	if st := r.state(); st.Running || st.Next != chat.SourceActor {
		t.Fatalf("state after stop: %+v", st)
	}
	r.resume()
	r.wantStop(3, chat.ReasonDone)
	reqs := r.requests()
	last := reqs[len(reqs)-1].Msgs
	if got := last[len(last)-1]; got.Role != "tool" || !strings.Contains(got.Text, "interrupted: the chat was stopped") {
		t.Fatalf("the resumed request ends with %+v", got)
	}
	for _, m := range last {
		if strings.Contains(m.Text, "carefully before") {
			t.Errorf("the partial answer was sent to the model: %q", m.Text)
		}
	}
}

// History that outgrows the model's window is compacted, with a notice: the first message
// and the newest stay verbatim, the span between is one summary written by the model.
func TestHistoryCompactedToWindowWithNotice(t *testing.T) {
	t.Parallel()
	summary := llmtest.Role{Name: "summary", Match: llmtest.Match{System: "You compact the history"}, Reply: llmtest.Text("SUMMARY: the user sent SECOND, it was noted.")}
	r := newRig(t, llmtest.Script{Roles: []llmtest.Role{summary, actorRole(llmtest.Text("Noted."))}})
	small := r.model("small")
	small.Window, small.MaxTokens = 2000, 100
	r.mods.set("", small)
	long := func(tag string) string { return tag + " " + strings.Repeat("lorem ipsum ", 250) }
	for i, tag := range []string{"FIRST", "SECOND", "THIRD"} {
		r.send(long(tag))
		r.stopped(i + 1)
	}
	notice := r.events.waitN(t, 1, isType(chat.EventNotice))
	if !strings.Contains(notice.Text, "summarised") {
		t.Fatalf("notice: %q", notice.Text)
	}
	var last []string
	for _, q := range r.requests() {
		if strings.Contains(q.Msgs[len(q.Msgs)-1].Text, "THIRD") {
			last = nil
			for _, m := range q.Msgs {
				last = append(last, m.Text[:min(len(m.Text), 20)])
			}
		}
	}
	joined := strings.Join(last, "|")
	if !strings.Contains(joined, "FIRST") || strings.Contains(joined, "SECOND lorem") || !strings.Contains(joined, "THIRD") || !strings.Contains(joined, "[Earlier in this") {
		t.Fatalf("third request: %q", last)
	}
	if len(r.history()) != 6 {
		t.Fatal("trimming changed the stored history")
	}
}

// Pictures reach a vision model; without one, sending refuses and hands the text back.
func TestImagesNeedAVisionModel(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("A cat.")}})
	png := llm.Image{MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n fake")}
	err := r.svc.Send(context.Background(), r.conv, "What is this?", []llm.Image{png})
	var se *chat.StartError
	if !errors.As(err, &se) || se.Text != "What is this?" || !strings.Contains(err.Error(), "vision model") {
		t.Fatalf("send to a model without vision: %v", err)
	}
	seeing := r.model("scripted")
	seeing.Vision = true
	r.mods.set("", seeing)
	if err := r.svc.Send(context.Background(), r.conv, "What is this?", []llm.Image{png}); err != nil {
		t.Fatal(err)
	}
	r.stopped(1)
	h := r.history()
	if len(h) != 2 || len(h[0].Message.Parts) != 2 || h[0].Message.Parts[1].Image == nil {
		t.Fatalf("stored: %+v", h)
	}
	if body := string(r.srv.ChatRequests()[0].Body); !strings.Contains(body, "data:image/png;base64,") {
		t.Fatalf("the picture was not sent: %.300s", body)
	}
}

// Stop while a call waits for approval withdraws the request; the model hears the call did
// not run.
func TestStopWithdrawsApproval(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("http_post", map[string]string{"url": "https://example.com"}),
		llmtest.Text("Understood, nothing was posted."),
	}})
	r.send("Post it")
	req := r.events.waitN(t, 1, isType(chat.EventApprovalRequested)).Approval
	if _, err := r.svc.AnswerApproval(context.Background(), req.ID, "maybe", ""); err == nil {
		t.Fatal("an answer that is not allow_once, allow_goal or deny was taken")
	}
	if err := r.svc.Stop(context.Background(), r.conv); err != nil {
		t.Fatal(err)
	}
	resolved := r.events.waitN(t, 1, isType(chat.EventApprovalResolved)).Approval
	if resolved.ID != req.ID || resolved.Status != agent.ApprovalDeny || !strings.Contains(resolved.AnswerReason, "withdrawn") {
		t.Fatalf("resolved: %+v", resolved)
	}
	if _, err := r.svc.AnswerApproval(context.Background(), req.ID, agent.ApprovalAllowOnce, ""); !errors.Is(err, agent.ErrNotWaiting) {
		t.Fatalf("answering a withdrawn request: %v", err)
	}
	if st := r.state(); len(st.Approvals) != 0 || st.Next != chat.SourceActor {
		t.Fatalf("state after stop: %+v", st)
	}
	r.resume()
	r.stopped(2)
	reqs := r.requests()
	last := reqs[len(reqs)-1].Msgs
	if got := last[len(last)-1]; got.Role != "tool" || !strings.Contains(got.Text, "not run") {
		t.Fatalf("the model was told %+v", got)
	}
}

// A chat's approval is stored like a goal's while it waits, and closed in the store when the
// chat stops waiting.
func TestChatApprovalsAreStored(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{call("http_post", map[string]string{"url": "https://example.com/hook"})}})
	r.send("Post it")
	req := r.events.waitN(t, 1, isType(chat.EventApprovalRequested)).Approval
	ctx := context.Background()
	stored, err := r.st.Approvals(ctx, true)
	if err != nil || len(stored) != 1 || stored[0].ID != req.ID || stored[0].WorkspaceID != ws || stored[0].ConversationID != r.conv || stored[0].GoalID != "" {
		t.Fatalf("stored approvals %+v, %v", stored, err)
	}
	if err := r.svc.Stop(ctx, r.conv); err != nil {
		t.Fatal(err)
	}
	all, _ := r.st.Approvals(ctx, false)
	if len(all) != 1 || all[0].Status != agent.ApprovalDeny || !strings.Contains(all[0].AnswerReason, "withdrawn: the chat stopped waiting") {
		t.Fatalf("after Stop: %+v", all)
	}
}

// A chat approval that a crashed process left pending is withdrawn when the chat service
// starts again: nothing waits for it, so no window may offer it.
func TestStaleChatApprovalIsClosedAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRigWith(t, llmtest.Script{}, func(r *rig) {
		err := r.st.SaveApproval(ctx, agent.Approval{ID: "chat-appr-stale", WorkspaceID: ws, CallID: "c1", Tool: "http_post",
			Args: []byte(`{"url":"https://example.com"}`), Risk: "network_write", Reason: "above", Status: agent.ApprovalPending,
			CreatedAt: time.Now().UTC()})
		if err != nil {
			t.Fatal(err)
		}
	})
	all, _ := r.st.Approvals(ctx, false)
	if len(all) != 1 || all[0].Status != agent.ApprovalDeny || !strings.Contains(all[0].AnswerReason, "withdrawn") {
		t.Fatalf("the stale approval: %+v", all)
	}
	if st := r.state(); len(st.Approvals) != 0 {
		t.Fatalf("the chat offers a stale approval: %+v", st.Approvals)
	}
}

// A new conversation asks before its first write, as Claude Code and Codex ask before their
// first command: the write waits (nothing is written) until the person answers, and "allow for
// this conversation" lets the next write of that tool through without asking again. A
// conversation stored with an explicit level keeps it.
func TestNewConversationsAskBeforeTheFirstWrite(t *testing.T) {
	t.Parallel()
	if chat.DefaultSettings().AskAbove != tools.ReadOnly {
		t.Fatalf("a new conversation asks above %s; it should ask above read_only", chat.DefaultSettings().AskAbove)
	}
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("write_file", map[string]string{"path": "first.txt", "content": "one"}),
		call("write_file", map[string]string{"path": "second.txt", "content": "two"}),
		llmtest.Text("Wrote both."),
	}})
	if got := r.state().Settings.AskAbove; got != tools.ReadOnly {
		t.Fatalf("the workspace's first conversation asks above %s, want read_only", got)
	}
	r.send("Write two files")
	req := r.events.waitN(t, 1, isType(chat.EventApprovalRequested)).Approval
	if req.Tool != "write_file" || !strings.Contains(req.Reason, "read_only") {
		t.Fatalf("the first write asked: %+v", req)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "first.txt")); !os.IsNotExist(err) {
		t.Fatalf("the write ran before the person answered (stat: %v)", err)
	}
	r.answer(1, agent.ApprovalAllowScope) // "Allow for this chat"
	r.wantStop(1, chat.ReasonDone)
	for _, f := range []string{"first.txt", "second.txt"} {
		if _, err := os.Stat(filepath.Join(r.dir, f)); err != nil {
			t.Errorf("%s was not written: %v", f, err)
		}
	}
	if n := r.asked(); n != 1 {
		t.Errorf("%d approvals asked; after \"allow for this chat\" the second write should not ask", n)
	}

	// A conversation created (or stored) with write_local keeps it: its write runs at once.
	s := chat.DefaultSettings()
	s.AskAbove = tools.WriteLocal
	c, err := r.svc.Create(context.Background(), ws, chat.NewConversation{Title: "Trusted", Settings: &s})
	if err != nil {
		t.Fatal(err)
	}
	r.srv.Push(call("write_file", map[string]string{"path": "third.txt", "content": "three"}), llmtest.Text("Wrote it."))
	if err := r.svc.Send(context.Background(), c.ConversationID, "Write a third", nil); err != nil {
		t.Fatal(err)
	}
	r.wantStop(2, chat.ReasonDone)
	if _, err := os.Stat(filepath.Join(r.dir, "third.txt")); err != nil {
		t.Errorf("the write_local conversation's write did not run: %v", err)
	}
	if n := r.asked(); n != 1 {
		t.Errorf("the write_local conversation asked (%d approvals in all)", n)
	}
}

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
