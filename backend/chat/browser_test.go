package chat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// With the real browser tools on a real Chromium page: typing a password asks the person
// even though the workspace would let browser_type run unasked, an ordinary field does not,
// and an actor with vision sees a picture of the page after each browser action.
func TestChatBrowserSecretsAskAndScreenshotsReachAVisionModel(t *testing.T) {
	m, _ := browsertest.NewManager(t)
	site := browsertest.NewSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Open(ctx, "web-1", ws, site.Page("/login")); err != nil {
		t.Fatal(err)
	}
	typeInto := func(sel, text string) llmtest.Reply {
		return call("browser_type", map[string]string{"pane_id": "web-1", "selector": sel, "text": text})
	}
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
		typeInto("#user", "ada"),
		typeInto("#pw", "hunter2"),
		llmtest.Text("Filled in the user; you declined the password."),
	}}, func(r *rig) {
		r.reg = tools.NewRegistry()
		tools.RegisterBrowser(r.reg, m, nil)
		r.opts.Screenshot = m.Thumbnail
		vision := r.model("scripted")
		vision.Vision = true
		r.mods.set("", vision)
	})
	if _, err := r.svc.SetSettings(context.Background(), r.conv, chat.Settings{IterationCap: 10, AskAbove: tools.SpendsMoney}); err != nil {
		t.Fatal(err)
	}
	r.send("Log me in as ada")
	asked := r.answer(1, agent.ApprovalDeny)
	if asked.Tool != "browser_type" || !strings.Contains(asked.Reason, "password field") {
		t.Fatalf("the password question: %+v", asked)
	}
	if got := r.stopped(1); got != chat.ReasonDone {
		t.Fatalf("stopped: %s", got)
	}
	if n := len(r.events.matching(isType(chat.EventApprovalRequested))); n != 1 {
		t.Fatalf("%d questions: typing the user name must not ask", n)
	}
	user, err := m.Evaluate(ctx, "web-1", "document.getElementById('user').value + '|' + document.getElementById('pw').value")
	if err != nil || string(user) != `"ada|"` {
		t.Fatalf("fields after the chat: %s %v (the denied password must not be typed)", user, err)
	}
	reqs := r.srv.ChatRequests()
	images := func(i int) int { return strings.Count(string(reqs[i].Body), "data:image/jpeg;base64,") }
	if len(reqs) != 3 || images(0) != 0 || images(1) != 1 || images(2) != 1 {
		t.Fatalf("%d requests; pictures: the typed field's result carries one, the denied call none", len(reqs))
	}
	runs := finished(r)["browser_type"]
	if len(runs) != 2 || runs[0].Images != 1 || runs[1].Images != 0 || !runs[1].IsError {
		t.Fatalf("tool runs as shown: %+v", runs)
	}
}
