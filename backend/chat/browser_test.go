package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// With the real browser tools on a real Chromium page: typing a password asks the person
// even though the workspace would let browser_type run unasked, an ordinary field does not,
// and an actor with vision sees a picture of the page after each browser action.
func TestChatBrowserSecretsAskAndScreenshotsReachAVisionModel(t *testing.T) {
	m, _, ctx := loginPane(t)
	typeInto := func(sel, text string) llmtest.Reply {
		return call("browser_type", map[string]string{"pane_id": "web-1", "selector": sel, "text": text})
	}
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
		typeInto("#user", "ada"),
		typeInto("#pw", "hunter2"),
		llmtest.Text("Filled in the user; you declined the password."),
	}}, func(r *rig) {
		r.reg = browserTools(m)
		r.opts.Screenshot = m.Thumbnail
		vision := r.model("scripted")
		vision.Vision = true
		r.mods.set("", vision)
	})
	r.setSettings(chat.Settings{IterationCap: 10, AskAbove: tools.SpendsMoney})
	r.send("Log me in as ada")
	asked := r.answer(1, agent.ApprovalDeny)
	if asked.Tool != "browser_type" || !strings.Contains(asked.Reason, "password field") {
		t.Fatalf("the password question: %+v", asked)
	}
	r.wantStop(1, chat.ReasonDone)
	if n := len(r.events.matching(isType(chat.EventApprovalRequested))); n != 1 {
		t.Fatalf("%d questions: typing the user name must not ask", n)
	}
	user, err := loginFields(ctx, m)
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

// loginPane is a real headless Chromium whose pane web-1 shows the test site's login form, and
// the context to drive it in.
func loginPane(t *testing.T) (*browser.Manager, *browsertest.Site, context.Context) {
	t.Helper()
	m, _ := browsertest.NewManager(t)
	site := browsertest.NewSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if _, err := m.Open(ctx, "web-1", ws, site.Page("/login")); err != nil {
		t.Fatal(err)
	}
	return m, site, ctx
}

// browserTools is a registry of the browser tools alone, on m's panes.
func browserTools(m *browser.Manager) *tools.Registry {
	reg := tools.NewRegistry()
	tools.RegisterBrowser(reg, m, nil)
	return reg
}

// loginFields answers what the login form's user and password fields hold, as a JSON string
// "user|password".
func loginFields(ctx context.Context, m *browser.Manager) (json.RawMessage, error) {
	return m.Evaluate(ctx, "web-1", "document.getElementById('user').value + '|' + document.getElementById('pw').value")
}
