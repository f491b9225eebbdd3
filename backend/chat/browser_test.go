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
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/secrets"
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
	if n := r.asked(); n != 1 {
		t.Fatalf("%d questions: typing the user name must not ask", n)
	}
	wantFields(t, ctx, m, "ada|", "the denied password must not be typed")
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

// wantFields fails the test unless the login form's user and password fields hold want,
// "user|password"; why says what the person expects of them.
func wantFields(t *testing.T, ctx context.Context, m *browser.Manager, want, why string) {
	t.Helper()
	got, err := m.Evaluate(ctx, "web-1", "document.getElementById('user').value + '|' + document.getElementById('pw').value")
	if w, _ := json.Marshal(want); err != nil || string(got) != string(w) {
		t.Fatalf("the login form's fields: %s %v, want %q (%s)", got, err, want, why)
	}
}

// In chat, whose ask-above level would let every browser tool run unasked: the saved-login
// fill still asks first, and a recipe's step that types into a password field asks too, as
// the same call made by the model itself would.
func TestChatFillLoginAndRecipeStepsAsk(t *testing.T) {
	m, site, ctx := loginPane(t)
	const password = "chat-Pw-unlikely-77"
	var saved *logins.Service
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
		call(logins.ToolFill, map[string]string{"pane_id": "web-1"}),
		call(recipes.ToolSave, map[string]any{"name": "pin", "steps": []map[string]any{
			{"tool": "browser_type", "args": map[string]any{"selector": "#user", "text": "{{who}}"}},
			{"tool": "browser_type", "args": map[string]any{"selector": "#pw", "text": "typed-by-recipe"}}}}),
		call(recipes.ToolRun, map[string]any{"name": "pin", "params": map[string]string{"who": "grace"}}),
		llmtest.Text("Done."),
	}}, func(r *rig) {
		vault, err := secrets.Open(context.Background(), r.dir, r.st, secrets.Options{NoKeyring: true})
		if err != nil {
			t.Fatal(err)
		}
		saved = logins.NewService(r.st, vault)
		r.reg = browserTools(m)
		r.reg.Register(recipes.Tools(recipes.NewService(r.st, r.reg, m))...)
		r.reg.Register(logins.Tool(saved, m))
	})
	pw := password
	if _, err := saved.Save(context.Background(), "", logins.Input{Origin: browser.Origin(site.URL), Username: "ada", Password: &pw}); err != nil {
		t.Fatal(err)
	}
	r.setSettings(chat.Settings{IterationCap: 10, AskAbove: tools.SpendsMoney})
	r.send("log me in, then run the pin recipe")
	fill := r.answer(1, agent.ApprovalAllowOnce)
	if fill.Tool != logins.ToolFill || !strings.Contains(fill.Reason, "filling your saved login for "+browser.Origin(site.URL)+" (user ada)") {
		t.Fatalf("the fill question: %+v", fill)
	}
	step := r.answer(2, agent.ApprovalDeny)
	if step.Tool != "browser_type" || !strings.Contains(step.Reason, "password field") || !strings.HasPrefix(step.CallID, "call_") || !strings.Contains(step.CallID, ".") {
		t.Fatalf("the recipe's password step must ask as its own call: %+v", step)
	}
	r.wantStop(1, chat.ReasonDone)
	if n := r.asked(); n != 2 {
		t.Fatalf("%d questions, want 2 (the fill, the recipe's password step)", n)
	}
	wantFields(t, ctx, m, "grace|"+password, "the user typed by the recipe, the saved password kept; the denied step typed nothing")
	runs := finished(r)
	if len(runs[logins.ToolFill]) != 1 || runs[logins.ToolFill][0].Result != "Filled the saved login for "+browser.Origin(site.URL)+" as ada (not submitted)." {
		t.Errorf("fill result: %+v", runs[logins.ToolFill])
	}
	if rr := runs[recipes.ToolRun]; len(rr) != 1 || !rr[0].IsError || !strings.Contains(rr[0].Result, "stopped at step 2 of 2") {
		t.Errorf("recipe run: %+v", rr)
	}
	for i, req := range r.srv.Requests() {
		if strings.Contains(string(req.Body), password) {
			t.Errorf("model request %d holds the password", i)
		}
	}
}
