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
	if n := len(r.events.matching(isType(chat.EventApprovalRequested))); n != 3 {
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
