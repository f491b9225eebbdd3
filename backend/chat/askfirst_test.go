package chat_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

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
	if n := len(r.events.matching(isType(chat.EventApprovalRequested))); n != 1 {
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
	if n := len(r.events.matching(isType(chat.EventApprovalRequested))); n != 1 {
		t.Errorf("the write_local conversation asked (%d approvals in all)", n)
	}
}
