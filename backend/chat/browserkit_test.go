package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/secrets"
	"github.com/clusterspace/clusterspace/backend/tools"
)

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
	if n := len(r.events.matching(isType(chat.EventApprovalRequested))); n != 2 {
		t.Fatalf("%d questions, want 2 (the fill, the recipe's password step)", n)
	}
	got, err := loginFields(ctx, m)
	if err != nil || string(got) != `"grace|`+password+`"` {
		t.Fatalf("fields: %s %v (the user typed by the recipe, the saved password kept; the denied step typed nothing)", got, err)
	}
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
